"""Inventory of every check SGLang's ServerArgs makes on its arguments, by AST (stdlib only).

Given a release's ``sglang/srt/server_args.py``, it lists each ``assert`` and ``raise`` in the
validation paths: ``ServerArgs.__post_init__``, ``check_server_args``, ``resolve_once``,
``from_cli_args`` and every ``_handle_*`` method, plus every function of that file they reach
by name (``self.method()``, module functions). When the tree has ``sglang/srt/arg_groups/`` (0.5.23), every function there is in
scope as well, marked whether the roots reach it by name (hooks registered through tables or
decorators are not followed, so ``reached: false`` does not mean dead code).

Each check has a stable id: ``<module>:<qualname> | <condition>``. For an assert the
condition is its test (what must hold); for a raise, the enclosing if-conditions joined
with ``and`` (``not (...)`` for an else branch, ``except T`` inside a handler), ``<always>``
when none. Conditions are ``ast.unparse`` output, whitespace-normalized, so a reformatting
of SGLang's source keeps every id; a repeated id in one function gets ``#2``, ``#3``.

    python3 checks_inventory.py SITE/sglang/srt/server_args.py [--json OUT]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from dataclasses import dataclass, field
from typing import Any

ROOT_METHODS = ("__post_init__", "check_server_args", "resolve_once", "from_cli_args")


@dataclass
class Func:
    """One function of the tree: where it is, its node, and what it refers to by name."""

    module: str
    qualname: str
    cls: str | None
    node: ast.FunctionDef | ast.AsyncFunctionDef
    file: str
    refs: set[tuple[str, str]] = field(default_factory=set)


def norm(text: str) -> str:
    """Whitespace-normalized text."""
    return " ".join(text.split())


def _module_of(path: str, sglang_parent: str) -> str:
    rel = os.path.relpath(path, sglang_parent)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _imports(body: list[ast.stmt]) -> dict[str, tuple[str, str]]:
    """``from M import n as a`` anywhere in ``body`` (function-level too): alias -> (M, n)."""
    out: dict[str, tuple[str, str]] = {}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    out[a.asname or a.name] = (node.module, a.name)
    return out


def index_file(path: str, sglang_parent: str) -> dict[tuple[str, str], Func]:
    """Every function and method of one file, with the names each refers to resolved."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    module = _module_of(path, sglang_parent)
    file_imports = _imports(tree.body)
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    funcs: dict[tuple[str, str], Func] = {}

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str, cls: str | None) -> None:
        """Index one function with the names it refers to."""
        f = Func(module, qual, cls, node, os.path.relpath(path, sglang_parent))
        local = {**file_imports, **_imports(node.body)}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                if sub.id in top:
                    f.refs.add((module, sub.id))
                elif sub.id in local:
                    f.refs.add(local[sub.id])
            elif (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name)
                  and sub.value.id in ("self", "cls") and cls):
                f.refs.add((module, f"{cls}.{sub.attr}"))
        funcs[(module, qual)] = f

    def walk(body: list[ast.stmt], prefix: str, cls: str | None) -> None:
        """Every def in ``body``, methods and nested defs by qualified name."""
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                add(stmt, prefix + stmt.name, cls)
                walk(stmt.body, f"{prefix}{stmt.name}.", cls)  # nested helpers count as their own
            elif isinstance(stmt, ast.ClassDef):
                walk(stmt.body, f"{prefix}{stmt.name}.", stmt.name)

    walk(tree.body, "", None)
    return funcs


def _and(conds: list[ast.expr]) -> str:
    if not conds:
        return "<always>"
    expr = conds[0] if len(conds) == 1 else ast.BoolOp(op=ast.And(), values=conds)
    return norm(ast.unparse(expr))


def _exc_name(node: ast.Raise) -> str:
    exc = node.exc
    if exc is None:
        return "<re-raise>"
    return ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)


def checks_in(func: Func) -> list[dict[str, Any]]:
    """Every assert/raise directly in ``func`` (not in nested functions), in source order."""
    found: list[dict[str, Any]] = []
    where = f"{func.module.removeprefix('sglang.srt.')}:{func.qualname}"

    def emit(kind: str, cond: str, exc: str, msg: ast.expr | None, line: int) -> None:
        """Record one check."""
        found.append({"where": where, "kind": kind, "condition": cond, "exception": exc,
                      "message": norm(ast.unparse(msg)) if msg is not None else None,
                      "file": func.file, "line": line})

    def visit(stmts: list[ast.stmt], conds: list[ast.expr]) -> None:
        """Walk statements, carrying the conditions that guard them."""
        for s in stmts:
            if isinstance(s, ast.Assert):
                emit("assert", _and([s.test]), "AssertionError", s.msg, s.lineno)
            elif isinstance(s, ast.Raise):
                msg = s.exc.args[0] if isinstance(s.exc, ast.Call) and s.exc.args else None
                emit("raise", _and(conds), _exc_name(s), msg, s.lineno)
            elif isinstance(s, ast.If):
                visit(s.body, conds + [s.test])
                visit(s.orelse, conds + [ast.UnaryOp(op=ast.Not(), operand=s.test)])
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                visit(s.body + s.orelse + s.finalbody, conds)  # type: ignore[attr-defined]
                for h in s.handlers:  # type: ignore[attr-defined]
                    label = ast.Name(id=f"except {ast.unparse(h.type) if h.type else 'BaseException'}")
                    visit(h.body, conds + [label])
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                visit(s.body + getattr(s, "orelse", []), conds)
            elif isinstance(s, ast.Match):
                for case in s.cases:
                    visit(case.body, conds + [ast.Name(id=f"case {ast.unparse(case.pattern)}")])
            # nested FunctionDef/ClassDef: their own Func entries carry their checks

    visit(func.node.body, [])
    return found


