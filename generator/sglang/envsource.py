"""Read SGLang's environment-variable surface from its source, by AST (standard library only).

The pure-source half of the environment probe (``envprobe.py`` is the half that imports
SGLang): the typed registry of ``sglang/srt/environ.py``, its deprecation tables, the parse
rules of every EnvField class and of the ad hoc ``get_*_env_var`` helpers, and every literal
variable name read through ``os.getenv`` / ``os.environ`` anywhere in the package. It needs
no SGLang install, only its source tree, so it also reads unpacked wheels of old releases.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Any

ENV_NAME = re.compile(r"^(SGLANG|SGL)_[A-Z0-9_]+$")
_FLAG = re.compile(r"--[a-z0-9][a-z0-9-]*(?:[= ][A-Za-z0-9_.]+)?")
TYPE_OF_BASE = {"EnvBool": "bool", "EnvInt": "int", "EnvFloat": "float",
                 "EnvStr": "str", "EnvTuple": "tuple", "EnvJSON": "json"}
HELPERS = {"get_bool_env_var": "bool", "get_int_env_var": "int", "get_float_env_var": "float"}


def norm(text: str) -> str:
    """``text`` with every run of whitespace made one space."""
    return " ".join(text.split())


def json_value(value: Any) -> Any:
    """A registry default as JSON: plain values; callables and others by stable name."""
    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return int(value)  # an IntEnum default (ToolStrictLevel.OFF) is what EnvInt yields
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if callable(value):
        return {"callable": f"{value.__module__}.{value.__qualname__}"}
    return {"repr": re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))}


def field_type(mro_names: list[str]) -> str:
    """bool/int/float/str/tuple/json for an EnvField class, from its class names in MRO order."""
    for name in mro_names:
        if name in TYPE_OF_BASE:
            return TYPE_OF_BASE[name]
    return "other"


def _class_bases(tree: ast.Module) -> dict[str, list[str]]:
    return {n.name: [ast.unparse(b) for b in n.bases] for n in tree.body if isinstance(n, ast.ClassDef)}


def _mro(name: str, bases: dict[str, list[str]]) -> list[str]:
    order, todo = [], [name]
    while todo:
        cur = todo.pop(0)
        if cur not in order:
            order.append(cur)
            todo.extend(bases.get(cur, []))
    return order


_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.Pow: lambda a, b: a ** b, ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b}


def _arith(node: ast.expr) -> Any:
    """Literal arithmetic (``384 * 1024 * 1024``, ``2**31``) and ``tuple()``; no eval, no names."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return _ARITH[type(node.op)](_arith(node.left), _arith(node.right))
    if isinstance(node, ast.Call) and ast.unparse(node) == "tuple()":
        return ()
    return ast.literal_eval(node)


def _ast_default(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return json_value(_arith(node))
    except (ValueError, TypeError, SyntaxError):  # a name: ToolStrictLevel.OFF, _default_hip, a lambda
        return {"expr": ast.unparse(node)}


def registry_from_ast(tree: ast.Module) -> list[dict[str, Any]]:
    """The registry read from ``environ.py``'s AST; non-literal defaults kept as ``{"expr"}``."""
    bases = _class_bases(tree)
    envs = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Envs")
    fields = []
    for stmt in envs.body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and len(stmt.targets) == 1):
            continue
        cls = stmt.value.func.id
        if "EnvField" not in _mro(cls, bases):
            continue
        kw = {k.arg: k.value for k in stmt.value.keywords}
        alias = kw.get("deprecated_name")
        secret = kw.get("secret")
        fields.append({
            "name": ast.unparse(stmt.targets[0]), "class": cls, "type": field_type(_mro(cls, bases)),
            "default": _ast_default(stmt.value.args[0] if stmt.value.args else kw.get("default")),
            "secret": bool(secret is not None and ast.literal_eval(secret)),
            "deprecated_name": ast.literal_eval(alias) if alias is not None else None,
        })
    return sorted(fields, key=lambda f: f["name"])


def _str_args(call: ast.Call) -> list[str | None]:
    return [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in call.args]


def _flag_in(text: str | None) -> str | None:
    found = _FLAG.search(text or "")
    return found.group(0) if found else None


