"""Malformed YAML explained in plain words, at the place the operator has to edit.

libyaml stops where its grammar broke, which is often not where the mistake is, and says
so in the grammar's words: a tab reads "found character that cannot start any token", a
one-space dedent "did not find expected key", an unclosed quote "found unexpected end of
stream" three lines later. :func:`explain` looks at the text around libyaml's marks and
names the common mistakes (issue 23, the daily loop), each with its own code:

* Y020 a tab in a line's indentation (YAML indents with spaces only);
* Y021 a line whose indentation matches no level above it (a one-space dedent, a line
  indented past its key's value, a key at the column of a list's ``-``, a list item
  among a mapping's keys);
* Y022 a quote that is never closed (named at its opening);
* Y023 no space after a key's colon (``path:/a`` is one word to YAML);
* Y024 a colon and a space inside an unquoted value (``a: b: c``);
* Y025 a value that starts with a character YAML reserves (``@``, a backtick, ``%``,
  ``*`` an alias);
* Y026 a ``[`` or ``{`` that is not closed, or items not separated by commas;
* Y027 a key without its colon;
* Y028 text after a complete value (after a closing quote or bracket).

The parser's own words are kept as the message's last part, for a search engine and for
the cases a heuristic reads wrongly. Anything else stays Y001 with the parser's text.
Both of ruamel's parsers are read (libyaml's and the pure-Python one word things apart).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Explained", "explain"]


@dataclass(frozen=True)
class Explained:
    """What to report for one YAML error: where (1-based), the code, the words and the fix."""

    line: int
    col: int
    code: str
    message: str
    fix: str | None = None


_QUOTES = "\"'"
_RESERVED = {"@": "'@'", "`": "a backtick", "%": "'%'"}
# A key followed by its colon and no space: 'path:/a', '- port:30000'. Keys as manifests
# write them (letters, digits, '_', '.', '-'); an URL value ('url: http://x') has its space.
_NO_SPACE = re.compile(r"^(?P<lead>[ ]*(?:- +)*)(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*):(?P<rest>(?!//)[^\s:].*)$")
_KEY = re.compile(r"^[ ]*(?:- +)*(?P<key>[^\s:#'\"\[\]{},][^:#]*?)\s*:(?:\s|$)")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    """True for a line that holds YAML content (not blank, not a comment)."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _key_of(line: str) -> str | None:
    found = _KEY.match(line)
    return found.group("key") if found else None


def _label(line: str) -> str:
    """How a line is named in a message: its key ('- key' for a list item), or its first words."""
    key = _key_of(line)
    if key is not None:
        return f"'- {key}'" if line.lstrip(" ").startswith("- ") else f"'{key}'"
    text = line.strip()
    return f"'{text[:30]}{'...' if len(text) > 30 else ''}'"


def _spaces(n: int) -> str:
    return f"{n} space{'s' if n != 1 else ''}"


def _previous(lines: list[str], index: int) -> int | None:
    """The index of the nearest content line before ``index``."""
    for i in range(index - 1, -1, -1):
        if _content(lines[i]):
            return i
    return None


def _mark(mark: Any) -> tuple[int, int] | None:
    return (mark.line, mark.column) if mark is not None else None


def _parser_words(exc: Any) -> str:
    return str(getattr(exc, "problem", None) or getattr(exc, "context", None) or "malformed YAML")


def explain(text: str, exc: Any) -> Explained:
    """The plain-word diagnosis of ``exc`` (a ruamel MarkedYAMLError) raised on ``text``."""
    lines = text.split("\n")
    problem = _mark(getattr(exc, "problem_mark", None)) or _mark(getattr(exc, "context_mark", None)) or (0, 0)
    context = _mark(getattr(exc, "context_mark", None))
    words = _parser_words(exc)
    try:
        found = _diagnose(lines, problem, context, words.lower(), str(getattr(exc, "context", "") or "").lower())
    except (IndexError, ValueError, StopIteration):  # a reading this module got wrong: the parser's words
        found = None  # (tests/test_yaml_errors.py runs _diagnose unguarded on mutated manifests)
    if found is None:
        return Explained(problem[0] + 1, problem[1] + 1, "Y001", f"malformed YAML: {words}")
    line, col, code, message, fix = found
    return Explained(line + 1, col + 1, code, f"{message}; the YAML parser says \"{words}\"", fix)


