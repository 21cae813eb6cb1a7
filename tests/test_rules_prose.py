"""No reviewer text in Python: predicates pass values and names, rules.yaml holds every word.

Structural, in two halves:
- the predicate modules build no text (no f-string, ``%``, ``.format``, ``.join`` or ``+`` on
  a string) and hold no string constant with a space in it outside their docstrings;
- every field a predicate puts in a Hit, on every rule-table row and differential word case
  of both pins, is a value: a number, a switch, None, a name or option string (no space), text
  the service itself holds (a value it wrote, an environment value), a list or mapping of
  those, or an item whose text is in the rule's ``items:``; the values SGLang resolves that
  ``{value.NAME}`` prints (rules/when.py) are values too.

And the names a reviewer reads are names: no check is called after the function that made
it (``rule-3``), no placeholder is a generated ``{v0}`` or a name with a trailing ``_``.
"""

from __future__ import annotations

import ast
import json
import re
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from differential_cases import all_cases
from generator.sglang.argtypes import Unparsed
from generator.errors import Diagnostics, Position
from generator.sglang.catalog import load_catalog
from generator.sglang.flags import Arg, check_args
from generator.sglang.rules import PREDICATES, Hit, Settings, load_rules, settings_from_argv, settings_from_words
from generator.sglang.rules.message import LIST_STYLES
from generator.sglang.rules.registry import Item
from generator.sglang.rules.spec import RuleSpec
from generator.sglang.rules.when import RESOLVED
from test_rules import TABLE

ROOT = Path(__file__).resolve().parent.parent
PREDICATE_DIR = ROOT / "generator" / "sglang" / "rules" / "predicates"
MODULES = sorted(PREDICATE_DIR.glob("*.py"))
RULES = load_rules(ROOT / "catalogs" / "rules.yaml")

def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module and its classes and functions."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def text_building(source: str) -> list[str]:
    """Where a predicate module builds or holds reviewer text: line and what."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.JoinedStr):
            found.append(f"{line}: an f-string")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_text(node.left):
            found.append(f"{line}: % formatting")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (_is_text(node.left)
                                                                               or _is_text(node.right)):
            found.append(f"{line}: + on a string")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("format", "format_map", "join"):
            found.append(f"{line}: .{node.func.attr}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and re.search(r"\s", node.value):
            found.append(f"{line}: text {node.value!r}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_predicate_modules_build_no_text(path: Path) -> None:
    found = text_building(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name} builds reviewer text in Python (put it in catalogs/rules.yaml): {found}"


@pytest.mark.parametrize(("source", "problem"), [
    ('x = f"{a} b"', "an f-string"), ('x = "%s" % a', "% formatting"), ('x = "--no-" + a', "+ on a string"),
    ('x = ", ".join(a)', ".join()"), ('x = "{a}".format(a=1)', ".format()"), ('x = "two words"', "text"),
])
def test_text_building_is_found(source: str, problem: str) -> None:
    assert any(problem in f for f in text_building(source))
    assert not text_building('"""A docstring may say anything."""\nx = ("fa3", "--tp-size")\n')


def _settings() -> Iterator[Settings]:
    """The settings of every rule-table row and differential word case, on each pin it names."""
    catalogs = {pin: load_catalog(ROOT, pin) for pin in ("0.5.9", "0.5.23")}
    for pin, argv, env, _ in TABLE:
        yield settings_from_argv(catalogs[pin], argv, env)
    for case in all_cases():
        for pin in case.pins:
            args = [Arg(f, tuple(v) if isinstance(v, list) else v, Position("case")) for f, v in case.flags]
            groups = check_args(catalogs[pin], args, Diagnostics())
            yield settings_from_words(catalogs[pin], [(g.action, g.words, g.pos) for g in groups], dict(case.env))


def _held_texts(value: Any) -> Iterator[str]:
    """The texts of one value: itself, the words of an unparsed value, each entry of a list, and as JSON."""
    if isinstance(value, str):
        yield value
        return
    if isinstance(value, Unparsed):
        yield from value.words
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _held_texts(v)
    yield json.dumps(value, default=str)


def _held(s: Settings) -> list[str]:
    """The texts the service holds: its values (as written, and as JSON) and environment values."""
    return [t for v in s.values.values() if v is not None for t in _held_texts(v)] + list(s.env.values())


def _not_values(value: Any, s: Settings, rule: RuleSpec, held: list[str]) -> Iterator[str]:
    """The parts of a field that are not values (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, float)):
        return
    if isinstance(value, str):
        if re.search(r"\s", value) and not any(value in h for h in held):
            yield value
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _not_values(v, s, rule, held)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _not_values(k, s, rule, held)
            yield from _not_values(v, s, rule, held)
    elif isinstance(value, Item):
        if value.name not in rule.items:
            yield f"item {value.name!r} (not in the rule's items:)"
        yield from (f"item field {name!r} hides a reader" for name in value.fields if name in _READERS)
        for v in value.fields.values():
            yield from _not_values(v, s, rule, held)
    else:
        yield f"a {type(value).__name__}"