def _deprecated_env_entry(old: str, call: ast.Call, line: int) -> dict[str, Any]:
    kw = {k.arg: k.value for k in call.keywords}
    note = ast.literal_eval(kw["note"]) if "note" in kw else None
    repl = ast.literal_eval(kw["replacement"]) if "replacement" in kw else None
    return {"name": old, "kind": "renamed" if repl else ("to_flag" if _flag_in(note) else "removed"),
            "replacement": repl, "replacement_flag": _flag_in(note), "message": note,
            "transform": ast.unparse(kw["transform"]) if "transform" in kw else None,
            "via": "_DEPRECATED_ENVS", "line": line}


def deprecations_from_ast(tree: ast.Module) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """SGLang's deprecated variables and prefix rules, from the calls and tables in environ.py.

    Known shapes: ``_print_deprecated_env(new, old)`` and ``_warn_deprecated_env_to_cli_flag
    (name, text)`` calls and the ``_deprecated_ms_to_s`` table (0.5.9); the
    ``_DEPRECATED_ENVS`` dict of ``_DeprecatedEnv(...)`` (0.5.23); ``key.replace("SGL_",
    "SGLANG_", 1)`` under an ``if`` (both).
    """
    entries: list[dict[str, Any]] = []
    prefixes: list[dict[str, Any]] = []
    # _print_deprecated_env(new_name, old_name) in 0.5.9, (old_name, new_name=None) in 0.5.15:
    # which argument is which comes from its own def.
    printer = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_print_deprecated_env"), None)
    params = [a.arg for a in printer.args.args] if printer else ["new_name", "old_name"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = _str_args(node)
            named = dict(zip(params, args))  # noqa: B905  (runs in the host's SGLang venv: any Python 3)
            old, new = named.get("old_name"), named.get("new_name")
            if node.func.id == "_print_deprecated_env" and old:
                entries.append({"name": old, "kind": "renamed" if new else "removed", "replacement": new,
                                "replacement_flag": None, "message": None, "transform": None,
                                "via": node.func.id, "line": node.lineno})
            elif node.func.id == "_warn_deprecated_env_to_cli_flag" and args and args[0]:
                text = ast.literal_eval(node.args[1]) if len(node.args) > 1 else None
                entries.append({"name": args[0], "kind": "to_flag", "replacement": None,
                                "replacement_flag": _flag_in(text), "message": text,
                                "transform": None, "via": node.func.id, "line": node.lineno})
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            table = ast.unparse(target)
            for key, value in zip(node.value.keys, node.value.values):  # noqa: B905  (as above)
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    continue
                if isinstance(value, ast.Call) and ast.unparse(value.func) == "_DeprecatedEnv":
                    entries.append(_deprecated_env_entry(key.value, value, key.lineno))
                elif isinstance(value, ast.Constant) and ENV_NAME.fullmatch(str(value.value)):
                    entries.append({"name": key.value, "kind": "renamed", "replacement": value.value,
                                    "replacement_flag": None, "message": None, "transform": table,
                                    "via": table, "line": key.lineno})
        elif isinstance(node, ast.If):
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                        and sub.func.attr == "replace" and len(sub.args) >= 2 and all(_str_args(sub)[:2])):
                    old, new = _str_args(sub)[:2]
                    prefixes.append({"from": old, "to": new, "condition": norm(ast.unparse(node.test)),
                                     "line": node.lineno})
    entries.sort(key=lambda e: (e["name"], e["via"], e["line"]))
    return entries, sorted(prefixes, key=lambda p: p["line"])


def _if_returns(stmt: ast.If) -> tuple[list[str], Any] | None:
    test = stmt.test
    if (isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.In)
            and isinstance(test.comparators[0], (ast.List, ast.Tuple))
            and stmt.body and isinstance(stmt.body[0], ast.Return)
            and isinstance(stmt.body[0].value, ast.Constant)):
        return [ast.literal_eval(e) for e in test.comparators[0].elts], stmt.body[0].value.value
    return None


