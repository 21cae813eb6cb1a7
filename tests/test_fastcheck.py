"""generator/load/fastcheck.py never says "valid" where cerberus says "invalid".

Every model and host document of the example repo, of the benchmark fleet and of the
bad-input fixtures, and every one-leaf mutation of the valid ones (each leaf replaced by
values of every kind, each key dropped, an unknown key added), is validated both ways.
The quick path must also say yes to the valid originals, or it would save nothing.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any, Iterator

from generator.errors import Diagnostics
from generator.load.fastcheck import surely_valid
from generator.load.manifests import load_text
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, _validator_for

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from fleet import SYNTHETIC_MODELS, _host_yaml, _model_yaml  # noqa: E402

REPLACEMENTS: tuple[Any, ...] = (None, True, False, -1, 0, 1, 2.5, -0.5, float("nan"), 10**30, "", "x",
                                 "/abs/path", "../up", "a b", "a:b", "--flag", [], [1], {}, {"k": 1})


def _cerberus(data: Any, schema: dict[str, Any]) -> bool:
    return bool(_validator_for(schema).validate(copy.deepcopy(data), normalize=False))


def _fast(data: Any, schema: dict[str, Any]) -> bool:
    return surely_valid(_validator_for(schema), schema, data)


def _documents() -> Iterator[tuple[str, Any, dict[str, Any]]]:
    sources: list[tuple[str, str]] = []
    for folder in ("models", "hosts"):
        sources += [(f"{folder}/{p.name}", p.read_text()) for p in sorted((ROOT / folder).glob("*.yaml"))]
        sources += [(str(p), p.read_text()) for p in sorted((ROOT / "tests/fixtures/bad").glob(f"*/{folder}/*.y*ml"))]
    sources += [(f"models/{n}.yaml", _model_yaml(n, size, tp, extra)) for n, size, tp, extra in SYNTHETIC_MODELS[:3]]
    sources += [(f"hosts/{i}.yaml", _host_yaml(i)[1]) for i in (1, 3)]
    seen: set[str] = set()
    for display, text in sources:
        if text in seen:  # the fixtures repeat the example's files: mutate each text once
            continue
        seen.add(text)
        doc = load_text(text, display, Diagnostics())
        if doc is not None and isinstance(doc.data, dict):
            yield display, doc.data, HOST_SCHEMA if "hosts/" in display else MODEL_SCHEMA


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _leaves(value, path + (i,))


def _mutations(data: Any) -> Iterator[Any]:
    """``data`` with one leaf changed at a time, changed in place and put back before the next:
    each yielded document is only valid until the generator resumes (no deep copy per
    mutation: the copies were a third of this test's time)."""
    for path in list(_leaves(data)):
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        original = parent[key]
        for value in REPLACEMENTS:
            parent[key] = value
            yield data
        parent[key] = original
        if isinstance(parent, dict):
            saved = dict(parent)  # the key order too: a dropped key put back goes last
            del parent[key]
            yield data
            parent.clear()
            parent.update(saved)
            parent["no_such_key"] = 1
            yield data
            del parent["no_such_key"]


def test_quick_yes_only_where_cerberus_says_yes() -> None:
    checked = quick = 0
    for display, data, schema in _documents():
        slow = _cerberus(data, schema)
        if _fast(data, schema):
            assert slow, f"{display}: quick path accepted what cerberus refuses"
        if not slow:
            continue
        assert _fast(data, schema), f"{display}: a valid document must take the quick path"
        before = copy.deepcopy(data)
        for mutated in _mutations(data):
            checked += 1
            if _fast(mutated, schema):
                quick += 1
                assert _cerberus(mutated, schema), (display, mutated)
        assert data == before  # every mutation was put back
    assert checked > 2000 and quick > 100  # both answers were exercised


def test_scalar_answers_remembered_per_rules_and_bounded() -> None:
    """A scalar's answer is remembered per (rules, validator class, type, value): the same
    value under other rules, or of another type that compares equal, is asked afresh; the
    memo never grows past its bound."""
    from generator.load import fastcheck

    validator = _validator_for(HOST_SCHEMA)
    short, long = {"type": "string", "maxlength": 3}, {"type": "string", "maxlength": 30}
    for _ in range(2):
        assert fastcheck._value_ok(validator, short, "abcdef") is False
        assert fastcheck._value_ok(validator, long, "abcdef") is True
    number = {"type": "integer", "check_with": "not_bool"}
    for _ in range(2):
        assert fastcheck._value_ok(validator, number, 1) is True
        assert fastcheck._value_ok(validator, number, True) is False  # True == 1, but a bool
    for i in range(fastcheck._SCALARS_MAX + 10):
        assert fastcheck._value_ok(validator, long, f"v{i}") is True
    assert 0 < len(fastcheck._SCALARS) <= fastcheck._SCALARS_MAX
