"""Tensor names as templates: a 200,000-name MoE index in a few KB, exactly.

Each name's numeric components become ``*`` (``model.layers.*.mlp.experts.*.down_proj.weight``)
and the template maps to the exact set of numbers in a compact text: ``3-60 x 0-255`` is
layers 3..60 times experts 0..255, ``A x B + C x D`` two blocks, brackets around a block's
tail when it has several. :func:`expand_names` gives back every name; a literal ``*`` in a
name is written ``**``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NUMBER = re.compile(r"^(?:0|[1-9][0-9]*)$")


def _ranges(values: list[int]) -> str:
    """Sorted distinct ints as ``0-3,7,9-12``."""
    parts: list[str] = []
    start: int | None = None
    prev = 0
    for v in values:
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = v
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def _encode(tuples: set[tuple[int, ...]]) -> str:
    """A set of equal-length int tuples as text: ``A x B + C x D`` (A, C ranges of the first
    number; B, D the rest, bracketed when they have more than one block)."""
    if not tuples:
        return ""
    if len(next(iter(tuples))) == 1:
        return _ranges(sorted(t[0] for t in tuples))
    rest_of: dict[int, set[tuple[int, ...]]] = {}
    for t in tuples:
        rest_of.setdefault(t[0], set()).add(t[1:])
    firsts_by_rest: dict[frozenset[tuple[int, ...]], list[int]] = {}
    for first, rest in rest_of.items():
        firsts_by_rest.setdefault(frozenset(rest), []).append(first)
    blocks = []
    for tails, firsts in sorted(firsts_by_rest.items(), key=lambda item: min(item[1])):
        sub = _encode(set(tails))
        blocks.append(f"{_ranges(sorted(firsts))} x {'(' + sub + ')' if ' + ' in sub else sub}")
    return " + ".join(blocks)


def compact_names(names: Iterable[str]) -> dict[str, str]:
    """Tensor names as ``{template: numbers}`` (see the module docstring); exact and sorted."""
    by_template: dict[str, set[tuple[int, ...]]] = {}
    for name in names:
        parts = name.split(".")
        numbers = tuple(int(p) for p in parts if _NUMBER.fullmatch(p))
        template = ".".join("*" if _NUMBER.fullmatch(p) else p.replace("*", "**") for p in parts)
        by_template.setdefault(template, set()).add(numbers)
    return {t: _encode(nums) if nums != {()} else "" for t, nums in sorted(by_template.items())}


def _parse_ranges(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.extend(range(int(low), int(high or low) + 1))
    return out


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    parts, depth, start = [], 0, 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i += len(sep)
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _decode(text: str) -> list[tuple[int, ...]]:
    """The tuples :func:`_encode` wrote, in order."""
    out: list[tuple[int, ...]] = []
    for block in _split_top(text, " + "):
        head, sep, rest = block.partition(" x ")
        firsts = _parse_ranges(head)
        if not sep:
            out.extend((f,) for f in firsts)
            continue
        rest = rest[1:-1] if rest.startswith("(") and rest.endswith(")") else rest
        tails = _decode(rest)
        out.extend((f,) + t for f in firsts for t in tails)
    return out


def expand_names(templates: dict[str, str]) -> list[str]:
    """Every tensor name of :func:`compact_names`' output, sorted."""
    names = []
    for template, numbers in templates.items():
        parts = re.split(r"(?<!\*)\*(?!\*)", template) if "*" in template else [template]
        tuples = _decode(numbers) if numbers else [()]
        for t in tuples:
            pieces = [parts[0]]
            for value, part in zip(t, parts[1:], strict=True):
                pieces.append(str(value))
                pieces.append(part)
            names.append("".join(pieces).replace("**", "*"))
    return sorted(names)
