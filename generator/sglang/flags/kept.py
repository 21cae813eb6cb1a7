"""Flags that were checked without a finding, kept for the next service that writes them.

Most flags of a fleet are the same few written again on every host (a model's path, its
parallel sizes, its parsers), and checking one (resolution, deprecation, value) was most of
a cold flag check. The answer of a check that recorded nothing is a pure function of the
catalog, the other pins, the flag tables and the flag as written: its name, whether it
came from a structured field, and its value. Not of its position, which only diagnostics
carry. So such an answer (the action and the argv words) is kept under exactly that key,
the value with its type (``True``, ``1`` and ``1.0`` are equal in Python, not in argv),
and reused; a flag with any finding is checked again every time, so its diagnostics are
always computed at their own position. The given-twice check (F008) is per service and
never kept.
"""

from __future__ import annotations

from typing import Any

from generator.memo import typed_scalar
from generator.sglang.catalog import Action, Catalog, FlagTables
from generator.sglang.flags.args import Arg

MAX_KEPT = 8192  # answers per catalog; a fleet needs a few hundred (ports and addresses vary)

ArgKey = tuple[str, bool, Any]


class KeptChecks:
    """The answers kept for one catalog, valid while the other pins and tables are these."""

    def __init__(self, catalog: Catalog, others: list[Catalog], tables: FlagTables) -> None:
        self.catalog = catalog
        self.others = tuple(others)
        self.tables = tables
        self.answers: dict[ArgKey, tuple[Action, tuple[str, ...]]] = {}

    def serves(self, catalog: Catalog, others: list[Catalog], tables: FlagTables) -> bool:
        """True when this store was filled against exactly these objects."""
        return (self.catalog is catalog and self.tables is tables and len(self.others) == len(others)
                and all(a is b for a, b in zip(self.others, others)))

    def keep(self, key: ArgKey, action: Action, words: tuple[str, ...]) -> None:
        """Keep one finding-free answer (the store starts over when full)."""
        if len(self.answers) >= MAX_KEPT:
            self.answers.clear()
        self.answers[key] = (action, words)


# id(catalog) -> its store; the store holds the catalog, so the id cannot be reused meanwhile.
_STORES: dict[int, KeptChecks] = {}


def kept_checks(catalog: Catalog, others: list[Catalog], tables: FlagTables) -> KeptChecks:
    """The store for ``catalog`` checked with ``others`` and ``tables``; a fresh one when they changed."""
    store = _STORES.get(id(catalog))
    if store is None or not store.serves(catalog, others, tables):
        if len(_STORES) > 16:
            _STORES.clear()
        store = _STORES[id(catalog)] = KeptChecks(catalog, others, tables)
    return store


def arg_key(arg: Arg) -> ArgKey | None:
    """What a finding-free check of ``arg`` depends on besides the store's objects; None: not kept.

    Only scalar values and tuples of them are kept (a mapping, for a JSON flag, is checked
    every time).
    """
    if type(arg.name) is not str:
        return None
    value = arg.value
    if type(value) is tuple:
        parts = []
        for item in value:  # type: ignore[union-attr]
            part = typed_scalar(item)
            if part is None:
                return None
            parts.append(part)
        return (arg.name, arg.by_dest, ("tuple", tuple(parts)))
    typed = typed_scalar(value)
    return None if typed is None else (arg.name, arg.by_dest, typed)
