"""Answers kept by the identity of the immutable object they derive from (a catalog, a model)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_K = TypeVar("_K")
_T = TypeVar("_T")


def identity_memo(table: dict[int, tuple[_K, _T]], key: _K, build: Callable[[_K], _T], limit: int) -> _T:
    """``build(key)``, computed once per object and kept in ``table`` by its id.

    The entry holds the object itself, so no other object can take its id while it is kept;
    the identity check guards all the same. Past ``limit`` entries the table starts over.
    """
    cached = table.get(id(key))
    if cached is None or cached[0] is not key:
        if len(table) > limit:
            table.clear()
        cached = table[id(key)] = (key, build(key))
    return cached[1]
