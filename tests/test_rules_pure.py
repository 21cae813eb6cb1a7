"""Predicates are pure functions of Settings: no I/O, no process state, the same answer every time.

The differential tests (gen against the real SGLang on a generated corpus) rest on it. Made
structural where it can be: Settings is frozen and hands out read-only mappings; the
predicate modules may import only the rule vocabulary and pure standard modules, and call
nothing that reads the world (checked on their syntax tree); and every rule answers the
same on the same settings, whatever ran before (checked on the rule tables).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from generator.sglang.catalog import load_catalog
from generator.sglang.rules import evaluate, load_rules, settings_from_argv
from rule_tables import all_rows

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted((ROOT / "generator" / "sglang" / "rules" / "predicates").glob("*.py")) + [
    ROOT / "generator" / "sglang" / "rules" / "when.py"]
# generator.load.json_text: json.loads that turns nesting too deep into a JSONDecodeError (pure, as json is);
# generator.sglang.patterns: a data file's regular expression compiled by RE2 (pure, as re is)
ALLOWED_IMPORTS = {"__future__", "json", "re", "math", "typing", "collections.abc", "dataclasses", "generator.errors",
                   "generator.sglang.argtypes", "generator.load.json_text", "generator.sglang.patterns"}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "compile", "__import__", "globals", "setattr"}


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_predicate_modules_read_nothing_but_settings(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            assert module in ALLOWED_IMPORTS or module.startswith("generator.sglang.rules."), (path.name, module)
        elif isinstance(node, ast.Import):
            assert all(a.name in ALLOWED_IMPORTS for a in node.names), (path.name, [a.name for a in node.names])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            pytest.fail(f"{path.name}:{node.lineno}: global state")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno}: {node.func.id}()"


def test_settings_are_read_only() -> None:
    s = settings_from_argv(load_catalog(ROOT, "0.5.23"), ["--tp-size", "2"], {"SGLANG_X": "1"})
    for mapping in (s.values, s.written, s.env):
        with pytest.raises(TypeError):
            mapping["tp_size"] = 4  # type: ignore[index]
    with pytest.raises(AttributeError):
        s.env = {}  # type: ignore[misc]


def test_every_rule_answers_the_same_twice_and_in_any_order() -> None:
    """Each table row evaluated forwards, backwards and again gives the same findings."""
    rows = all_rows()
    rules = load_rules(ROOT / "catalogs" / "rules.yaml")

    def answers(order: list[int]) -> dict[int, list[tuple[str, str, str]]]:
        out = {}
        for i in order:
            pin, argv, env, _ = rows[i]
            s = settings_from_argv(load_catalog(ROOT, pin), argv, env)
            out[i] = [(f.rule.code, f.message, f.fix) for f in evaluate(s, rules)]
        return out

    forwards = answers(list(range(len(rows))))
    assert answers(list(reversed(range(len(rows))))) == forwards == answers(list(range(len(rows))))
