"""Checks every key and value of a document, whatever field it is in: no field can forget them.

* Strings: no character that would end a unit-file line, hide in a review, or that systemd
  refuses at render time. That is every Unicode control (Cc: C0, DEL and C1 such as U+0085),
  format character (Cf: bidi overrides like U+202E, zero-width U+200B-U+200D, U+2060,
  U+FEFF), line/paragraph separator (Zl/Zp: U+2028, U+2029), lone surrogate (Cs), and
  Unicode noncharacter (U+FDD0-U+FDEF, U+FFFE, U+FFFF and the same in every plane).
  Emoji sequences joined by U+200D are refused too: descriptions are plain text.
* Numbers: NaN and infinity are refused (``.nan``, ``.inf``, ``1e999``), and so is an
  integer beyond 64 bits, wherever it is written (``args:`` and ``env:`` included); each
  schema field has its own tighter bounds (schema.py).
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

from generator import systemd
from generator.errors import Diagnostics
from generator.load.limits import INT_LIMIT
from generator.load.manifests import Document, DocPath

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def bad_char(text: str) -> tuple[int, str] | None:
    """The offset and the U+XXXX name of the first refused character of ``text``, or None."""
    if text.isprintable():  # every refused category (and every noncharacter) is unprintable
        return None
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in _REFUSED_CATEGORIES or systemd.noncharacter(ch):
            name = unicodedata.name(ch, "")
            return i, f"U+{ord(ch):04X}" + (f" {name}" if name else "")
    return None


def number_problem(value: Any) -> str | None:
    """Why a number cannot be used anywhere in a manifest, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a number gen can use (NaN and infinity are refused)"
    if isinstance(value, int) and abs(value) > INT_LIMIT:
        return f"the integer with {_digits(abs(value))} digits is out of range (at most {INT_LIMIT})"
    return None


def _digits(value: int) -> int:
    """How many decimal digits ``value`` (> 0) has, without ``str``: past 4,300 digits Python
    refuses to convert, and ``0x``/``0o``/``0b`` literals of any length load without that limit."""
    count = max(1, int((value.bit_length() - 1) * math.log10(2)))  # a lower bound, off by one at most
    while 10**count <= value:
        count += 1
    return count


def dotted(path: DocPath) -> str:
    """``services[0].name`` for the path ("services", 0, "name")."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(document)"


def _shown(path: DocPath, text: str, offset: int) -> str:
    """The refused value as the message shows it: quoted, except in ``args:``/``env:``.

    Those two hold free-form values, the ones a secret would be written into; diagnostics
    land in CI logs, so there the message gives only where the character is."""
    if "args" in path or "env" in path:
        return f"character {offset + 1} of {len(text)} (the value is not shown: args/env may hold a secret)"
    return repr(text)


def check_values(doc: Document, diags: Diagnostics) -> bool:
    """Refuse the characters and numbers above in every key and value; True when none."""
    before = len(diags.items)
    _walk(doc, diags, doc.data, ())
    return len(diags.items) == before


def _walk(doc: Document, diags: Diagnostics, data: Any, path: DocPath) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and (found := bad_char(key)):
                doc.refused.add(path + (key,))
                diags.error(doc.pos(path + (key,), key=True), "S008",
                            f"key {key!r} contains the control or invisible character {found[1]}")
            elif number_problem(key):
                doc.refused.add(path + (key,))
                diags.error(doc.pos(path + (key,), key=True), "S011", f"key: {number_problem(key)}")
            _walk(doc, diags, value, path + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _walk(doc, diags, value, path + (i,))
    elif isinstance(data, str) and (found := bad_char(data)):
        doc.refused.add(path)
        diags.error(doc.pos(path), "S008", f"'{dotted(path)}' contains the control or invisible character "
                    f"{found[1]}: {_shown(path, data, found[0])}")
    elif number_problem(data):
        doc.refused.add(path)
        diags.error(doc.pos(path), "S011", f"'{dotted(path)}': {number_problem(data)}")


def describe(value: Any) -> str:
    """A value as type messages word it: ``boolean true``, ``a mapping``, ``int 3``."""
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"{type(value).__name__} {shown(value)}"


SHOWN_MOST = 120  # characters of a value a message quotes: a 64 KiB value is not a CI log line


def shown(value: Any) -> str:
    """``repr(value)``, cut to :data:`SHOWN_MOST` characters with the length said when longer."""
    text = repr(value)
    if len(text) <= SHOWN_MOST:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters written"
    return f"{text[:SHOWN_MOST]}... ({size})"