# a field of one of these names would hide the reader of rules/message.py
_READERS = {"flag", "negated", "value", "env", "version", *LIST_STYLES}


def _hit_problems(hit: Hit, s: Settings, rule: RuleSpec, held: list[str]) -> Iterator[str]:
    if hit.check is not None and hit.check not in rule.checks:
        yield f"check {hit.check!r} (not in the rule's checks:)"
    yield from (f"field {name!r} hides a reader" for name in hit.fields if name in _READERS)
    for name, value in hit.fields.items():
        yield from (f"{name}={bad!r}" for bad in _not_values(value, s, rule, held))
    for sub in hit.every:
        yield from _hit_problems(sub, s, rule, held)


def _texts(rule: RuleSpec) -> list[str]:
    """Every text of ``rule``: message, fix, items and the checks' texts."""
    return [rule.message, rule.fix, *rule.items.values(), *(t for fields in rule.checks.values() for t in fields.values())]


# resolved value -> the rules whose texts print it ({value.NAME}); one that no rule prints is checked bare
_PRINTERS: dict[str, list[RuleSpec]] = {
    name: [r for r in RULES if any(f"{{value.{name}}}" in t for t in _texts(r))]
    or [RuleSpec("r", "X199", RULES[0].versions, RULES[0].severity, "none", "", "", "read")]
    for name in RESOLVED}


def test_predicates_pass_values_not_sentences() -> None:
    prose: dict[str, set[str]] = {}
    for s in _settings():
        held = _held(s)
        for rule in RULES:
            if rule.when is not None or not rule.versions.contains(s.version):
                continue
            hit = PREDICATES[rule.id](s, rule)
            if hit is not None:
                prose.setdefault(rule.id, set()).update(_hit_problems(hit, s, rule, held))
        for name, resolve in RESOLVED.items():
            for rule in _PRINTERS[name]:  # an item it resolves to is checked against each rule that prints it
                bad = list(_not_values(resolve(s), s, rule, held)) if rule.versions.contains(s.version) else []
                if bad:
                    prose.setdefault(f"RESOLVED {name}", set()).update(bad)
    found = {rid: sorted(problems)[:3] for rid, problems in prose.items() if problems}
    assert not found, found


_GENERATED_CHECK = re.compile(r"-\d+$")
_GENERATED_FIELD = re.compile(r"^v\d+$|_$")


def _placeholders(text: str) -> Iterator[str]:
    """Every dotted part of every placeholder of ``text`` (``{flag.tp_size}``: flag, tp_size)."""
    for _, field, _, _ in string.Formatter().parse(text):
        if field is not None:
            yield from field.split(".")


def numbered(rule: RuleSpec) -> list[str]:
    """The check names and placeholders of ``rule`` that a script numbered instead of naming."""
    bad = [f"check {name}" for name in rule.checks if _GENERATED_CHECK.search(name)]
    return bad + [f"{{{p}}}" for t in _texts(rule) for p in _placeholders(t) if _GENERATED_FIELD.search(p)]


def test_names_are_names() -> None:
    """Checks, items and placeholders are named after what they mean, not numbered by a script."""
    found = {rule.id: numbered(rule)[:4] for rule in RULES if numbered(rule)}
    assert not found, found


def test_numbered_names_are_found() -> None:
    rule = RuleSpec("r", "X199", RULES[0].versions, RULES[0].severity, "none", "{v0}", "{name_}", "read",
                    checks={"r-1": {"detail": "{flag.tp_size}"}})
    assert numbered(rule) == ["check r-1", "{v0}", "{name_}"]
