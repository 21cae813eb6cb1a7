"""Unit tests for generator.load.limits: YAML bombs end in one positioned error, fast.

The time bounds below are there only where the input used to hang or crash: the deep-bracket
file took 46 s to parse in libyaml and crashed its composer, billion laughs never finished.
Each bound is generous (2 s against a few milliseconds measured) so a loaded machine passes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from generator.errors import Diagnostics, Position
from generator.load.limits import MAX_DEPTH, MAX_DIAGNOSTICS, MAX_NODES, MAX_SCALAR_CHARS, cap
from generator.load.manifests import load_text

# The classic: nine levels of nine aliases, 10**9 leaves once expanded.
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def _load(text: str) -> tuple[object, list[str], float]:
    diags = Diagnostics()
    started = time.monotonic()
    doc = load_text(text, "m.yaml", diags)
    return doc, [str(d) for d in diags.sorted()], time.monotonic() - started


def test_billion_laughs_stops_at_the_alias_that_crosses_the_limit() -> None:
    assert len(LAUGHS) < 500
    doc, errors, elapsed = _load(LAUGHS)
    assert doc is None
    assert errors == [f"m.yaml:4:24: error[Y013]: the document has more than {MAX_NODES} values (each use "
                      "of a YAML alias counted in full): a manifest is far smaller; split it"]
    assert elapsed < 2  # never finished before


@pytest.mark.parametrize("text", ["[" * 200_000, "{" * 200_000, "k: " + "[" * 200_000, "- " * 100_000 + "x",
                                  "".join(" " * i + "a:\n" for i in range(200)), "? " * 100_000])
def test_deep_nesting_is_refused_before_composing(text: str) -> None:
    doc, errors, elapsed = _load(text)
    assert doc is None
    assert len(errors) == 1 and f"error[Y003]: YAML nesting is too deep (more than {MAX_DEPTH} levels)" in errors[0]
    assert elapsed < 2  # 200 KB of '[' took 46 s in libyaml's scanner, then crashed its composer


def test_nesting_up_to_the_limit_loads() -> None:
    doc, errors, _ = _load("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert errors == [] and doc is not None


def test_an_alias_inside_its_own_anchor_is_one_error() -> None:
    doc, errors, elapsed = _load("name: &a [*a, *a]\n")
    assert doc is None
    assert len(errors) == 1 and "error[Y003]" in errors[0] and "alias inside its own anchor" in errors[0], errors
    assert elapsed < 2  # 2**64 paths without the budget


def test_many_plain_values_are_refused_past_the_node_limit() -> None:
    doc, errors, _ = _load("".join(f"k{i}: {i}\n" for i in range(MAX_NODES)))
    assert doc is None and errors[0].startswith(f"m.yaml:{MAX_NODES // 2}:8:") and "Y013" in errors[0]


def test_gens_own_data_files_have_a_larger_budget(tmp_path: Path) -> None:
    """catalogs/rules.yaml outgrew a manifest's budget: load_data_file allows MAX_DATA_NODES."""
    from generator.load.limits import MAX_DATA_NODES
    from generator.sglang.datafiles import load_data_file

    many = "rules:\n" + "".join(f"  - {{id: r{i}}}\n" for i in range(MAX_NODES // 2))
    assert _load(many)[0] is None  # a manifest that size is refused
    path = tmp_path / "rules.yaml"
    path.write_text(many, encoding="utf-8")
    assert load_data_file(path, {"rules": {"type": "list"}}, Diagnostics()) is not None
    path.write_text("x: &x [" + "1, " * 1000 + "]\nrules: [" + "*x, " * (MAX_DATA_NODES // 1000) + "]\n",
                    encoding="utf-8")
    diags = Diagnostics()
    assert load_data_file(path, {"rules": {"type": "list"}}, diags) is None
    assert [d.code for d in diags.items] == ["Y013"] and str(MAX_DATA_NODES) in diags.items[0].message


def test_a_huge_scalar_is_refused() -> None:
    doc, errors, _ = _load("k: " + "a" * (MAX_SCALAR_CHARS + 1) + "\n")
    assert errors == [f"m.yaml:1:4: error[Y010]: a value of {MAX_SCALAR_CHARS + 1} characters; at most "
                      f"{MAX_SCALAR_CHARS} are allowed"]


def test_a_second_document_is_refused() -> None:
    _, errors, _ = _load("a: 1\n---\nb: 2\n")
    assert errors == ["m.yaml:2:1: error[Y012]: a second YAML document ('---'): a manifest is one document"]


@pytest.mark.parametrize(("text", "shown"), [("a: !!python/object:os.system x\n", "!!python/object:os.system"),
                                             ("a: !!binary aGk=\n", "!!binary"), ("a: !foo {b: 1}\n", "!foo"),
                                             ("a: !!set {b}\n", "!!set"), ("a: !!timestamp 2020-01-01\n", "!!timestamp")])
def test_tags_outside_the_core_schema_are_refused(text: str, shown: str) -> None:
    _, errors, _ = _load(text)
    assert errors == [f"m.yaml:1:4: error[Y011]: YAML tag '{shown}' is not allowed: write plain values "
                      "(strings, numbers, true/false, lists, mappings)"]


def test_core_tags_are_allowed() -> None:
    doc, errors, _ = _load("a: !!str 1\nb: !!int '2'\n")
    assert errors == [] and doc.data == {"a": "1", "b": 2}


def test_a_5000_digit_integer_is_one_positioned_error() -> None:
    """It loads (generator/__init__ lets int() read as many digits as a value holds) and the
    check of every value refuses it at its position: never a ValueError of int()."""
    from generator.load.values import check_values

    doc, errors, _ = _load("a: 1\nb: " + "9" * 5000 + "\n")
    assert errors == [] and doc is not None
    diags = Diagnostics()
    assert not check_values(doc, diags)  # type: ignore[arg-type]
    assert [str(d) for d in diags.sorted()] == [
        "m.yaml:2:4: error[S011]: 'b': the integer with 5000 digits is out of range (at most 9223372036854775807)"]


def test_cap_keeps_the_first_findings_and_counts_the_rest() -> None:
    diags = Diagnostics()
    diags.error(Position("other.yaml", 1, 1), "S001", "kept: another file, recorded before")
    start = len(diags.items)
    for line in range(MAX_DIAGNOSTICS + 30, 0, -1):  # recorded out of order
        diags.error(Position("m.yaml", line, 1), "S001", f"unknown key at {line}")
    cap(diags, start, "m.yaml")
    shown = [str(d) for d in diags.sorted()]
    assert shown == [*(f"m.yaml:{n}:1: error[S001]: unknown key at {n}" for n in range(1, MAX_DIAGNOSTICS + 1)),
                     f"m.yaml:{MAX_DIAGNOSTICS + 1}:1: error[Y014]: and 30 more finding(s) in this file "
                     "from here on (30 error(s)), not shown",
                     "other.yaml:1:1: error[S001]: kept: another file, recorded before"]


def test_cap_leaves_a_short_report_alone() -> None:
    diags = Diagnostics()
    diags.warning(Position("m.yaml", 3, 1), "R010", "w")
    cap(diags, 0, "m.yaml")
    assert [d.code for d in diags.items] == ["R010"]
