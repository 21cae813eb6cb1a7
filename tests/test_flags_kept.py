"""Tests for generator/sglang/flags/kept.py: a flag checked without a finding is answered from
the store for the next service, at that service's own position; anything else is checked again.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from generator.errors import Diagnostics, Position
from generator.sglang.catalog import Catalog, load_catalog, load_flag_tables
from generator.sglang.flags import Arg, ArgValue, check_args
from generator.sglang.flags import kept

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def catalog() -> Catalog:
    kept._STORES.clear()  # each test starts with an empty store
    return load_catalog(ROOT, "0.5.23")


def _arg(name: str, value: ArgValue, line: int, by_dest: bool = False) -> Arg:
    return Arg(name, value, Position(f"hosts/h{line}.yaml", line, 5), by_dest=by_dest)


def _run(catalog: Catalog, args: list[Arg]) -> tuple[list[tuple[str, str, str]], list[tuple[tuple[str, ...], Position]]]:
    diags = Diagnostics()
    checked = check_args(catalog, args, diags)
    return [(str(d.pos), d.code, d.message) for d in diags.items], [(c.words, c.pos) for c in checked]


def _store(catalog: Catalog) -> kept.KeptChecks:
    return kept.kept_checks(catalog, [], load_flag_tables(catalog.source_file))


def test_a_kept_answer_carries_each_services_position(catalog: Catalog) -> None:
    first = _run(catalog, [_arg("tp_size", 4, 1, by_dest=True), _arg("--context-length", 8192, 1)])
    assert ("tp_size", True, (int, "4")) in _store(catalog).answers
    second = _run(catalog, [_arg("tp_size", 4, 2, by_dest=True), _arg("--context-length", 8192, 2)])
    assert first[0] == second[0] == []
    assert [w for w, _ in first[1]] == [w for w, _ in second[1]] == [("--tp-size", "4"), ("--context-length", "8192")]
    assert [p.line for _, p in second[1]] == [2, 2]


def test_a_finding_is_never_kept_and_is_reported_at_every_position(catalog: Catalog) -> None:
    _run(catalog, [_arg("--attention-backend", "fa3", 1)])  # a good value first
    for line in (2, 3):
        diags, groups = _run(catalog, [_arg("--attention-backend", "flash_attn", line)])
        assert [(pos, code) for pos, code, _ in diags] == [(f"hosts/h{line}.yaml:{line}:5", "F003")]
        assert groups == []
    for line in (4, 5):  # a warning (an abbreviation) is a finding too
        diags, groups = _run(catalog, [_arg("--context-len", 8192, line)])
        assert [(pos, code) for pos, code, _ in diags] == [(f"hosts/h{line}.yaml:{line}:5", "F101")]
        assert [w for w, _ in groups] == [("--context-length", "8192")]
    assert all(key[0] != "--context-len" for key in _store(catalog).answers)


@pytest.mark.parametrize(("flag", "values"), [
    ("--tp-size", (1, True, "1", 1.0)),  # equal in Python, not for argparse
    ("--mem-fraction-static", (0.0, -0.0)),  # equal floats, different words
    ("--served-model-name", (("a", "b"), ("a",), "a")),
])
def test_equal_values_of_other_types_get_their_own_answer(catalog: Catalog, flag: str,
                                                          values: tuple[ArgValue, ...]) -> None:
    cold = []
    for value in values:
        kept._STORES.clear()
        cold.append(_run(catalog, [_arg(flag, value, 1)]))
    kept._STORES.clear()
    for value in values:  # all through one store, each after the others were kept
        _run(catalog, [_arg(flag, value, 1)])
    assert [_run(catalog, [_arg(flag, value, 1)]) for value in values] == cold
    assert len({str(c) for c in cold}) > 1  # a store that mixed them up would fail above


def test_given_twice_is_found_with_kept_answers(catalog: Catalog) -> None:
    _run(catalog, [_arg("--tp-size", 2, 1)])
    diags, groups = _run(catalog, [_arg("--tp-size", 2, 2), _arg("--tp-size", 2, 3)])
    assert [(pos, code) for pos, code, _ in diags] == [("hosts/h3.yaml:3:5", "F008")]
    assert "first at hosts/h2.yaml:2:5" in diags[0][2]
    assert [p.line for _, p in groups] == [2]


def test_a_mapping_value_is_checked_every_time(catalog: Catalog) -> None:
    assert kept.arg_key(_arg("--json-model-override-args", {"a": 1}, 1)) is None  # type: ignore[arg-type]
    assert kept.arg_key(_arg("--x", ("a", ["b"]), 1)) is None  # type: ignore[arg-type]


def test_a_store_serves_only_the_objects_it_was_filled_with(catalog: Catalog) -> None:
    tables = load_flag_tables(catalog.source_file)
    other = load_catalog(ROOT, "0.5.9")
    alone = kept.kept_checks(catalog, [], tables)
    assert kept.kept_checks(catalog, [], tables) is alone
    with_other = kept.kept_checks(catalog, [other], tables)
    assert with_other is not alone and not with_other.answers


def test_the_store_starts_over_when_full(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "MAX_KEPT", 2)
    _run(catalog, [_arg("--tp-size", n, 1) for n in (1,)] + [_arg("--port", 30000, 1), _arg("--host", "::", 1)])
    assert len(_store(catalog).answers) <= 2
    assert _run(catalog, [_arg("--port", 30001, 1)])[1][0][0] == ("--port", "30001")


def _fuzz() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    import memo_fuzz  # bench/memo_fuzz.py: random services, warm stores against cold ones

    return memo_fuzz


def test_warm_stores_answer_every_random_service_as_cold_ones() -> None:
    """Flag and rule stores kept across 2,000 random services (types, twins, environments)."""
    kept._STORES.clear()
    assert _fuzz().compare(2000, seed=7) is None


def test_the_random_comparison_catches_a_store_keyed_without_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: a key that drops the value's type (1 == True == 1.0) is caught."""
    flags = sys.modules["generator.sglang.flags"]
    monkeypatch.setattr(flags, "arg_key", lambda a: None if isinstance(a.value, tuple) else (a.name, a.by_dest, a.value))
    kept._STORES.clear()
    assert _fuzz().compare(2000, seed=7) is not None
    kept._STORES.clear()


def test_the_random_comparison_catches_rules_kept_without_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: rule answers kept without the environment in the key are caught."""
    evaluate = sys.modules["generator.sglang.rules.evaluate"]
    rules_kept = sys.modules["generator.sglang.rules.kept"]

    def no_env(settings: Any) -> Any:
        key = rules_kept.settings_key(settings)
        return None if key is None else key[:1]

    monkeypatch.setattr(evaluate, "settings_key", no_env)
    rules_kept._STORES.clear()
    assert _fuzz().compare(2000, seed=7) is not None
    rules_kept._STORES.clear()
