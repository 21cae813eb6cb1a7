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

from collections.abc import Iterator, Mapping
from typing import Any

from generator.sglang.catalog import Catalog
from generator.sglang.rules.registry import PREDICATES
from generator.sglang.rules.settings import Settings, defaults_of
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


# id(catalog) -> (catalog, rule id -> Reads | None)
_TRACES: dict[int, tuple[Catalog, dict[str, Reads | None]]] = {}
_UNSEEN = object()


def skippable(settings: Settings, rule: RuleSpec) -> bool:
    """True when ``rule`` cannot fire on ``settings`` (see the module docstring)."""
    if not settings.plain:
        return False
    catalog = settings.catalog
    cached = _TRACES.get(id(catalog))
    if cached is None or cached[0] is not catalog:
        if len(_TRACES) > 64:
            _TRACES.clear()
        cached = (catalog, {})
        _TRACES[id(catalog)] = cached
    reads = cached[1].get(rule.id, _UNSEEN)
    if reads is _UNSEEN:
        reads = cached[1][rule.id] = _trace(catalog, rule, settings._dests)
    if reads is None:
        return False
    keys, env = reads  # type: ignore[misc]
    return keys.isdisjoint(settings.written) and env.isdisjoint(settings.env)