def _tree_files(server_args: str) -> tuple[str, list[str]]:
    """The package's parent folder, and every .py under ``arg_groups/`` beside server_args.py."""
    srt = os.path.dirname(os.path.abspath(server_args))
    parent = os.path.dirname(os.path.dirname(srt))
    groups: list[str] = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(srt, "arg_groups")):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        groups.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py"))
    return parent, groups


def _reach(funcs: dict[tuple[str, str], Func], roots: list[tuple[str, str]]) -> set[tuple[str, str]]:
    seen, todo = set(), list(roots)
    while todo:
        key = todo.pop()
        if key in seen or key not in funcs:
            continue
        seen.add(key)
        todo.extend(funcs[key].refs)
    return seen


def inventory(server_args: str) -> dict[str, Any]:
    """The checks of ``server_args.py`` and (when present) ``arg_groups/**`` beside it.

    Calls are followed only inside those files: what they call elsewhere in SGLang
    (device probes, model-config loading) is not argument validation.
    """
    parent, groups = _tree_files(server_args)
    sa_module = _module_of(os.path.abspath(server_args), parent)
    funcs: dict[tuple[str, str], Func] = {}
    for path in [os.path.abspath(server_args), *groups]:
        funcs.update(index_file(path, parent))
    roots = [(sa_module, f"ServerArgs.{m}") for m in ROOT_METHODS]
    roots += [k for k in funcs if k[0] == sa_module and k[1].startswith("ServerArgs._handle_")]
    reached = _reach(funcs, roots)
    group_modules = {_module_of(p, parent) for p in groups}
    scope = sorted(reached | {k for k in funcs if k[0] in group_modules})
    checks: list[dict[str, Any]] = []
    for key in scope:
        seen: dict[str, int] = {}
        for c in checks_in(funcs[key]):
            base = f"{c['where']} | {c['condition']}"
            seen[base] = seen.get(base, 0) + 1
            c["id"] = base if seen[base] == 1 else f"{base} #{seen[base]}"
            c["reached"] = key in reached
            checks.append(c)
    checks.sort(key=lambda c: c["id"])
    return {"server_args": os.path.relpath(os.path.abspath(server_args), parent),
            "roots": sorted(q for m, q in roots if (m, q) in funcs), "checks": checks,
            "counts": counts(checks)}


def counts(checks: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals: all, asserts, raises, reached by name from the roots, per file."""
    per_file: dict[str, int] = {}
    for c in checks:
        per_file[c["file"]] = per_file.get(c["file"], 0) + 1
    return {"checks": len(checks), "asserts": sum(c["kind"] == "assert" for c in checks),
            "raises": sum(c["kind"] == "raise" for c in checks),
            "reached": sum(c["reached"] for c in checks),
            "unique_ids": len({c["id"] for c in checks}), "per_file": dict(sorted(per_file.items()))}


TOOL = "generator/sglang/checks_inventory.py"


def main(argv: list[str] | None = None) -> int:
    """Print the counts of one or more trees; write the full inventory with ``--json``."""
    cli = argparse.ArgumentParser(prog="checks_inventory", description=__doc__.splitlines()[0])
    cli.add_argument("server_args", nargs="+", help="path of sglang/srt/server_args.py in an installed tree")
    cli.add_argument("--json", help="write the inventory (one server_args: the document; more: a list)")
    args = cli.parse_args(argv)
    docs = []
    for path in args.server_args:
        if not os.path.isfile(path):
            print(f"{path}: error: no such file", file=sys.stderr)
            return 2
        doc = inventory(path)
        docs.append(doc)
        n = doc["counts"]
        print(f"{path}: {n['checks']} checks ({n['asserts']} assert, {n['raises']} raise), "
              f"{n['reached']} reached by name from {len(doc['roots'])} roots, {len(n['per_file'])} files")
    if args.json:
        if len(docs) != 1:
            print("--json takes one server_args.py: the file is one pin's inventory", file=sys.stderr)
            return 2
        from generator.load.captured import captured_json  # the file's capture digest (gen installed)

        text = captured_json(docs[0], TOOL)
        tmp = args.json + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
