"""generator/sglang/rules/quiet.py: skipping a rule never changes what evaluate finds.

Every unit-table row and every generated differential word case is evaluated twice: as
settings_from_words builds it (plain: rules whose traced reads miss the written flags and
the environment are skipped) and as a non-plain copy (every predicate runs). The findings
must be identical, and on the corpus the skip must actually happen.
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
from generator.sglang.rules import quiet
from generator.sglang.rules.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def _both(settings: Settings) -> tuple[list[Any], list[Any]]:
    rules = load_rules(rules_path(settings.catalog))
    full = dataclasses.replace(settings, plain=False)
    key = [(f.rule.id, f.message, f.fix, f.pos) for f in evaluate(settings, rules)]
    return key, [(f.rule.id, f.message, f.fix, f.pos) for f in evaluate(full, rules)]


@pytest.mark.parametrize(("pin", "argv", "env", "expected"), TABLE, ids=[f"{t[0]}:{' '.join(t[1])}" for t in TABLE])
def test_table_rows_same_with_and_without_skipping(pin: str, argv: list[str], env: dict[str, str],
                                                   expected: list[str]) -> None:
    skipped, full = _both(settings_from_argv(load_catalog(ROOT, pin), argv, env))
    assert skipped == full


def test_word_cases_same_with_and_without_skipping() -> None:
    checked = 0
    for case in all_cases():
        for pin in case.pins:
            catalog = load_catalog(ROOT, pin)
            args = [Arg(f, tuple(v) if isinstance(v, list) else v, Position("case")) for f, v in case.flags]
            groups = check_args(catalog, args, Diagnostics())
            settings = settings_from_words(catalog, [(g.action, g.words, g.pos) for g in groups], dict(case.env))
            skipped, full = _both(settings)
            assert skipped == full, (pin, case.name)
            checked += 1
    assert checked > 500


def test_a_plain_service_skips_most_rules() -> None:
    catalog = load_catalog(ROOT, "0.5.23")
    settings = settings_from_argv(catalog, ["--tp-size", "2"], {})
    rules = [r for r in load_rules(rules_path(catalog)) if r.versions.contains(settings.version)]
    skipped = sum(quiet.skippable(settings, r) for r in rules)
    assert skipped > len(rules) * 0.8, (skipped, len(rules))
    # ... and a rule whose flag is written is run.
    written = settings_from_argv(catalog, ["--tp-size", "2", "--enable-dp-lm-head"], {})
    lm_head = next(r for r in rules if r.id == "dp-lm-head")
    assert not quiet.skippable(written, lm_head)


def test_whole_mapping_use_makes_a_rule_always_run() -> None:
    rec = quiet._Recording({"a": 1})
    assert rec.get("a") == 1 and "b" not in rec and rec.read == {"a", "b"} and not rec.opaque
    list(rec.items())
    assert rec.opaque


def test_runnable_is_the_skippable_filter() -> None:
    """The index gives exactly the rules that skippable() lets through, in order."""
    for pin, argv, env, _ in TABLE:
        settings = settings_from_argv(load_catalog(ROOT, pin), argv, env)
        rules = [r for r in load_rules(rules_path(settings.catalog)) if r.versions.contains(settings.version)]
        rules = tuple(rules)
        assert list(quiet.runnable(settings, rules)) == [r for r in rules if not quiet.skippable(settings, r)]
