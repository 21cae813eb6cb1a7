"""Split a pasted SGLang command line into words, remembering where each word was written.

Reads what operators paste into ``gen import``: a model-card shell command (backslash
continuations, quotes, ``# comments``, ``VAR=value`` prefixes, ``| tee log``), or a
systemd unit whose ``ExecStart=`` line is taken (with its continuations, ``-@:+!``
prefixes, ``$$`` and ``%%``). Quoting follows POSIX sh for shell text and the same
rules (which systemd's ExecStart= shares for quotes and backslashes) for a unit.
Nothing is expanded: a ``$VAR`` or a ``%`` specifier is a finding, since gen cannot
know its value.

Codes (family I, shared with the importer): I001 unterminated quote (says where it opened), I002 shell variable,
a ``~`` the shell expands, or a systemd specifier, I003 line not continued with a backslash, I004 shell
operator or redirection (the rest of the line is ignored), I010 an unquoted glob or brace the
shell would expand (imported as written).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from generator.errors import Diagnostics, Position

_OPERATOR_CHARS = "|&;<>"
# bash's $'...' escapes of one character (the others: octal, \xHH, \uHHHH, \UHHHHHHHH, \cX).
_C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
              "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_CONTINUATION = re.compile(r"\\\r?\n")
_EXEC_START = re.compile(r"^[ \t]*ExecStart[ \t]*=[ \t]*", re.MULTILINE)
_ENVIRONMENT = re.compile(r"^[ \t]*Environment[ \t]*=[ \t]*", re.MULTILINE)
_ENVIRONMENT_FILE = re.compile(r"^[ \t]*EnvironmentFile[ \t]*=[ \t]*-?(.*)$", re.MULTILINE)


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
    env_files: tuple[str, ...] = ()  # its ``EnvironmentFile=`` paths (read on the host, not here)


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


class _Splitter:
    """One pass of sh's word splitting over ``src.text[start:end]``; each construct is a method
    that consumes it and returns the offset after it (None: stop, the rest is unreadable)."""

    def __init__(self, src: _Text, start: int, end: int, diags: Diagnostics, unit: bool):
        self.src, self.text, self.end, self.diags, self.unit = src, src.text, end, diags, unit
        self.i = start
        self.words: list[Word] = []
        self.buf: list[str] = []
        self.word_start: int | None = None

    def finish(self) -> None:
        """End the current word (if one started)."""
        if self.word_start is not None:
            self.words.append(Word("".join(self.buf), self.src.pos(self.word_start)))
        self.buf.clear()
        self.word_start = None

    def dollar(self, at: int) -> bool:
        """A ``$`` at ``at``: literal for ``$$`` in a unit (True: consume two), else a finding."""
        if self.unit and self.text.startswith("$$", at):
            return True
        # What follows the '$' as the shell reads it: a line continuation joins the words around it.
        rest = _CONTINUATION.sub("", self.text[at:min(self.end, at + 4096)])
        m = re.match(r"\$(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])", rest)
        if m and self.unit and m.group(1) in ("{CREDENTIALS_DIRECTORY}", "CREDENTIALS_DIRECTORY"):
            return False  # systemd's own (LoadCredential=): gen's --config of secret_args, kept as written
        if m:
            self.diags.error(self.src.pos(at), "I002",
                             f"'{m.group(0)}' is a variable gen cannot expand; write its value")
        elif not self.unit and rest.startswith(("$(", "$[", "${")):
            # sh runs a command ($(...)), computes ($((...)), bash's $[...]) or expands a variable
            # whose '}' is missing (a syntax error): none of it has a value gen could know.
            what = {"$(": "a command substitution", "$[": "an arithmetic expansion",
                    "${": "a variable without its closing '}'"}[rest[:2]]
            if rest.startswith("$(("):
                what = "an arithmetic expansion"
            self.diags.error(self.src.pos(at), "I002",
                             f"'{rest[:2]}' starts {what}, which the shell expands and gen cannot; "
                             "write its value")
        return False

    def backtick(self, at: int) -> None:
        """An unescaped backquote outside single quotes: sh's old form of ``$(...)`` (I002)."""
        self.diags.error(self.src.pos(at), "I002",
                         "'`' starts a command substitution, which the shell runs and gen cannot; write its "
                         "output (or quote the '`' in single quotes if it is meant literally)")

    def substitution(self, i: int) -> int:
        """An unquoted ``$(...)`` or ```...```: I002, and kept as written up to where it ends (its
        parentheses are its own, not a subshell of the command)."""
        text = self.text
        if text[i] == "`":
            self.backtick(i)
            j = i + 1
            while j < self.end and text[j] != "`":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, self.end)
        else:
            self.dollar(i)
            depth, j = 0, self.after_continuations(i + 1)
            while j < self.end:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            end = j
        self.buf.append(text[i:end])
        return end

    def after_continuations(self, j: int) -> int:
        """The first index from ``j`` on that is not a line continuation (bash joins the lines
        before it reads a word: ``$\\<newline>(`` is ``$(``)."""
        while True:
            m = _CONTINUATION.match(self.text, j, self.end)
            if m is None:
                return j
            j = m.end()

    def ansi_c_quoted(self, i: int) -> int | None:
        r"""bash's ``$'...'``: backslash escapes as C writes them, up to the next unescaped ``'``
        (bash's own table: ``\n``, ``\t``, ``\xHH``, ``\uHHHH``, ``\cX``, octal, ...; any other
        backslash stays, with its character). A NUL ends the string there, as in bash. A byte
        beyond ASCII (``\xe9``, ``\351``) is no text on its own: I011."""
        text, j, out = self.text, self.after_continuations(i + 1) + 1, []
        while j < self.end and text[j] != "'":
            if text[j] != "\\" or j + 1 >= self.end:
                out.append(text[j])
                j += 1
                continue
            e = text[j + 1]
            if e in _C_ESCAPES:
                out.append(_C_ESCAPES[e])
                j += 2
            elif e in "01234567" or (e in "xuU" and re.match(r"[0-9A-Fa-f]", text[j + 2:j + 3])):
                octal = e in "01234567"
                m = re.match(r"[0-7]{1,3}" if octal else r"[0-9A-Fa-f]{1,%d}" % {"x": 2, "u": 4, "U": 8}[e],
                             text[j + 1:j + 4] if octal else text[j + 2:j + 10])
                assert m is not None
                code = int(m.group(0), 8) & 0xFF if octal else int(m.group(0), 16)
                if (octal or e == "x") and code > 0x7F:
                    self.diags.error(self.src.pos(j), "I011",
                                     f"'{text[j:j + 1 + (not octal) + len(m.group(0))]}' in $'...' is a single byte, "
                                     "not a character: write the character itself (or \\u with its code)")
                out.append(chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd")
                j += 1 + (not octal) + len(m.group(0))
            elif e == "c" and j + 2 < self.end:
                c = text[j + 2]
                out.append("\x7f" if c == "?" else chr(ord(c.upper()) & 0x1F) if ord(c) < 128 else c)
                j += 3
            else:
                out.append("\\" + e)
                j += 2
        if j >= self.end:
            self.unterminated(i + 1, "$'...'")
            return None
        value = "".join(out)
        self.buf.append(value.partition("\0")[0])
        return j + 1

    def expansion(self, i: int) -> None:
        """What a shell does to an unquoted character that gen keeps as written: ``~`` at a
        word's start or after its ``=`` becomes a home folder (I002, like ``$HOME``); ``*``,
        ``?`` and ``[`` are replaced by the names of matching files, if any, and ``{a,b}`` by
        bash with several words (I010: imported as written)."""
        c, text = self.text[i], self.text
        if c == "~" and (not self.buf or self.buf[-1] == "=" and "".join(self.buf).count("=") == 1):
            self.diags.error(self.src.pos(i), "I002",
                             "'~' is expanded by the shell to a home folder gen cannot know; write the "
                             "absolute path (or quote the '~' if it is meant literally)")
        elif c in "*?[" or (c == "{" and re.match(r"\{[^{}\s'\"]*(,|\.\.)[^{}\s'\"]*\}", text[i:self.end])):
            what = "bash makes several words of it" if c == "{" else "a shell replaces the word by the names of matching files"
            self.diags.warning(self.src.pos(i), "I010",
                               f"unquoted '{c}': {what}; gen imports it as written: quote the word if it "
                               "is meant literally, or write what the shell made of it")

    def unterminated(self, at: int, kind: str) -> None:
        """I001 at the opening quote: say that it is never closed, and what that means."""
        self.diags.error(self.src.pos(at), "I001",
                         f"unterminated {kind} quote: the quote opened here is never closed, so the "
                         "rest of the command cannot be read; close it (or escape it with a backslash)")

    def newline(self, i: int) -> int:
        """A newline ends the word; a next line that is not a continuation is I003."""
        self.finish()
        rest = self.text[i + 1:self.end]
        if rest.strip() and not rest.lstrip().startswith("#"):
            self.diags.warning(self.src.pos(i + 1), "I003",
                               "this line does not continue the one before with a backslash; "
                               "a shell would run it as a separate command; read as one command")
        return i + 1

    def to_line_end(self, i: int) -> int:
        """The offset of the end of the line (a comment or an ignored shell operator's rest)."""
        nl = self.text.find("\n", i, self.end)
        return self.end if nl < 0 else nl

    def single_quoted(self, i: int) -> int | None:
        """'...': everything literal up to the next single quote."""
        close = self.text.find("'", i + 1, self.end)
        if close < 0:
            self.unterminated(i, "single")
            return None
        self.buf.append(self.text[i + 1:close])
        return close + 1

    def double_quoted(self, i: int) -> int | None:
        """"...": backslash escapes only ``"\\$`` and newline; ``$`` is a finding (or ``$$`` in a unit)."""
        text, j = self.text, i + 1
        while j < self.end and text[j] != '"':
            d = text[j]
            if d == "\\" and j + 1 < self.end and text[j + 1] in '"\\$`\n':
                if text[j + 1] != "\n":
                    self.buf.append(text[j + 1])
                j += 2
            elif d == "$" and self.dollar(j) and self.unit:
                self.buf.append("$")
                j += 2
            else:
                if d == "`" and not self.unit:
                    self.backtick(j)
                self.buf.append(d)
                j += 1
        if j >= self.end:
            self.unterminated(i, "double")
            return None
        return j + 1

    def unquoted(self, i: int) -> int:
        """One unquoted character: a backslash escape, ``$``, a systemd ``%`` specifier, or itself."""
        c, text = self.text[i], self.text
        if c == "\\" and i + 1 < self.end:
            self.buf.append(text[i + 1])
            return i + 2
        if c == "$" and self.dollar(i) and self.unit:
            self.buf.append("$")
            return i + 2
        if not self.unit:
            self.expansion(i)
        if c == "%" and self.unit:
            if text.startswith("%%", i):
                self.buf.append("%")
                return i + 2
            self.diags.error(self.src.pos(i), "I002",
                             f"systemd specifier '{text[i:i + 2]}' is expanded by systemd; write its value")
        self.buf.append(c)
        return i + 1

    def step(self, i: int) -> int | None:
        """Consume the construct at ``i``."""
        text, c = self.text, self.text[i]
        if c == "\\" and i + 1 < self.end and text[i + 1] in "\r\n":  # a line continuation
            return i + (2 if text[i + 1] == "\n" else (3 if text.startswith("\r\n", i + 1) else 2))
        if c in " \t\r":
            self.finish()
            return i + 1
        if c == "\n":
            return self.newline(i)
        if c == "#" and self.word_start is None:
            return self.to_line_end(i)
        if c in _OPERATOR_CHARS and not self.unit:
            self.finish()
            self.diags.warning(self.src.pos(i), "I004",
                               f"shell operator or redirection '{c}': the rest of the line is ignored")
            return self.to_line_end(i)
        if self.word_start is None:
            self.word_start = i
        if c == "'":
            return self.single_quoted(i)
        if c == '"':
            return self.double_quoted(i)
        k = self.after_continuations(i + 1) if c == "$" else i
        after = text[k] if c == "$" and k < self.end else ""
        if not self.unit and after == "'":
            return self.ansi_c_quoted(i)
        if not self.unit and after == '"':  # bash's translated string: "..." in the C locale
            return self.double_quoted(k)
        if not self.unit and (after == "(" or c == "`"):
            return self.substitution(i)
        if not self.unit and c in "()":
            self.diags.error(self.src.pos(i), "I011",
                             f"unquoted '{c}': the shell reads a subshell or a syntax error there, and would "
                             "not run this command; quote the word if the parenthesis is meant literally")
        return self.unquoted(i)

    def run(self) -> list[Word]:
        """Every word, up to the end or to an unterminated quote."""
        i: int | None = self.i
        while i is not None and i < self.end:
            i = self.step(i)
        if i is not None:
            self.finish()
        return self.words


def split_words(src: _Text, start: int, end: int, diags: Diagnostics, *,
                unit: bool = False) -> list[Word]:
    """Split ``src.text[start:end]`` like sh (or an ExecStart= value with ``unit``)."""
    return _Splitter(src, start, end, diags, unit).run()


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
    files = tuple(m.group(1).strip() for m in _ENVIRONMENT_FILE.finditer(text) if m.group(1).strip())
    return Command(tuple(words), tuple(env), files)
