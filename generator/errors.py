"""Diagnostics and errors: every problem in user input is a Diagnostic with a position.

A Diagnostic prints as ``path:line:col: error[CODE]: message``; line and column are
1-based, as editors and compilers print them. Every code is registered once in
:mod:`generator.codes`; recording an unregistered one is a bug and raises at once.

Every error class gen raises on purpose derives from :class:`GenError`, carries its own
user message (copier's style) and its exit code, and also inherits the built-in it
resembles (pyinfra's style), so library callers can catch either.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable

from generator import codes
from generator.codes import Severity

__all__ = [
    "CatalogMissingError", "Diagnostic", "Diagnostics", "ExitCode", "GenError", "InputError",
    "Position", "Severity", "TemplateError",
]


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
    """One finding about user input, printable as ``path:line:col: error[CODE]: message``."""

    pos: Position
    code: str
    message: str
    severity: Severity = Severity.ERROR
    hint: str | None = None  # e.g. "did you mean '--speculative-num-draft-tokens'?"

    def __post_init__(self) -> None:
        # Every way of making a diagnostic passes here, so an unregistered or mistyped code
        # (or one recorded with the wrong severity) fails where it is written.
        codes.check(self.code, self.severity)

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

    def add(self, diagnostic: Diagnostic) -> None:
        """Record one finding."""
        self.items.append(diagnostic)

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
