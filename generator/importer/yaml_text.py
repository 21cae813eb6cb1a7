"""The manifest's YAML text: scalars that read back as written, notes as comments above values.

A note quotes what the command said (a program word, a flag as written, SGLang's own
text), and a line break in it would end the comment and start YAML of its own: every
comment goes through :func:`comment`, which writes every character that is not printable
(line breaks YAML knows, control, format, surrogate, private-use, unassigned) as an escape.
Values are double-quoted (:func:`quoted`) when they would not read back as the same plain string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from generator.errors import Position, printable

_SAFE_PLAIN = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./@+-]*$")
_YAML_SPECIAL = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|null|Null|NULL|~|[-+]?(?:\d[\d_]*)?(?:\.\d*)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o?[0-7]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|\d+(?::\d+)+)$")


@dataclass
class Entry:
    """One manifest value with the notes to write above it, and the command word it came from."""

    value: Any
    notes: list[str] = field(default_factory=list)
    pos: Position | None = None  # where the command wrote it (None: from no single word)
    required: bool = False  # a null the operator must fill in (its note says what to write)


def quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back as ``text``.

    Not JSON: ``json.dumps`` writes a character beyond U+FFFF as a surrogate pair
    (``"\\ud83d\\ude00"``), which YAML refuses (an emoji in a served name made the manifest
    malformed). Printable characters stay as they are; every other one (line breaks YAML
    knows, control, format, unassigned) is YAML's ``\\x``/``\\u``/``\\U`` escape.
    """
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable() and ch not in "\u2028\u2029":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF
                       else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def scalar(value: Any) -> str:
    """One YAML scalar: plain when it reads back as the same string, else double-quoted (:func:`quoted`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _SAFE_PLAIN.fullmatch(text) and not _YAML_SPECIAL.fullmatch(text):  # match() lets "x\n" through "$"
        return text
    return quoted(text)


_PLAIN_KEY = re.compile(r"^-*[A-Za-z0-9_][A-Za-z0-9_./@+-]*$")


def key(text: str) -> str:
    """A mapping key that reads back as the string ``text``: plain for a field, flag or variable
    name, else double-quoted JSON. A unit's ``Environment="A: b #=1"`` names the variable
    ``A: b #``; written plain, the line read as ``A: "b"`` (a variable the command never set),
    and ``TRUE``/``null`` read as a boolean and a null key."""
    return text if _PLAIN_KEY.fullmatch(text) and not _YAML_SPECIAL.fullmatch(text) else quoted(text)


def yaml_value(value: Any) -> str:
    """A scalar, or a flow list of scalars."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    return scalar(value)


def comment(note: str, pad: str = "") -> str:
    """One YAML comment line holding ``note``.

    A note quotes the command (a program word, a flag's value, the file it came from), and a
    word may hold a line break: written raw, the rest of the word was YAML, so
    ``$'python\\ntrust_remote_code: true'`` added a key with no finding. :func:`printable`
    escapes every line break YAML knows (``\\n``, ``\\r``, NEL, U+2028/U+2029) and every
    control character, so the note stays one comment line.
    """
    return f"{pad}# {printable(note)}"


def emit(lines: list[str], name: str, node: Any, depth: int, quote_values: bool = False,
         written: dict[int, tuple[tuple[str, ...], Entry]] | None = None, path: tuple[str, ...] = ()) -> None:
    """Append ``name: value`` (or a nested block) with its notes as comments above it.

    ``written`` records, by line number (1-based), the path and Entry of every value line,
    so a finding about the printed manifest can be traced to the command word it came from.
    """
    pad = "  " * depth
    key_text = key(name)
    if isinstance(node, dict):
        lines.append(f"{pad}{key_text}:")
        for sub, child in node.items():
            emit(lines, sub, child, depth + 1, quote_values, written, (*path, name))
        return
    for note in node.notes:
        lines.append(comment(note, pad))
    value = quoted(str(node.value)) if quote_values else yaml_value(node.value)
    lines.append(f"{pad}{key_text}: {value}")
    if written is not None:
        written[len(lines)] = ((*path, name), node)
