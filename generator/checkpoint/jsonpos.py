"""The line and column of every key and value of a JSON text, for positioned diagnostics.

Python's ``json`` gives positions only for syntax errors. A model snapshot that parses but
breaks its schema still needs ``catalogs/models/x.json:LINE:COL`` at the broken value, so
this small recursive reader walks the same text once more, only when there is an error to
place, and fills a :class:`generator.load.manifests.Document` the schema code already knows.
It accepts exactly what ``json.loads`` accepted before it (it is never run on other text).
"""

from __future__ import annotations

import json
import json.decoder
import re
from typing import Any, Callable

from generator.load.manifests import DocPath, Document

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
# json's own string scanner (C when built): the same unescaping json.loads did.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class _Walker:
    """One pass over the text, recording ``(line, column)`` per path (1-based)."""

    def __init__(self, text: str, doc: Document) -> None:
        self.text, self.doc = text, doc
        # Offsets of line starts, to turn an offset into a line and column.
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, offset: int) -> tuple[int, int]:
        import bisect

        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def skip(self, i: int) -> int:
        match = _WHITESPACE.match(self.text, i)
        return match.end() if match else i

    def value(self, i: int, path: DocPath) -> tuple[Any, int]:
        i = self.skip(i)
        self.doc.value_pos[path] = self.where(i)
        c = self.text[i]
        if c == "{":
            out: dict[str, Any] = {}
            i = self.skip(i + 1)
            if self.text[i] == "}":
                return out, i + 1
            while True:
                i = self.skip(i)
                key_at = i
                key, i = _scanstring(self.text, i + 1)
                self.doc.key_pos[path + (key,)] = self.where(key_at)
                i = self.skip(i) + 1  # the ':'
                out[key], i = self.value(i, path + (key,))
                i = self.skip(i)
                if self.text[i] == "}":
                    return out, i + 1
                i += 1  # ','
        if c == "[":
            items: list[Any] = []
            i = self.skip(i + 1)
            if self.text[i] == "]":
                return items, i + 1
            while True:
                item, i = self.value(i, path + (len(items),))
                items.append(item)
                i = self.skip(i)
                if self.text[i] == "]":
                    return items, i + 1
                i += 1
        if c == '"':
            text, end = _scanstring(self.text, i + 1)
            return text, end
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, i):
                return literal, i + len(word)
        match = _NUMBER.match(self.text, i)
        assert match is not None, "only text json.loads accepted is walked"
        number = match.group(0)
        return (float(number) if any(ch in number for ch in ".eE") else int(number)), match.end()


def positioned(text: str, display: str) -> Document:
    """``text`` (JSON that parses) as a Document with the position of every key and value."""
    doc = Document(display, None)
    walker = _Walker(text, doc)
    doc.data, _ = walker.value(0, ())
    return doc
