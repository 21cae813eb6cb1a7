"""The fields a rule's predicate can pass, read from the predicate's own source.

A text of ``catalogs/rules.yaml`` names the fields it prints (``{algo}``, ``{list.known}``).
A name its predicate never passes printed as written (``{algo}`` in the message), so
rules.yaml is checked against gen's code when it is loaded (C019, rules/load.py). The
predicates are gen's code and rules.yaml is repository data a pull request can edit, so the
names come from the code, never from a list in the data file.

What a predicate can pass, over-approximated from its syntax (its function and every
function of the predicate modules it calls, transitively):

- the keywords of ``check(...)``, ``first_broken(...)``, ``every_broken(...)``, ``Hit(...)``
  and ``dict(...)``: the fields of its hits;
- the string keys of its dict literals (``Hit(blame, {"option": ...})`` and the
  ``(check, {fields})`` pairs its helpers return);
- the keywords of ``item(...)``: the fields of its items, which only the ``items:`` texts
  print (an item is formatted with its own fields, rules/message.py).

A function counts when the predicate calls it by name or reads a module table holding it.

An over-approximation lets a placeholder through that one path of the predicate does not
pass; tests/test_rule_fields.py renders every hit of the rule tables and differential cases
with a formatter that refuses a missing field, for the paths this syntax cannot tell apart.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

_PREDICATE_PACKAGE = "generator.sglang.rules"
_HIT_CALLS = frozenset({"check", "first_broken", "every_broken", "Hit", "Check", "dict"})
_ITEM_CALLS = frozenset({"item", "Item"})


@dataclass(frozen=True)
class Fields:
    """The field names a predicate can give its hits, and those it can give its items."""

    hit: frozenset[str]
    item: frozenset[str]


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


@functools.lru_cache(maxsize=None)
def _module_functions(filename: str) -> dict[str, ast.FunctionDef]:
    """The top-level functions of one module file, by name (each file parsed once: inspect's
    getsource per function tokenized the file again for each of ~150 functions, ~0.3 s)."""
    with open(filename, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename)
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _tree(fn: Callable[..., Any]) -> ast.AST | None:
    """The parsed source of one function (None for a lambda: only the functions it calls count)."""
    if fn.__name__ == "<lambda>":
        return None
    # gen installed without its .py files cannot check rules.yaml: the OSError is exit 4
    found = _module_functions(fn.__code__.co_filename).get(fn.__name__)
    if found is not None and found.lineno <= fn.__code__.co_firstlineno <= (found.end_lineno or found.lineno):
        return found
    return ast.parse(textwrap.dedent(inspect.getsource(fn)))  # not a top-level function of its file


def _functions_named(fn: Callable[..., Any], names: set[str]) -> Iterator[Callable[..., Any]]:
    """The functions of the predicate modules among ``names`` in ``fn``'s module: called, or held in
    a table it reads (moe's ``_A2A_CHECKS``: backend -> the function of its checks)."""
    scope = getattr(fn, "__globals__", {})
    for name in sorted(names):
        target = scope.get(name)
        values = target.values() if isinstance(target, dict) else target if isinstance(target, (list, tuple)) \
            else (target,)
        for value in values:
            if inspect.isfunction(value) and value.__module__.startswith(_PREDICATE_PACKAGE + ".predicates"):
                yield value


@functools.lru_cache(maxsize=None)
def _own(fn: Callable[..., Any]) -> tuple[frozenset[str], frozenset[str], tuple[Callable[..., Any], ...]]:
    """What ``fn``'s own syntax passes (hit fields, item fields) and the predicate functions it names
    (one walk of its tree)."""
    hit: set[str] = set()
    item: set[str] = set()
    tree = _tree(fn)
    names: set[str] = set(fn.__code__.co_names) if tree is None else set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            into = hit if name in _HIT_CALLS else item if name in _ITEM_CALLS else None
            if into is not None:
                into.update(k.arg for k in node.keywords if k.arg is not None)
        elif isinstance(node, ast.Dict):
            hit.update(k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return frozenset(hit), frozenset(item), tuple(dict.fromkeys(_functions_named(fn, names)))


@functools.lru_cache(maxsize=None)
def predicate_fields(fn: Callable[..., Any]) -> Fields:
    """Every field name ``fn`` (a predicate) and the predicate functions it calls can pass."""
    hit: set[str] = set()
    item: set[str] = set()
    seen: set[Callable[..., Any]] = set()
    todo = [fn]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        own_hit, own_item, callees = _own(current)
        hit |= own_hit
        item |= own_item
        todo.extend(callees)
    return Fields(frozenset(hit), frozenset(item))


def resolved_item_fields() -> frozenset[str]:
    """The fields of the items a ``{value.NAME}`` of rules/when.py's RESOLVED can print."""
    from generator.sglang.rules.when import RESOLVED  # when.py imports the predicates' common helpers

    return frozenset().union(*(predicate_fields(fn).item for fn in RESOLVED.values()))