_Found = tuple[int, int, str, str, str | None]


def _diagnose(lines: list[str], problem: tuple[int, int], context: tuple[int, int] | None, words: str,
              while_: str) -> _Found | None:
    """Try each known mistake in turn, the most specific first."""
    row = min(problem[0], len(lines) - 1)
    for check in (_tab, _unclosed_quote):
        found = check(lines, row)
        if found is not None:
            return found
    if "flow" in while_ and context is not None:
        return _flow(lines, problem, context)
    if "could not find expected ':'" in words and context is not None:
        return _no_colon(lines, context)
    if "mapping values are not allowed" in words:
        return _colon(lines, problem)
    if "cannot start any token" in words or "undefined alias" in words:
        return _reserved(lines, problem)
    if "expected key" in words or "block end" in words or "'-' indicator" in words:
        return _structure(lines, problem, while_)
    return None


def _tab(lines: list[str], row: int) -> _Found | None:
    """Y020: a tab in the indentation of the error's line or of the content line before it."""
    candidates = [row]
    before = _previous(lines, row)
    if before is not None:
        candidates.append(before)
    for i in candidates:
        line = lines[i]
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" in lead:
            col = lead.index("\t")
            above = _previous(lines, i)
            unit = _indent(lines[above]) if above is not None else 0
            fix = "replace the tab with spaces" + (f"; line {above + 1} is indented {_spaces(unit)}"
                                                   if above is not None and unit else "")
            return (i, col, "Y020", "a tab in the indentation: YAML indents with spaces only", fix)
    return None


