"""generator/sglang/rules/kept.py: an answer kept for one service is the answer for the next.

Every unit-table row and every generated differential word case is evaluated from a cold
store, again from the warm one, and once more with every written position moved: the
findings must equal those of a non-plain copy (never kept, every predicate runs), each at
its own service's position.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from differential_cases import all_cases
from test_rules import TABLE

from generator.errors import Diagnostics, Position
from generator.sglang.catalog import load_catalog
from generator.sglang.flags import Arg, check_args
from generator.sglang.rules import evaluate, load_rules, rules_path, settings_from_argv, settings_from_words
from generator.sglang.rules import kept
from generator.sglang.rules.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def _rows(settings: Settings) -> list[Any]:
    return [(f.rule.id, f.message, f.fix, f.pos) for f in evaluate(settings, load_rules(rules_path(settings.catalog)))]


def _moved(settings: Settings) -> Settings:
    """The same settings written at other places (another host's file)."""
    written = {d: Position("hosts/other.yaml", 90 + i, 7) for i, d in enumerate(settings.written)}
    env_pos = {n: Position("hosts/other.yaml", 50 + i, 3) for i, n in enumerate(settings.env)}
    return dataclasses.replace(settings, written=written, env_pos=env_pos)


def _check(settings: Settings) -> None:
    kept._STORES.clear()
    full = _rows(dataclasses.replace(settings, plain=False))
    assert _rows(settings) == full  # cold
    assert _rows(settings) == full  # warm
    moved = _moved(settings)
    assert _rows(moved) == _rows(dataclasses.replace(moved, plain=False))  # warm, other positions


@pytest.mark.parametrize(("pin", "argv", "env", "expected"), TABLE, ids=[f"{t[0]}:{' '.join(t[1])}" for t in TABLE])
def test_table_rows_same_from_the_store(pin: str, argv: list[str], env: dict[str, str], expected: list[str]) -> None:
    _check(settings_from_argv(load_catalog(ROOT, pin), argv, env))


def test_word_cases_same_from_the_store() -> None:
    checked = 0
    for case in all_cases():
        for pin in case.pins:
            catalog = load_catalog(ROOT, pin)
            args = [Arg(f, tuple(v) if isinstance(v, list) else v, Position("case", 3, 1)) for f, v in case.flags]
            groups = check_args(catalog, args, Diagnostics())
            settings = settings_from_words(catalog, [(g.action, g.words, g.pos) for g in groups], dict(case.env))
            _check(settings)
            checked += 1
    assert checked > 500


def test_the_key_tells_types_and_signs_apart() -> None:
    catalog = load_catalog(ROOT, "0.5.23")
    base = settings_from_argv(catalog, [], {})

    def key(value: Any) -> Any:
        return kept.settings_key(base.with_written({"tp_size": (value, None)}))

    assert len({key(v) for v in (1, True, 1.0, "1")}) == 4
    assert key(0.0) != key(-0.0)
    assert key([1, 2]) != key((1, 2)) and key([1]) != key(1)
    assert key({"a": 1}) is None  # a mapping is never kept
    assert kept.settings_key(dataclasses.replace(base, plain=False)) is None
    assert kept.settings_key(settings_from_argv(catalog, [], {"A": "1"})) != kept.settings_key(base)


def test_a_store_belongs_to_one_catalog_and_rules_list() -> None:
    kept._STORES.clear()
    new, old = load_catalog(ROOT, "0.5.23"), load_catalog(ROOT, "0.5.9")
    rules = load_rules(rules_path(new))
    store = kept.store_for(new, rules)
    store[("x",)] = []
    assert kept.store_for(new, rules) is store
    assert kept.store_for(old, rules) is not store
    assert kept.store_for(new, tuple(rules)[:-1]) is not store
