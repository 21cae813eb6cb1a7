"""Keys for kept answers: the identity of an immutable object (a catalog, a model), a value with its type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

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


# Types whose repr says everything an answer kept by value may depend on.
_TYPED = frozenset({str, int, float, bool, type(None)})


def typed_scalar(value: Any) -> tuple[type, str] | None:
    """``value`` with its type, as a key (None when it is not a plain scalar).

    ``True``, ``1`` and ``1.0`` are equal in Python, not in argv or to a predicate that asks
    ``is True``; repr tells ``0.0`` from ``-0.0``.
    """
    kind = type(value)
    return (kind, repr(value)) if kind in _TYPED else None
