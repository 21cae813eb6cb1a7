"""Split a pasted SGLang command line into words, remembering where each word was written.

Reads what operators paste into ``gen import``: a model-card shell command (backslash
continuations, quotes, ``# comments``, ``VAR=value`` prefixes, ``| tee log``), or a
systemd unit whose ``ExecStart=`` line is taken (with its continuations, ``-@:+!``
prefixes, ``$$`` and ``%%``). Quoting follows POSIX sh for shell text and the same
rules (which systemd's ExecStart= shares for quotes and backslashes) for a unit.
Nothing is expanded: a ``$VAR`` or a ``%`` specifier is a finding, since gen cannot
know its value.

Codes (family I, shared with the importer): I001 unterminated quote, I002 shell variable
or systemd specifier, I003 line not continued with a backslash, I004 shell operator or
redirection (the rest of the line is ignored).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from generator.errors import Diagnostics, Position

_OPERATOR_CHARS = "|&;<>"
_EXEC_START = re.compile(r"^[ \t]*ExecStart[ \t]*=[ \t]*", re.MULTILINE)
_ENVIRONMENT = re.compile(r"^[ \t]*Environment[ \t]*=[ \t]*", re.MULTILINE)


@dataclass(frozen=True)
class Word:
    """One word of the command after quote removal, and where it began."""

    text: str
    pos: Position


@dataclass(frozen=True)
class Command:
    """A split command: its words, and the environment a unit file gave it."""

    words: tuple[Word, ...]
    unit_env: tuple[Word, ...] = ()  # ``Environment=`` assignments of a unit file


class _Text:
    """Source text with offset -> (line, col) positions for one displayed path."""

    def __init__(self, text: str, path: str):
        self.text = text
        self.path = path
        self._starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def pos(self, offset: int) -> Position:
        line = bisect.bisect_right(self._starts, offset)
        return Position(self.path, line, offset - self._starts[line - 1] + 1)


def _logical_end(text: str, start: int) -> int:
    """End offset of the line at ``start`` together with its backslash continuations."""
    i = start
    while True:
        nl = text.find("\n", i)
        if nl < 0:
            return len(text)
        if text[i:nl].rstrip("\r").endswith("\\"):
            i = nl + 1
            continue
        return nl


def split_words(src: _Text, start: int, end: int, diags: Diagnostics, *,
                unit: bool = False) -> list[Word]:
    """Split ``src.text[start:end]`` like sh (or an ExecStart= value with ``unit``)."""
    text = src.text
    words: list[Word] = []
    buf: list[str] = []
    word_start: int | None = None
    i = start

    def finish() -> None:
        nonlocal word_start
        if word_start is not None:
            words.append(Word("".join(buf), src.pos(word_start)))
        buf.clear()
        word_start = None

    def dollar(at: int) -> bool:
        """A ``$`` at ``at``: literal for ``$$`` in a unit (consumed), else a finding."""
        if unit and text.startswith("$$", at):
            return True
        m = re.match(r"\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])", text[at:])
        if m:
            diags.error(src.pos(at), "I002",
                        f"'{m.group(0)}' is a variable gen cannot expand; write its value")
        return False

    while i < end:
        c = text[i]
        if c == "\\" and i + 1 < end and text[i + 1] in "\r\n":
            i += 2 if text[i + 1] == "\n" else (3 if text.startswith("\r\n", i + 1) else 2)
            continue
        if c in " \t\r":
            finish()
            i += 1
            continue
        if c == "\n":
            finish()
            rest = text[i + 1:end]
            if rest.strip() and not rest.lstrip().startswith("#"):
                diags.warning(src.pos(i + 1), "I003",
                              "this line does not continue the one before with a backslash; "
                              "a shell would run it as a separate command; read as one command")
            i += 1
            continue
        if c == "#" and word_start is None:
            nl = text.find("\n", i, end)
            i = end if nl < 0 else nl
            continue
        if c in _OPERATOR_CHARS and not unit:
            finish()
            diags.warning(src.pos(i), "I004",
                          f"shell operator or redirection '{c}': the rest of the line is ignored")
            nl = text.find("\n", i, end)
            i = end if nl < 0 else nl
            continue
        if word_start is None:
            word_start = i
        if c == "'":
            close = text.find("'", i + 1, end)
            if close < 0:
                diags.error(src.pos(i), "I001", "unterminated single quote")
                return words
            buf.append(text[i + 1:close])
            i = close + 1
        elif c == '"':
            j = i + 1
            while True:
                if j >= end:
                    diags.error(src.pos(i), "I001", "unterminated double quote")
                    return words
                d = text[j]
                if d == '"':
                    break
                if d == "\\" and j + 1 < end and text[j + 1] in '"\\$`\n':
                    if text[j + 1] != "\n":
                        buf.append(text[j + 1])
                    j += 2
                    continue
                if d == "$":
                    if dollar(j) and unit:
                        buf.append("$")
                        j += 2
                        continue
                buf.append(d)
                j += 1
            i = j + 1
        elif c == "\\" and i + 1 < end:
            buf.append(text[i + 1])
            i += 2
        elif c == "$":
            if dollar(i) and unit:
                buf.append("$")
                i += 2
                continue
            buf.append(c)
            i += 1
        elif c == "%" and unit:
            if text.startswith("%%", i):
                buf.append("%")
                i += 2
                continue
            diags.error(src.pos(i), "I002",
                        f"systemd specifier '{text[i:i + 2]}' is expanded by systemd; write its value")
            buf.append(c)
            i += 1
        else:
            buf.append(c)
            i += 1
    finish()
    return words


def split_command(text: str, path: str, diags: Diagnostics) -> Command:
    """The words of a pasted command, or of the ``ExecStart=`` line when ``text`` is a unit file.

    Positions are 1-based line/column inside ``text``, shown under ``path``.
    """
    src = _Text(text, path)
    exec_lines = list(_EXEC_START.finditer(text))
    if not exec_lines:
        return Command(tuple(split_words(src, 0, len(text), diags)))
    # The last non-empty ExecStart= wins, as in systemd (an empty one resets the list).
    nonempty = [m for m in exec_lines if text[m.end():_logical_end(text, m.end())].strip()]
    match = (nonempty or exec_lines)[-1]
    start = match.end()
    # systemd's exec prefixes: "-" ignore failure, "@" argv0, ":" no expansion, "+", "!", "!!".
    while start < len(text) and text[start] in "-@:+!":
        start += 1
    words = split_words(src, start, _logical_end(text, start), diags, unit=True)
    env: list[Word] = []
    for m in _ENVIRONMENT.finditer(text):
        env.extend(split_words(src, m.end(), _logical_end(text, m.end()), diags, unit=True))
    return Command(tuple(words), tuple(env))
