"""Find every environment variable the SGLang package reads ad hoc, by AST (standard library only).

Reads through ``os.getenv``, ``os.environ[...]``, ``os.environ.get/setdefault``,
``NAME in os.environ`` and the ``get_bool_env_var``/``get_int_env_var``/``get_float_env_var``
helpers, anywhere under the package folder. Each literal name comes with the files that read
it and, when a helper reads it, the parse rule of the helper definition that call really runs
(SGLang has several: ``sglang/srt/utils/common.py`` accepts true/1/false/0 only, the one in
``multimodal_gen`` also yes/on/t/...). Piped with its companions (see ``envprobe.py``), so:
no ``from __future__`` import and no annotation Python 3.9 could not evaluate.
"""

import ast
import os
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

if "parse_rule" not in globals():  # run as a file: envsource.py lies beside this one
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from envsource import HELPERS, on_invalid, norm, parse_rule


class _Reads(ast.NodeVisitor):
    """Environment reads in one module: ``(name or None, reader, line, expr, helper_module)``.

    ``helper_module`` is where a ``get_*_env_var`` helper was imported from (None when the
    module defines it itself), so each call meets the definition it really runs.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.os_names: Set[str] = {"os"}
        self.environ_names: Set[str] = set()
        self.getenv_names: Set[str] = set()
        self.helper_from: Dict[str, str] = {}
        for node in ast.walk(tree):  # aliases first: an import may follow its use in the file
            if isinstance(node, ast.Import):
                self.os_names.update(a.asname or a.name for a in node.names if a.name == "os")
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if node.module == "os" and a.name in ("environ", "getenv"):
                        (self.environ_names if a.name == "environ" else self.getenv_names).add(a.asname or a.name)
                    elif a.name in HELPERS and node.module and not node.level:
                        self.helper_from[a.asname or a.name] = node.module
        self.defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in HELPERS}
        self.found: List[Tuple[Optional[str], str, int, str, Optional[str]]] = []
        self.visit(tree)

    def _environ(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "environ":
            return isinstance(node.value, ast.Name) and node.value.id in self.os_names
        return isinstance(node, ast.Name) and node.id in self.environ_names

    def _add(self, key: Optional[ast.expr], reader: str, node: ast.AST, module: Optional[str] = None) -> None:
        name = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        expr = "" if name else norm(ast.unparse(key) if key is not None else "")[:100]
        self.found.append((name, reader, node.lineno, expr, module))  # type: ignore[attr-defined]

    def visit_Call(self, node: ast.Call) -> None:
        """os.getenv(...), os.environ.get/setdefault(...), get_*_env_var(...)."""
        func = node.func
        key = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("key", "name")), None)
        if (isinstance(func, ast.Attribute) and func.attr == "getenv" and isinstance(func.value, ast.Name)
                and func.value.id in self.os_names) or (isinstance(func, ast.Name) and func.id in self.getenv_names):
            self._add(key, "os.getenv", node)
        elif isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault") and self._environ(func.value):
            self._add(key, f"os.environ.{func.attr}", node)
        elif isinstance(func, ast.Name) and (func.id in self.helper_from or func.id in self.defs):
            self._add(key, func.id, node, self.helper_from.get(func.id))
        elif isinstance(func, ast.Attribute) and func.attr in HELPERS:  # utils.get_bool_env_var(...)
            self._add(key, func.attr, node, ast.unparse(func.value))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        """os.environ[NAME] read (a store or del is not a read)."""
        if isinstance(node.ctx, ast.Load) and self._environ(node.value):
            self._add(node.slice, "os.environ[]", node)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        """NAME in os.environ / NAME not in os.environ."""
        if isinstance(node.ops[0], (ast.In, ast.NotIn)) and self._environ(node.comparators[0]):
            self._add(node.left, "in os.environ", node)
        self.generic_visit(node)


def _package_files(root: str) -> List[str]:
    found: List[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return found


def _resolve(name: str, module: Optional[str], rel: str, defs: Dict[str, Dict[str, Any]]) -> Optional[str]:
    """The ``file:function`` key of the helper definition a call runs, or None if unknown."""
    if module is None:
        return f"{rel}:{name}" if f"{rel}:{name}" in defs else None
    base = module.replace(".", "/")
    for key in (f"{base}.py:{name}", f"{base}/__init__.py:{name}"):
        if key in defs:
            return key
    # a package re-exporting it (sglang.srt.utils -> sglang/srt/utils/common.py)
    inside = sorted(k for k in defs if k.startswith(base + "/") and k.endswith(":" + name))
    return inside[0] if len(inside) == 1 else None


def _read_tree(path: str, rel: str) -> Optional[ast.Module]:
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        text = handle.read()
    if "environ" not in text and "getenv" not in text and "_env_var" not in text:
        return None  # cheap text filter: most files never touch the environment
    return ast.parse(text, filename=rel)


def scan_package(root: str, registry: Set[str]) -> Dict[str, Any]:
    """Every environment read in the package at ``root`` (the ``sglang`` folder), by AST.

    Returns ``vars`` (literal names: type, readers, files, helper rules used, in_registry),
    ``dynamic_sites`` (reads whose name is not a literal), ``helpers`` (the parse rule of
    every ``get_*_env_var`` definition, by ``file:function``) and ``unparsable`` files.
    """
    reads: List[Tuple[Any, ...]] = []
    defs: Dict[str, Dict[str, Any]] = {}
    unparsable: List[str] = []
    parent = os.path.dirname(root)
    for path in _package_files(root):
        rel = os.path.relpath(path, parent).replace(os.sep, "/")
        try:
            tree = _read_tree(path, rel)
        except SyntaxError:
            unparsable.append(rel)
            continue
        if tree is None:
            continue
        found = _Reads(tree)
        for fname, fn in found.defs.items():
            defs[f"{rel}:{fname}"] = {**parse_rule(fn), "type": HELPERS[fname]}
            defs[f"{rel}:{fname}"]["on_invalid"] = on_invalid(fn, defs[f"{rel}:{fname}"])
        reads.extend((rel, *r) for r in found.found)
    by_name: Dict[str, Dict[str, Any]] = {}
    dynamic = []
    for rel, name, reader, line, expr, module in reads:
        if name is None:
            dynamic.append({"file": rel, "line": line, "reader": reader, "expr": expr})
            continue
        entry = by_name.setdefault(name, {"readers": set(), "files": set(), "helpers": set()})
        entry["readers"].add(reader)
        entry["files"].add(rel)
        helper = _resolve(reader, module, rel, defs) if reader in HELPERS else None
        if helper:
            entry["helpers"].add(helper)
    return {"vars": [_var(name, e, registry, defs) for name, e in sorted(by_name.items())],
            "dynamic_sites": dynamic, "helpers": dict(sorted(defs.items())), "unparsable": unparsable}


def _var(name: str, entry: Dict[str, Any], registry: Set[str], defs: Dict[str, Any]) -> Dict[str, Any]:
    """One ad hoc variable: typed by its helper only when every read goes through one type."""
    # A typed helper's rule binds even when other sites read the raw string too.
    types = {defs[h]["type"] for h in entry["helpers"]}
    typed = len(types) == 1
    return {"name": name, "type": types.pop() if typed else "str", "readers": sorted(entry["readers"]),
            "helpers": sorted(entry["helpers"]), "files": sorted(entry["files"]), "in_registry": name in registry}
