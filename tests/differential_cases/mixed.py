"""A seeded mixed corpus: flag assignments of every group's word cases, combined across rules.

Each group's cases (the other modules of this package) exercise one rule at a time, over a
few axes and a base set of flags. Real manifests mix: one rule's flags change what another
rule sees, and SGLang's defaults and overrides resolve differently when other flags are
present. :func:`mixed_cases` draws, with a fixed seed per pin, cases that combine 2-4
*atoms* taken from those cases, where an atom is either one flag assignment (flag, value) of
some case or a whole case's flag set (its base plus one point of its axes); plus plain
cases of a single assignment on SGLang's defaults, and the empty flag set.

The pool is built from the cases themselves, so it grows as the groups add cases; the draw
is deterministic for a given pool (same cases -> same mixed corpus). A mixed case's rule is
:data:`MIXED` (no rule of catalogs/rules.yaml): it is compared like every other case (gen
refuses iff SGLang raises), but it proves no particular rule.

This module has no ``CASES``: :func:`differential_cases.all_cases` does not collect it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from differential_cases import FlagValue, WordCase

MIXED = "mixed"  # the pseudo rule of the cases drawn here
SEED = 20261201
PER_PIN = 300  # drawn cases per pin (fewer when the pool is too small to give that many distinct sets)
PLAIN_SHARE = 0.15  # the share of single-assignment cases on SGLang's defaults
WHOLE_SHARE = 0.3  # the chance that an atom of a drawn case is a whole case rather than one assignment

Atom = tuple[tuple[tuple[str, FlagValue], ...], tuple[tuple[str, str], ...]]  # (flags, env)


def _key(value: FlagValue) -> str:
    return json.dumps(value, sort_keys=True)


def atoms(cases: Sequence[WordCase], pin: str) -> tuple[list[Atom], list[Atom]]:
    """The pin's whole-case atoms and single-assignment atoms, without duplicates, in a stable order."""
    whole: dict[str, Atom] = {}
    single: dict[str, Atom] = {}
    for case in cases:
        if pin not in case.pins or case.rule == MIXED:
            continue
        whole.setdefault(_key([case.flags, case.env]), (case.flags, case.env))
        for flag, value in case.flags:
            single.setdefault(_key([flag, value]), (((flag, value),), ()))
    return [whole[k] for k in sorted(whole)], [single[k] for k in sorted(single)]


def _combine(parts: Sequence[Atom]) -> tuple[tuple[tuple[str, FlagValue], ...], tuple[tuple[str, str], ...]]:
    """The atoms' flags merged in order (a later value of a flag replaces an earlier one)."""
    flags: dict[str, FlagValue] = {}
    env: dict[str, str] = {}
    for part_flags, part_env in parts:
        for flag, value in part_flags:
            flags.pop(flag, None)  # the flag moves to where its last value was written
            flags[flag] = value
        env.update(part_env)
    return tuple(flags.items()), tuple(sorted(env.items()))


def _draw(rng: random.Random, whole: list[Atom], single: list[Atom]) -> list[Atom]:
    """One case's atoms: a single assignment on the defaults, or 2-4 atoms of either kind."""
    if rng.random() < PLAIN_SHARE or not whole:
        return [rng.choice(single)]
    parts = []
    for _ in range(rng.choice((2, 2, 3, 4))):
        parts.append(rng.choice(whole) if rng.random() < WHOLE_SHARE else rng.choice(single))
    return parts


def mixed_cases(cases: Sequence[WordCase], pin: str, count: int = PER_PIN) -> list[WordCase]:
    """Up to ``count`` distinct mixed cases for ``pin`` (the first is the empty flag set)."""
    whole, single = atoms(cases, pin)
    rng = random.Random(f"{SEED}-{pin}")
    out = [WordCase(MIXED, "mixed[0]", (pin,), ())]
    seen = {_key([[], []])}
    for _ in range(count * 20 if single else 0):
        if len(out) >= count:
            break
        flags, env = _combine(_draw(rng, whole, single))
        key = _key([sorted(flags, key=lambda kv: kv[0]), env])
        if key not in seen:
            seen.add(key)
            out.append(WordCase(MIXED, f"mixed[{len(out)}]", (pin,), flags, env))
    return out



def reachable(when: dict[str, FlagValue], cases: Sequence[WordCase], pins: Sequence[str]) -> bool:
    """Whether an allow-list entry for mixed cases can still match a drawn case.

    The draw reshuffles whenever a group adds a case, so an entry for a mixed-corpus artefact
    (``when: {rule: mixed, ...}``) need not match this draw to stay: it is kept while every
    flag value it names (other than null, "not written") is still an assignment of the pool
    of one of its pins. Entries for other cases are stale as soon as they match nothing.
    """
    if when.get("rule") != MIXED:
        return False
    wanted = {_key([k, v]) for k, v in when.items() if k.startswith("--") and v is not None}
    return any(wanted <= {_key([f, v]) for c in cases if pin in c.pins for f, v in c.flags} for pin in pins)
