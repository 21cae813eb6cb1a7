"""Diagnostics and errors: every problem in user input is a Diagnostic with a position.

A Diagnostic prints as ``path:line:col: error[CODE]: message``; line and column are
1-based, as editors and compilers print them. Every code is registered once in
:mod:`generator.codes`; recording an unregistered one is a bug and raises at once.

No diagnostic holds a secret (issue 22 item 11), structurally: a :class:`Diagnostic` passes
its message and fix through :func:`generator.secrecy.scrub` when it is made (a URL's
password, a token of a published format, ``--api-key=VALUE``, ``HF_TOKEN=VALUE``), and a
:class:`Diagnostics` collector also replaces the secret values the stage that read them
told it about (:meth:`Diagnostics.hide`: the value after ``--api-key``, an ``HF_TOKEN``'s
value), in every finding recorded before or after. Every format (text, JSON, SARIF) and
the render cache print these fields only.

Every error class gen raises on purpose derives from :class:`GenError`, carries its own
user message (copier's style) and its exit code, and also inherits the built-in it
resembles (pyinfra's style), so library callers can catch either.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Iterable

from generator import codes, secrecy
from generator.codes import Severity

__all__ = [
    "CatalogMissingError", "Diagnostic", "Diagnostics", "ExitCode", "GenError", "InputError",
    "Position", "Severity", "TemplateError", "printable", "printable_lines", "quoted",
]

# Escapes of the characters people know by name; any other one is \xNN, \uNNNN or \UNNNNNNNN.
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` as one line that is safe to print anywhere: terminal, CI log, JSON, SARIF.

    Every character Python does not call printable is written as an escape (``\\n``,
    ``\\x1b``, ``\\u202e``): line breaks (a newline in a key path started a fake CI
    ``::error`` line), ESC and the C1 controls (terminal colors, OSC 8 links, cursor moves),
    bidi overrides and zero-width characters (text that reads differently than it is), lone
    surrogates (a file name that is not UTF-8, which would crash the print). Printable
    Unicode (``é``, ``→``) and the space stay. Escaping is idempotent: an escape is printable.
    """
    if text.isprintable():  # nearly every message: one C-level scan
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


# A diagnostic quotes what it is about: a value of up to 64 KiB, a catalog's help text. One
# "word" (a run without blanks) longer than WORD_MOST is cut to its start and its length, so a
# message stays a line a reviewer reads and a CI log keeps (a 5,000-digit CPU list was one
# 5,000-character line); a message is at most MESSAGE_MOST characters in all.
WORD_MOST = 512
MESSAGE_MOST = 8192
_LONG_WORD = re.compile(r"\S{%d,}" % (WORD_MOST + 1))


def bounded(text: str) -> str:
    """``text`` with each run of more than WORD_MOST non-blank characters cut, and at most MESSAGE_MOST long."""
    if len(text) <= WORD_MOST:
        return text
    text = _LONG_WORD.sub(lambda m: f"{m[0][:120]}...({len(m[0])} characters)", text)
    return text if len(text) <= MESSAGE_MOST else f"{text[:MESSAGE_MOST]}...({len(text)} characters)"


# What starts each line of text gen quotes from outside (a journal, a probe's stderr, a
# check's evidence, the rest of a multi-line error): not blank, so no line of it can begin
# a CI log command (GitHub's runner trims leading blanks, then reads "::error::..."; Azure
# reads "##vso[...]").
GUTTER = "  | "


def quoted(text: str, gutter: str = GUTTER) -> str:
    """Each line of ``text`` (from outside gen) :func:`printable`, behind ``gutter``."""
    return "\n".join(gutter + printable(line) for line in text.split("\n"))


def printable_lines(text: str) -> str:
    """``text`` with its line breaks (``\\n``) and tabs kept, every other unprintable character
    escaped as :func:`printable` does. For text that has lines of its own (a diff, a manifest,
    a multi-line error); a value that may hold a newline is made :func:`printable` before it
    is put into such text. A line a CI runner would read as a command (``::error``,
    ``##vso[``, after blanks) has its first character escaped."""
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() or ch in "\n\t" else _escape(ch) for ch in text)
    # A line of it that a CI runner reads as a command (it trims leading blanks first) gets its
    # first character escaped: a value's own line break (a catalog's help text, a note) must
    # not start a fake ::error or ##vso line, whoever forgot to make the value printable.
    if ":" in text or "#" in text:
        text = _CI_COMMAND.sub(lambda m: m.group(1) + f"\\x{ord(m.group(2)):02x}", text)
    return text


# GitHub Actions' workflow commands (::error ..., ::add-mask::, ::stop-commands::) and its
# ##[group] lines, Azure Pipelines' ##vso[...] and ##[section]: at a line's start, after blanks.
_CI_COMMAND = re.compile(r"^([ \t]*)([:#])(?=:|#\[|#vso\[)", re.M)


class ExitCode(enum.IntEnum):
    """Process exit codes of ``gen``; documented in ``--help`` and the README."""

    OK = 0
    FINDINGS = 1  # invalid input, or differences for diff/check, or failed live checks
    USAGE = 2  # bad command line (click's own usage errors exit 2 as well)
    ENVIRONMENT = 3  # a file cannot be written, a template is broken, a host is unreachable
    INTERNAL = 4  # a bug in gen: any exception that is not a GenError


