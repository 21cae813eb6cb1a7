"""The message and fix templates of ``catalogs/rules.yaml``: named placeholders and nothing else.

A template is repository data that gen formats with ``str.format``: the mini-language can
pad (``{x:>900000000}`` took 5.3 GB), convert, index and walk attributes
(``{flag.__init__.__globals__[os].environ}`` would print the CI job's environment). So a
template may hold only ``{name}`` and ``{reader.NAME}`` placeholders: letters, digits and
``_``, not starting with ``_``, at most one dot; no format spec and no index. The one
conversion is ``!r`` (repr), as SGLang's own f-string messages print a value: bounded by the
value, and it escapes control characters.
:func:`template_problem` says what is wrong (C032 at the text, when rules.yaml is loaded),
and :func:`fill` formats only a template it accepts, so a bad one is never run.

Every template of rules.yaml is checked, wherever it stands (:func:`templates_of`): a
rule's ``message`` and ``fix``, every text under its ``checks``, and every text of its
``items``. The one formatter (``rules/message.py``) formats only what :func:`fill` accepts.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping
from typing import Any

TEMPLATE_KEYS = frozenset({"message", "fix"})
TEMPLATE_SECTIONS = frozenset({"checks", "items"})  # every string below them is a template
_FIELD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)?$")


def template_problem(text: str) -> str | None:
    """Why ``text`` is not a template of named placeholders, or None."""
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        return f"not a template ({exc}); write a literal brace as {{{{ or }}}}"
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        shown = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if not _FIELD.fullmatch(field):
            return (f"{shown}: a placeholder is a name or reader.NAME (letters, digits, '_'; not "
                    "starting with '_'; no index)")
        if conversion and conversion != "r":
            return f"{shown}: the one conversion is !r (as SGLang's messages print a value)"
        if spec:
            return f"{shown}: a placeholder takes no format spec (a width is memory: {{x:>900000000}} took 5.3 GB)"
    return None


def fill(text: str, fields: Mapping[str, Any]) -> str:
    """``text`` formatted with ``fields`` when :func:`template_problem` accepts it; else the text as written."""
    if template_problem(text) is not None:
        return text  # reported when rules.yaml was loaded; never formatted
    return text.format_map(fields)


def templates_of(item: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every template of one rule's entry (path within it, text): its message and fix, and every
    string below its ``checks`` and ``items`` mappings."""
    if isinstance(item, Mapping):
        for key, value in item.items():
            if key in TEMPLATE_KEYS and isinstance(value, str):
                yield (*path, key), value
            elif key in TEMPLATE_SECTIONS:
                yield from _strings(value, (*path, key))


def _strings(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _strings(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _strings(inner, (*path, i))
