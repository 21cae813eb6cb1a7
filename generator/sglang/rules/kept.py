"""Which rules fire on a service, kept for the next service whose settings are the same.

Speed only (ARCHITECTURE.md, with its measured gain). A predicate is a pure function of
what :class:`Settings` gives it (the pin's catalog, the values, which dests are written,
the environment; never a position), and the registry is filled once at import.
A plain Settings (every value not written is the catalog's default) is therefore fixed by
its catalog and its written values and environment, and the rules that fire on it, with
their messages and the names they blame, are kept under exactly that: each written dest
with its value and the value's type (``True`` and ``1`` are equal in Python, not to a
predicate that asks ``is True``), and every variable. Positions are not in the key: the
caller looks the blamed names up in each service's own Settings. Fleets repeat the same
few services on every host, so most services are answered from here.
"""

from __future__ import annotations

from typing import Any, Sequence

from generator.sglang.catalog import Catalog
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

# (rule, message, fix, blamed names): a rule that fired, before positions are looked up.
Fired = tuple[RuleSpec, str, str, tuple[str, ...]]

MAX_KEPT = 4096  # distinct services per (catalog, rules); a fleet has a few dozen
# Types whose repr says everything a kept answer may depend on.
_TYPED = frozenset({str, int, float, bool, type(None)})


def _typed(value: Any) -> Any:
    """``value`` with its type, for a key; None when it is not kept (a mapping, an object).

    ``True``, ``1`` and ``1.0`` are equal in Python, not to a predicate that asks ``is True``;
    repr tells ``0.0`` from ``-0.0``.
    """
    kind = type(value)
    if kind is list or kind is tuple:
        items = [_typed(v) for v in value]
        return None if any(i is None for i in items) else (kind, tuple(items))
    return (kind, repr(value)) if kind in _TYPED else None


def settings_key(settings: Settings) -> tuple[Any, ...] | None:
    """What the rules can see of ``settings`` besides its catalog; None when it cannot be kept."""
    if not settings.plain:
        return None
    written = []
    for dest in settings.written:
        typed = _typed(settings.values.get(dest))
        if typed is None:
            return None
        written.append((dest, typed))
    env = tuple(settings.env.items())
    if any(type(k) is not str or type(v) is not str for k, v in env):
        return None
    # The facts beyond the argv are part of what the rules see: the GPU facts (a frozen value; its
    # devices follow the catalog), the checkpoint facts by identity (one loaded snapshot is one
    # object), so two models with the same argv never share an answer.
    return (tuple(written), env, settings.gpu, settings.model, settings.draft, settings.architectures)


class _Store:
    """The answers for one catalog and one rules list (both held, so their ids stay theirs)."""

    def __init__(self, catalog: Catalog, rules: Sequence[RuleSpec]) -> None:
        self.catalog = catalog
        self.rules = rules
        self.fired: dict[tuple[Any, ...], list[Fired]] = {}


_STORES: dict[tuple[int, int], _Store] = {}


def store_for(catalog: Catalog, rules: Sequence[RuleSpec]) -> dict[tuple[Any, ...], list[Fired]]:
    """The kept answers of ``rules`` on ``catalog`` (a new store when either object is new)."""
    store = _STORES.get((id(catalog), id(rules)))
    if store is None or store.catalog is not catalog or store.rules is not rules:
        if len(_STORES) > 16:
            _STORES.clear()
        store = _STORES[(id(catalog), id(rules))] = _Store(catalog, rules)
    if len(store.fired) >= MAX_KEPT:
        store.fired.clear()
    return store.fired