def parse_rule(func: ast.FunctionDef) -> dict[str, Any]:
    """The parse rule one function applies: case folding, accepted strings, converter, raises."""
    rule: dict[str, Any] = {"case_insensitive": False, "strip": False, "true": None, "false": None,
                            "converter": None, "raises": None, "source": norm(ast.unparse(func))}
    named: dict[str, list[str]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "strip"):
            rule["case_insensitive" if node.func.attr == "lower" else "strip"] = True
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("int", "float", "json.loads"):
            rule["converter"] = rule["converter"] or ast.unparse(node.func)
        if isinstance(node, ast.Raise) and node.exc is not None:
            rule["raises"] = ast.unparse(node.exc.func if isinstance(node.exc, ast.Call) else node.exc)
        if isinstance(node, ast.If) and _if_returns(node):
            values, result = _if_returns(node)  # type: ignore[misc]
            rule["true" if result is True else "false"] = values
        if (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List, ast.Set))
                and all(isinstance(e, ast.Constant) for e in node.value.elts)):
            values = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]  # a set literal: sorted, for stable output
            named[ast.unparse(node.targets[0])] = sorted(values) if isinstance(node.value, ast.Set) else values
    for var, values in named.items():  # get_bool_env_var: truthy_values / falsy_values
        if "truthy" in var:
            rule["true"] = values
        elif "falsy" in var:
            rule["false"] = values
    return rule


def on_invalid(fn: ast.FunctionDef | None, rule: dict[str, Any]) -> str:
    """What a bad value leads to, from the AST of the reading function.

    ``warn_default``: ValueError caught, ``warnings.warn``, default used (EnvField.get);
    ``default``: ValueError caught silently; ``false``: a boolean helper that neither raises
    nor catches (anything not truthy reads as false); ``raise`` otherwise.
    """
    for node in ast.walk(fn) if fn else []:
        if isinstance(node, ast.ExceptHandler) and node.type is not None and "ValueError" in ast.unparse(node.type):
            warns = any(isinstance(n, ast.Call) and ast.unparse(n.func) == "warnings.warn" for n in ast.walk(node))
            return "warn_default" if warns else "default"
    if rule.get("true") and not rule.get("raises"):
        return "false"
    return "raise"


def parse_rules(environ_tree: ast.Module) -> dict[str, Any]:
    """Parse rules of every EnvField class in environ.py (``on_invalid`` from its ``get``)."""
    bases = _class_bases(environ_tree)
    rules: dict[str, Any] = {}
    get_of: dict[str, ast.FunctionDef] = {}
    for cls in (n for n in environ_tree.body if isinstance(n, ast.ClassDef)):
        for fn in (f for f in cls.body if isinstance(f, ast.FunctionDef)):
            if fn.name == "parse" and "EnvField" in _mro(cls.name, bases):
                rules[cls.name] = parse_rule(fn)
            if fn.name == "get":
                get_of[cls.name] = fn
    for name in rules:
        getter = next((get_of[c] for c in _mro(name, bases) if c in get_of), None)
        # Any ValueError from parse (also json.loads's) meets the getter's handler.
        rules[name]["on_invalid"] = on_invalid(getter, {})
    return dict(sorted(rules.items()))


def unclassified(tree: ast.Module, known: set[str]) -> list[dict[str, Any]]:
    """SGLANG_/SGL_ names in environ.py that neither the registry nor a table accounts for.

    Non-empty means SGLang added a deprecation shape this probe does not read yet.
    """
    out = [{"name": n.value, "line": n.lineno} for n in ast.walk(tree)
           if isinstance(n, ast.Constant) and isinstance(n.value, str) and ENV_NAME.fullmatch(n.value)
           and n.value not in known]
    return sorted(out, key=lambda e: (e["name"], e["line"]))


def parse_file(path: str) -> ast.Module | None:
    """The AST of ``path``, or None when the file does not exist."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), filename=path)




def tree_version(root: str) -> str | None:
    """A literal ``__version__`` in ``sglang/version.py`` or the generated ``_version.py``, by AST."""
    for name in ("version.py", "_version.py"):
        tree = parse_file(os.path.join(root, name))
        for node in tree.body if tree else []:
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                    and any(ast.unparse(t) == "__version__" for t in node.targets)):
                return str(node.value.value)
    return None


def read_source(root: str) -> dict[str, Any]:
    """Everything the source of the package folder ``root`` says about the environment.

    Raises FileNotFoundError when the release has no ``srt/environ.py`` (before the typed
    registry existed); the caller then has only the ad hoc scan (``scan_package``).
    """
    tree = parse_file(os.path.join(root, "srt", "environ.py"))
    if tree is None:
        raise FileNotFoundError(f"{root}/srt/environ.py (this SGLang has no typed registry)")
    deprecated, prefixes = deprecations_from_ast(tree)
    return {"tree": tree, "fields": registry_from_ast(tree), "deprecated": deprecated,
            "prefix_renames": prefixes, "parse_rules": parse_rules(tree)}
