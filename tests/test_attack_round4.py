"""Attacks of round 4 (issue 22's fresh attack on main's new surfaces), each with the class it stands for.

- Digits: Python's int() refuses more than 4,300 decimal digits (a ValueError); a CPU list or
  an IPv4 part of 5,000 digits stopped `gen check` with an internal error. The class: every
  value any manifest field holds, as long digit text (generator/__init__.py raises the limit
  to the bound on every value; messages quote a long value cut, load/values.shown).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import generator
from generator.load.limits import MAX_SCALAR_CHARS
from generator.pipeline.fleet import run

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ["9" * 5000, "0-" + "9" * 5000, "1." + "9" * 5000 + ".3.4", "0." + "9" * 5000]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))
    else:
        yield path


def _set(node: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def test_the_int_digit_limit_is_the_value_bound() -> None:
    import sys

    assert generator.INT_DIGITS_MOST == MAX_SCALAR_CHARS
    assert sys.get_int_max_str_digits() in (0, MAX_SCALAR_CHARS) or sys.get_int_max_str_digits() > MAX_SCALAR_CHARS
    start = time.process_time()
    assert int("9" * MAX_SCALAR_CHARS) > 0  # the largest digit text a value can hold: no ValueError
    assert time.process_time() - start < 1.0


@pytest.mark.parametrize("relpath", ["hosts/llm-two-full.yaml", "models/qwen3.5-122b-a10b.yaml"])
def test_every_field_as_long_digits_is_a_finding_never_a_crash(tmp_path: Path, relpath: str) -> None:
    """Each scalar of a real example, in turn, as each of DIGITS: diagnostics, never an exception."""
    repo = tmp_path / "repo"
    for part in ("models", "hosts", "templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    yaml = YAML(typ="safe")
    original = yaml.load((ROOT / relpath).read_text(encoding="utf-8"))
    paths = list(_leaves(original))
    assert len(paths) > 15
    for path in paths:
        for digits in DIGITS:
            data = yaml.load((ROOT / relpath).read_text(encoding="utf-8"))
            _set(data, path, digits)
            with (repo / relpath).open("w", encoding="utf-8") as handle:
                yaml.dump(data, handle)
            result = run(repo, None)  # an exception here is the bug
            long = [str(d)[:80] for d in result.diagnostics if len(str(d)) > 2000]
            assert not long, (path, long)
