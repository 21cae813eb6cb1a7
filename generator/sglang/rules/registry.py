"""The predicates by rule id: each rule of rules.yaml has one, registered with @predicate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


@dataclass(frozen=True)
class Hit:
    """A predicate fired: which settings to blame (position order) and the message fields."""

    blame: tuple[str, ...]
    fields: Mapping[str, Any]


Predicate = Callable[[Settings, RuleSpec], "Hit | None"]
PREDICATES: dict[str, Predicate] = {}


def predicate(rule_id: str) -> Callable[[Predicate], Predicate]:
    """Register the predicate of the rule ``rule_id``."""
    def register(fn: Predicate) -> Predicate:
        PREDICATES[rule_id] = fn
        return fn
    return register