def _scan_quote(line: str, start: int) -> int | None:
    """The index of the quote that closes the one at ``start`` on this line, or None."""
    quote = line[start]
    i = start + 1
    while i < len(line):
        ch = line[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and line[i + 1:i + 2] == "'":
                i += 2  # '' is a quote inside a single-quoted value
                continue
            return i
        i += 1
    return None


def _value_starts(line: str) -> list[int]:
    """Where values (or keys) may begin on a block line: after the indent, '- ' and ': '."""
    i = _indent(line)
    while line.startswith("- ", i) or line[i:] == "-":
        i += 2
        while line[i:i + 1] == " ":
            i += 1
    starts = [i]
    if i < len(line) and line[i] not in _QUOTES:
        sep = line.find(": ", i)
        if sep >= 0 and "#" not in line[i:sep]:
            j = sep + 2
            while line[j:j + 1] == " ":
                j += 1
            starts.append(j)
    return starts


def _unclosed_quote(lines: list[str], row: int) -> _Found | None:
    """Y022: a quoted value opened on a line up to the error's that does not close on it.

    YAML lets a quoted value run over lines, so an unclosed quote swallows the lines below
    until the next quote of its kind. A quote that runs on and closes before the error's
    line is taken as meant; the first one that runs on to the error (or never closes) is named.
    """
    for i in range(min(row + 1, len(lines))):
        line = lines[i]
        if not _content(line):
            continue
        for start in _value_starts(line):
            if start < len(line) and line[start] in _QUOTES:
                if _scan_quote(line, start) is None and _closes_before(lines, i, line[start]) < row:
                    continue
                if _scan_quote(line, start) is None:
                    quote = line[start]
                    kind = "double" if quote == '"' else "single"
                    return (i, start, "Y022", f"the {kind} quote opened here is not closed on its line, so "
                            "YAML reads the lines below as part of this value",
                            f"close it with {quote} at the end of the value")
                break
    return None


def _closes_before(lines: list[str], row: int, quote: str) -> int:
    """The line a quote opened on ``row`` closes on (its first lone ``quote`` further down), or a
    number past the text when it never closes."""
    for i in range(row + 1, len(lines)):
        text = lines[i].replace("\\\\", "").replace('\\"', "") if quote == '"' else lines[i].replace("''", "")
        if quote in text:
            return i
    return len(lines) + 1


def _flow(lines: list[str], problem: tuple[int, int], context: tuple[int, int]) -> _Found:
    """Y026: a '[' or '{' that is not closed on its line, or items without a comma."""
    row, col = context
    opener = lines[row][col] if col < len(lines[row]) else "["
    closer, kind = ("]", "list") if opener == "[" else ("}", "mapping")
    if problem[0] > row:
        return (row, col, "Y026", f"the '{opener}' opened here is not closed: the {kind} runs on into line "
                f"{problem[0] + 1}", f"close it with '{closer}' after its last item")
    return (problem[0], problem[1], "Y026", f"expected ',' or '{closer}' here: the items of a '{opener}...{closer}' "
            f"{kind} are separated by commas", "put ', ' between the items, or quote a value that holds spaces "
            "or colons")


def _no_colon(lines: list[str], context: tuple[int, int]) -> _Found:
    """Y027: a line that reads as a key but has no ':'."""
    row, col = context
    word = lines[row].strip().split()[0] if lines[row].strip() else ""
    above = _previous(lines, row)
    if word and above is not None and _indent(lines[above]) == _indent(lines[row]) \
            and lines[above].lstrip(" ").startswith("- "):
        return (row, col, "Y027", f"{_label(lines[row])} follows the list items above it but has no '- ', and as a key "
                "it has no ':'", f"write '- {word}' for a list item, or '{word}:' for a key")
    return (row, col, "Y027", f"{_label(lines[row])} is a key without its ':'",
            f"write '{word}:'" if word else "add ':' after the key")


def _colon(lines: list[str], problem: tuple[int, int]) -> _Found | None:
    """A ':' where a value goes on: no space after an earlier key's colon (Y023), a line
    indented past the value above (Y021), or ': ' inside an unquoted value (Y024)."""
    row, col = problem
    # The plain value the colon is inside of began on this line or on the lines above it.
    i: int | None = row
    while i is not None and i >= 0 and row - i <= 20:
        found = _NO_SPACE.match(lines[i])
        if found and not lines[i].lstrip().startswith("#"):
            at = len(found.group("lead")) + len(found.group("key"))
            key, rest = found.group("key"), found.group("rest").split(" #")[0].rstrip()
            return (i, at, "Y023", f"no space after the colon of '{key}:{rest}': YAML reads it as one word, "
                    "not a key and its value", f"write '{key}: {rest}'")
        if i != row and _key_of(lines[i]) is not None:
            break
        i = _previous(lines, i)
    line = lines[row]
    before = _previous(lines, row)
    head = line[:col]
    if ": " in head[_indent(line):] or head.rstrip().endswith(":"):
        key = _key_of(line) or "key"
        value = line[line.find(": ", _indent(line)) + 2:].split(" #")[0].strip()
        return (row, col, "Y024", "a second ': ' on one line: a value that holds a colon and a space must "
                "be quoted", f"write '{key}: \"{value}\"'")
    if before is not None and _indent(line) > _indent(lines[before]):
        above = _indent(lines[before])
        return (row, _indent(line), "Y021", f"{_label(line)} is indented {_spaces(_indent(line))}, "
                f"more than line {before + 1} ({_label(lines[before])}, {_spaces(above)}), which already has a "
                "value: YAML reads this line as the rest of that value",
                f"indent it {_spaces(above)}, like line {before + 1}")
    return None


def _reserved(lines: list[str], problem: tuple[int, int]) -> _Found | None:
    """Y025: a plain value that starts with a character YAML reserves."""
    row, col = problem
    line = lines[row]
    ch = line[col] if col < len(line) else ""
    if ch == "*":
        name, what = "'*'", "an alias (a reference to an '&anchor')"
    elif ch in _RESERVED:
        name, what = _RESERVED[ch], "reserved"
    else:
        return None
    value = line[col:].split(" #")[0].rstrip()
    key = _key_of(line)
    fix = f"write '{key}: \"{value}\"'" if key else f"write \"{value}\" in quotes"
    return (row, col, "Y025", f"a value that starts with {name} must be quoted: YAML reads {name} as {what}", fix)


def _structure(lines: list[str], problem: tuple[int, int], while_: str) -> _Found | None:
    """Y021 (indentation) when the error is at a line's first character, else Y028."""
    row, col = problem
    if row >= len(lines):
        return None
    line = lines[row]
    if col > _indent(line):
        text = line[col:].split(" #")[0].rstrip()
        return (row, col, "Y028", f"unexpected '{text}' after a complete value",
                "quote the whole value, or remove the extra text")
    return _indentation(lines, row, "collection" in while_)


def _starts(line: str) -> list[tuple[int, bool]]:
    """The columns a block line opens, innermost first: (column, is a list's '-')."""
    col = _indent(line)
    out = [(col, False)]
    while line.startswith("- ", col):
        out[-1] = (col, True)
        col += 2
        while line[col:col + 1] == " ":
            col += 1
        if _key_of(line[col:]) is None and not line.startswith("- ", col):
            break  # a scalar item ('- 0') opens no block
        out.append((col, False))
    return out[::-1]


def _indentation(lines: list[str], row: int, in_list: bool) -> _Found | None:
    """Y021: the line's indentation against the levels open above it."""
    line = lines[row]
    here = _indent(line)
    levels: list[tuple[int, int, bool]] = []  # (column, line index, is a '-') open above, innermost first
    i = _previous(lines, row)
    while i is not None and not (levels and levels[-1][0] == 0):
        for col, dash in _starts(lines[i]):
            if not levels or col < levels[-1][0]:
                levels.append((col, i, dash))
        i = _previous(lines, i)
    if not levels:
        return None

    def named(level: tuple[int, int, bool]) -> str:
        col, r, dash = level
        return f"the '-' of line {r + 1}" if dash else f"{_label(lines[r][col:])} (line {r + 1})"

    stripped = line.lstrip(" ")
    key_here = next((lv for lv in levels if lv[0] == here and not lv[2]), None)
    if stripped.startswith("- ") and key_here is not None and not any(d and c == here for c, _, d in levels):
        return (row, here, "Y021", f"a list item among the keys of a mapping ({named(key_here)} is a key)",
                "remove the '- ', or put the list under a key of its own")
    dash_here = next((lv for lv in levels if lv[2] and lv[0] == here), None)
    if in_list and dash_here is not None and not stripped.startswith("- "):
        item_col = _starts(lines[dash_here[1]])[0][0]  # where the dash line's own content starts
        return (row, here, "Y021", f"{_label(line)} starts at the column of the list's '-' (line {dash_here[1] + 1}): "
                "it is neither a new item nor a key of the item above",
                f"indent it {_spaces(item_col)} to belong to the item above, or write '- ' before it for a new item")
    shown = ", ".join(f"{named((c, r, d))} {'starts ' if not k else ''}at {_spaces(c) if not k else c}"
                      for k, (c, r, d) in enumerate(levels[:4]))
    deeper = [lv for lv in levels if lv[0] > here]  # innermost first
    keys_above = [lv for lv in levels if lv[0] < here and not lv[2]]
    kind = ": a one-space dedent" if deeper and deeper[-1][0] - here == 1 else ""
    options = []
    if deeper:
        under = next((lv for lv in levels if lv[0] < deeper[-1][0]), None)
        stay = "" if under is None else ", to stay in the item of " + named(under)[len("the '-' of "):] \
            if under[2] else f", to stay under {_label(lines[under[1]][under[0]:])}"
        options.append(f"{_spaces(deeper[-1][0])}, like {named(deeper[-1])}{stay}")
    if keys_above and not stripped.startswith("- "):
        options.append(f"{_spaces(keys_above[0][0])} to be a key beside {named(keys_above[0])}")
    return (row, here, "Y021", f"{_label(line)} is indented {_spaces(here)}{kind}; above it, {shown}",
            "indent it " + "; or ".join(options) if options else None)
