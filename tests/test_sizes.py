"""No module of gen over 600 lines, no function over 80.

The module cap is a backstop, not where modules split: a module holds one topic, and a
topic that outgrows 600 lines is two. Counted with the ast: a function runs from its ``def`` line to its last line (decorators
not counted). Nothing is exempt: every module and function over a limit fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE_LINES = 600
FUNCTION_LINES = 80


def _sizes() -> tuple[dict[str, int], dict[str, int]]:
    modules: dict[str, int] = {}
    functions: dict[str, int] = {}
    for path in sorted((ROOT / "generator").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        modules[rel] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                functions[f"{rel}:{node.name}"] = node.end_lineno - node.lineno + 1
    return modules, functions


def test_no_module_over_600_lines() -> None:
    modules, _ = _sizes()
    assert len(modules) > 40
    over = {m: n for m, n in modules.items() if n > MODULE_LINES}
    assert not over, f"modules over {MODULE_LINES} lines: {over}"


def test_no_function_over_80_lines() -> None:
    modules, functions = _sizes()
    assert functions["generator/plan/placement.py:place_host"] <= FUNCTION_LINES
    assert functions["generator/importer/build.py:build_manifest"] <= FUNCTION_LINES
    over = {f: n for f, n in functions.items() if n > FUNCTION_LINES}
    assert not over, f"functions over {FUNCTION_LINES} lines: {over}"
