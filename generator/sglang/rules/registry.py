"""The predicates by rule id, and what they answer: a Hit, built from SGLang's checks in its order.

Each rule of rules.yaml that has no declarative ``when:`` has one predicate, registered
with ``@predicate(rule_id)``. A predicate is a pure function of :class:`Settings` (and the
rule's versioned ``params``): it returns None or a :class:`Hit` naming the settings to
blame, the ``check`` whose texts rules.yaml holds, and the values those texts print. A
rule that mirrors several SGLang checks lists them with :func:`check` in SGLang's order
and returns :func:`first_broken` of them, as SGLang raises at the first (or
:func:`every_broken`, where SGLang reports them all at once).

A field is a value, never a sentence: a number, a switch, None, text the manifest wrote, a
setting's option string (``s.flag(name)``), a list of those, or an :func:`item` naming one
of the rule's ``items:`` texts. Every word a reviewer reads is in rules.yaml; how a field
prints is generator/sglang/rules/message.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


@dataclass(frozen=True)
class Hit:
    """A predicate fired: which settings to blame (position order), the check, the message fields.

    ``check`` names an entry of the rule's ``checks:`` in rules.yaml (its texts are rendered
    with ``fields`` and feed the rule's message and fix); None for a rule with one text.
    """

    blame: tuple[str, ...]
    fields: Mapping[str, Any] = field(default_factory=dict)
    check: str | None = None
    # every_broken: the broken checks, each with its own fields (their texts print as lists)
    every: tuple["Hit", ...] = ()


@dataclass(frozen=True)
class Item:
    """An entry of a list a text prints: the name of one of the rule's ``items:`` texts, and its fields."""

    name: str
    fields: Mapping[str, Any] = field(default_factory=dict)


def item(name: str, /, **fields: Any) -> Item:
    """The item ``name`` (its text is under the rule's ``items: {name: text}`` in rules.yaml)."""
    return Item(name, fields)


@dataclass(frozen=True)
class Check:
    """One of SGLang's checks as a predicate sees it: broken or not, and the Hit it would make.

    A check made with ``quiet=True`` is one another rule reports: when it is the first broken,
    SGLang stops there, and this rule stays silent.
    """

    broken: bool
    name: str | None
    blame: tuple[str, ...]
    fields: Mapping[str, Any]
    quiet: bool = False


def check(broken: object, name: str | None, blame: Iterable[str] = (), /, **fields: Any) -> Check:
    """A check named ``name`` (its texts are under the rule's ``checks: {name: ...}`` in rules.yaml)."""
    return Check(bool(broken), name, tuple(blame), fields)


def quiet(broken: object) -> Check:
    """A check another rule reports: first broken, it silences this rule (SGLang stops before us)."""
    return Check(bool(broken), None, (), {}, quiet=True)


def first_broken(checks: Iterable[Check | Callable[[], Check]], **common: Any) -> Hit | None:
    """The Hit of the first broken check, in the order given (SGLang's); None when none is broken.

    A check may be given as a thunk, so that a later check can assume the earlier ones held
    (it is built only when reached). ``common`` fields go into every Hit.
    """
    for item in checks:
        found = item() if callable(item) else item
        if found.broken:
            if found.quiet:
                return None
            return Hit(found.blame, {**common, **found.fields}, found.name)
    return None


def every_broken(checks: Iterable[Check], **common: Any) -> Hit | None:
    """One Hit for all the broken checks, in the order given (SGLang reports them all at once).

    It blames the first broken check's settings; each text field of the checks prints the
    list of the broken checks' texts (``{clauses.detail}``). None when none is broken.
    """
    broken = [c for c in checks if c.broken and not c.quiet]
    if not broken:
        return None
    return Hit(broken[0].blame, dict(common), None, tuple(Hit(c.blame, dict(c.fields), c.name) for c in broken))


Predicate = Callable[[Settings, RuleSpec], "Hit | None"]
PREDICATES: dict[str, Predicate] = {}


def predicate(rule_id: str) -> Callable[[Predicate], Predicate]:
    """Register the predicate of the rule ``rule_id``."""
    def register(fn: Predicate) -> Predicate:
        PREDICATES[rule_id] = fn
        return fn
    return register
