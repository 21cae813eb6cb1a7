"""The manifest's YAML text: scalars that read back as written, notes as comments above values."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SAFE_PLAIN = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./@+-]*$")
_YAML_SPECIAL = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|null|Null|NULL|~|[-+]?(?:\d[\d_]*)?(?:\.\d*)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o?[0-7]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|\d+(?::\d+)+)$")


@dataclass
class Entry:
    """One manifest value with the notes to write above it."""

    value: Any
    notes: list[str] = field(default_factory=list)


def scalar(value: Any) -> str:
    """One YAML scalar: plain when it reads back as the same string, else double-quoted JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _SAFE_PLAIN.match(text) and not _YAML_SPECIAL.match(text):
        return text
    return json.dumps(text)


def yaml_value(value: Any) -> str:
    """A scalar, or a flow list of scalars."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    return scalar(value)

def emit(lines: list[str], key: str, node: Any, depth: int, quote_values: bool = False) -> None:
    """Append ``key: value`` (or a nested block) with its notes as comments above it."""
    pad = "  " * depth
    if isinstance(node, dict):
        lines.append(f"{pad}{key}:")
        for sub, child in node.items():
            emit(lines, sub, child, depth + 1, quote_values)
        return
    for note in node.notes:
        lines.append(f"{pad}# {note}")
    value = json.dumps(str(node.value)) if quote_values else yaml_value(node.value)
    lines.append(f"{pad}{key}: {value}")  # keys are field names, flags or env names: plain