@dataclass(frozen=True, order=True)
class Position:
    """A place in a source file; line and col are 1-based, 0 means unknown."""

    path: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.col or 1}"
        return self.path


@dataclass(frozen=True)
class Diagnostic:
    """One finding about user input, printable as ``path:line:col: error[CODE]: message``.

    Its text fields (file name, message, fix) are :func:`printable` from the start: every
    way of showing a diagnostic (the terminal, ``--format json``, SARIF, the render cache)
    gets one line of text with no control character, whatever a file or value held, and no
    word of it longer than WORD_MOST characters (:func:`bounded`).
    """

    pos: Position
    code: str
    message: str
    severity: Severity = Severity.ERROR
    hint: str | None = None  # e.g. "did you mean '--speculative-num-draft-tokens'?"

    def __post_init__(self) -> None:
        # Every way of making a diagnostic passes here, so an unregistered or mistyped code
        # (or one recorded with the wrong severity) fails where it is written.
        codes.check(self.code, self.severity)
        # No message or fix keeps a credential's shape (generator/secrecy.py), and every way
        # of showing one gets its text escaped: a key path, a value, a file name or a
        # catalog's help text quoted in a message cannot start a line or a sequence.
        # Scrubbed first, then cut: a bound must not split a secret the scrubber would know.
        message = bounded(printable(secrecy.scrub(self.message)))
        if message != self.message:
            object.__setattr__(self, "message", message)
        if self.hint is not None:
            hint = bounded(printable(secrecy.scrub(self.hint)))
            if hint != self.hint:
                object.__setattr__(self, "hint", hint)
        if not self.pos.path.isprintable():
            object.__setattr__(self, "pos", Position(printable(self.pos.path), self.pos.line, self.pos.col))

    def sort_key(self) -> tuple:
        """Order by file, then line and column, then code (stable, position first)."""
        return (self.pos.path, self.pos.line, self.pos.col, self.code, self.message)

    def __str__(self) -> str:
        text = f"{self.pos}: {self.severity.value}[{self.code}]: {self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text

    @property
    def is_error(self) -> bool:
        """True when this diagnostic stops rendering."""
        return self.severity is Severity.ERROR


class GenError(Exception):
    """Base of every error gen raises on purpose; ``str()`` is the user message.

    ``exit_code`` follows the built-in a subclass inherits, unless the class sets its own:
    a lookup by name (KeyError: unknown host, service) is a usage error, an OSError (a
    file, a connection) an environment failure, anything else a finding.
    """

    exit_code: ExitCode = ExitCode.FINDINGS

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Give a subclass the exit code of the built-in it inherits (see above)."""
        super().__init_subclass__(**kwargs)
        if "exit_code" in cls.__dict__:
            return
        if issubclass(cls, KeyError):
            cls.exit_code = ExitCode.USAGE
        elif issubclass(cls, OSError):
            cls.exit_code = ExitCode.ENVIRONMENT


class InputError(GenError, ValueError):
    """User input is invalid; carries every diagnostic found, sorted by position."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: list[Diagnostic] = sorted(diagnostics, key=Diagnostic.sort_key)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class CatalogMissingError(GenError, LookupError):
    """The host's SGLang pin has no committed catalog."""


class TemplateError(GenError, RuntimeError):
    """A template failed to render; the message names the template file and line."""

    exit_code = ExitCode.ENVIRONMENT


@dataclass
class Diagnostics:
    """A collector: passes append findings, the pipeline raises once at the end."""

    items: list[Diagnostic] = field(default_factory=list)
    # Values that are secrets (what a secret flag or variable was given): never in a finding.
    secrets: set[str] = field(default_factory=set)

    def add(self, diagnostic: Diagnostic) -> None:
        """Record one finding, with every secret value this collector knows replaced."""
        self.items.append(self._hidden(diagnostic))

    def hide(self, values: Iterable[str]) -> None:
        """Never show ``values`` (secrets a stage read) in a finding, recorded so far or later."""
        given = {str(v) for v in values if str(v)}
        new = (given | {printable(v) for v in given}) - self.secrets  # as a message shows it, escaped
        if new:
            self.secrets |= new
            self.items[:] = [self._hidden(d) for d in self.items]

    def _hidden(self, d: Diagnostic) -> Diagnostic:
        if not self.secrets:
            return d
        message = secrecy.hide(d.message, self.secrets)
        hint = secrecy.hide(d.hint, self.secrets) if d.hint is not None else None
        if (message, hint) == (d.message, d.hint):
            return d
        return Diagnostic(d.pos, d.code, message, d.severity, hint)

    def error(self, pos: Position, code: str, message: str, hint: str | None = None) -> None:
        """Record an error; ``code`` must be registered as an error in generator/codes.py."""
        self.add(Diagnostic(pos, code, message, Severity.ERROR, hint))

    def warning(self, pos: Position, code: str, message: str, hint: str | None = None) -> None:
        """Record a warning; ``code`` must be registered as a warning in generator/codes.py."""
        self.add(Diagnostic(pos, code, message, Severity.WARNING, hint))

    @property
    def error_count(self) -> int:
        """How many recorded findings are errors."""
        return sum(d.is_error for d in self.items)

    @property
    def has_errors(self) -> bool:
        """True when any recorded finding is an error."""
        return any(d.is_error for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        """All findings, ordered by position."""
        return sorted(self.items, key=Diagnostic.sort_key)
