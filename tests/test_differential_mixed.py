"""The seeded mixed corpus of the differential test (tests/differential_cases/mixed.py), without SGLang."""

from __future__ import annotations

import json

from differential_cases import WordCase, all_cases, product_cases
from differential_cases.mixed import MIXED, PER_PIN, atoms, mixed_cases, reachable

PINS = ("0.5.9", "0.5.23")


def _pairs(cases: list[WordCase], pin: str) -> set[str]:
    return {json.dumps([f, v]) for c in cases if pin in c.pins for f, v in c.flags}


def test_mixed_cases_are_deterministic_distinct_and_for_one_pin() -> None:
    cases = all_cases()
    for pin in PINS:
        first, again = mixed_cases(cases, pin), mixed_cases(cases, pin)
        assert first == again
        assert first[0].flags == () and first[0].env == ()  # SGLang's defaults alone
        assert all(c.rule == MIXED and c.pins == (pin,) for c in first)
        assert len({c.name for c in first}) == len(first)
        keys = {json.dumps([sorted(c.flags), c.env]) for c in first}
        assert len(keys) == len(first)
        assert len(first) <= PER_PIN


def test_mixed_cases_only_use_assignments_of_that_pins_cases() -> None:
    cases = all_cases()
    for pin in PINS:
        pool = _pairs(cases, pin)
        drawn = mixed_cases(cases, pin)
        assert {json.dumps([f, v]) for c in drawn for f, v in c.flags} <= pool
        assert any(len(c.flags) == 1 for c in drawn)  # single assignments on the defaults
        assert any(len(c.flags) >= 3 for c in drawn)  # and real mixtures


def test_the_pool_grows_with_the_groups_cases() -> None:
    base = product_cases("x", ("0.5.23",), {"--tp-size": 2}, {"--dp-size": [None, 2]})
    more = base + product_cases("y", ("0.5.23",), {}, {"--page-size": [16]})
    whole, single = atoms(base, "0.5.23")
    whole2, single2 = atoms(more, "0.5.23")
    assert len(whole) == 2 and len(single) == 2
    assert len(whole2) == 3 and (("--page-size", 16),) in [flags for flags, _ in single2]
    assert atoms(base, "0.5.9") == ([], [])
    assert len(mixed_cases(base, "0.5.9")) == 1  # no pool: the defaults case only
    assert all(c.rule != MIXED for c in all_cases())  # mixed.py holds no CASES


def test_a_mixed_allow_entry_stays_while_its_flags_are_in_the_pool() -> None:
    cases = product_cases("x", ("0.5.23",), {"--tp-size": 2}, {"--dp-size": [None, 2]})
    assert reachable({"rule": MIXED, "--dp-size": 2, "--device": None}, cases, ("0.5.23",))
    assert not reachable({"rule": MIXED, "--dp-size": 4}, cases, ("0.5.23",))
    assert not reachable({"rule": MIXED, "--dp-size": 2}, cases, ("0.5.9",))
    assert not reachable({"rule": "x", "--dp-size": 2}, cases, ("0.5.23",))  # a named rule's entry must match
