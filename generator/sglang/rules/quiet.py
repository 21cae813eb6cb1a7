"""Which rules stay quiet on a service without running them: traced once per catalog.

A predicate is a pure function of the settings it reads (values, whether written, and
environment variables). Run once on the catalog's plain defaults with recording mappings,
it reveals the keys its path read and that it does not fire. A service whose written flags
and environment share no key with that set gives the predicate the same inputs along the
same path, so it does not fire there either: evaluate skips it. A predicate that looks at a
whole mapping (iterates, takes its length) or fires or raises on defaults is always run.
With ~100 rules this is most of the cost of evaluating a plain service.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from generator.sglang.catalog import Catalog
from generator.sglang.rules.registry import PREDICATES
from generator.sglang.rules.settings import Settings, catalog_memo, defaults_of
from generator.sglang.rules.spec import RuleSpec

# The keys a predicate read on defaults: (value/written dests, environment names).
Reads = tuple[frozenset[str], frozenset[str]]


class _Recording(Mapping[str, Any]):
    """A read-only view that records every key looked up; whole-mapping use marks it opaque."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data
        self.read: set[str] = set()
        self.opaque = False

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        self.opaque = True
        return iter(self._data)

    def __len__(self) -> int:
        self.opaque = True
        return len(self._data)


def _trace(catalog: Catalog, rule: RuleSpec, dests: dict[str, str]) -> Reads | None:
    """The keys ``rule``'s predicate reads on plain defaults, None when it cannot be skipped."""
    values, written, env = _Recording(defaults_of(catalog)), _Recording({}), _Recording({})
    settings = Settings(catalog, values, written, env, {}, dests)
    try:
        hit = PREDICATES[rule.id](settings, rule)
    except Exception:  # noqa: BLE001  (always run it; the real call reports whatever it does)
        return None
    if hit is not None or values.opaque or written.opaque or env.opaque:
        return None
    return frozenset(values.read | written.read), frozenset(env.read)


class _Index:
    """One catalog's rules by the keys that can wake them: traced lazily, rule by rule."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.reads: dict[str, Reads | None] = {}
        # (id(rules list), version) -> (rules, always-run positions, key -> positions, env -> positions)
        self.plans: dict[tuple[int, Any], tuple[Any, frozenset[int], dict[str, set[int]], dict[str, set[int]]]] = {}

    def trace(self, rule: RuleSpec, dests: dict[str, str]) -> Reads | None:
        reads = self.reads.get(rule.id, _UNSEEN)
        if reads is _UNSEEN:
            reads = self.reads[rule.id] = _trace(self.catalog, rule, dests)
        return reads  # type: ignore[return-value]


# id(catalog) -> its index
_INDEXES: dict[int, tuple[Catalog, _Index]] = {}
_UNSEEN = object()


def _index(catalog: Catalog) -> _Index:
    return catalog_memo(_INDEXES, catalog, _Index)


def skippable(settings: Settings, rule: RuleSpec) -> bool:
    """True when ``rule`` cannot fire on ``settings`` (see the module docstring)."""
    if not settings.plain:
        return False
    reads = _index(settings.catalog).trace(rule, settings._dests)
    if reads is None:
        return False
    keys, env = reads
    return keys.isdisjoint(settings.written) and env.isdisjoint(settings.env)


def runnable(settings: Settings, rules: Sequence[RuleSpec]) -> Sequence[RuleSpec]:
    """The rules of ``rules`` (one pin's applicable list) that may fire, in their order.

    The same answer as filtering with :func:`skippable`, from an index of the keys each
    rule read: the cost follows the few keys a service writes, not the ~100 rules.
    """
    if not settings.plain:
        return rules
    index = _index(settings.catalog)
    key = (id(rules), settings.version)
    plan = index.plans.get(key)
    if plan is None or plan[0] is not rules:
        always: set[int] = set()
        by_key: dict[str, set[int]] = {}
        by_env: dict[str, set[int]] = {}
        for i, rule in enumerate(rules):
            reads = index.trace(rule, settings._dests)
            if reads is None:
                always.add(i)
                continue
            for name in reads[0]:
                by_key.setdefault(name, set()).add(i)
            for name in reads[1]:
                by_env.setdefault(name, set()).add(i)
        if len(index.plans) > 64:
            index.plans.clear()
        plan = index.plans[key] = (rules, frozenset(always), by_key, by_env)
    _, always, by_key, by_env = plan
    picked = set(always)
    for name in settings.written:
        picked.update(by_key.get(name, ()))
    for name in settings.env:
        picked.update(by_env.get(name, ()))
    return [rules[i] for i in sorted(picked)]
