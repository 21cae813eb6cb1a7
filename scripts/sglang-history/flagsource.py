"""Read a SGLang release's CLI flags from the AST of its source (standard library only).

Three shapes exist across releases, all read here:

- ``parser.add_argument("--x", ...)`` calls (every release; the whole CLI up to 0.5.13,
  later only dynamic choices, ``--config`` and deprecated flags);
- dataclass/Struct fields annotated ``A[T, "help"]`` or ``A[T, Arg(...)]`` turned into
  flags by ``add_cli_args_from_dataclass`` (0.5.14+: in ``ServerArgs``; 0.5.19+: also the
  namespace classes of ``sglang/srt/arg_groups/fields/``), following that function's rules:
  ``--`` + field name with dashes (or ``cli_name``), ``aliases``, dest = field name,
  ``bool`` -> store_true, ``Literal[...]`` -> choices, ``List[X]`` -> nargs ``+``,
  ``no_cli`` skipped.

What the AST cannot know is left out or marked: choices built at import time (registries,
``["auto"] + parsers``) are ``None`` with ``choices_expr`` holding the source; a help built
from an f-string keeps ``{...}`` placeholders; a default that is not a literal is omitted.
Output entries use the keys of gen's flag catalog (``catalogs/README.md``) where they exist.
"""

from __future__ import annotations

import ast
import re
from typing import Any

_ARGPARSE_ACTIONS = {"store_true": "store_true", "store_false": "store_false", "store_const": "store_const",
                     "append": "append", "append_const": "append_const", "count": "count",
                     "help": "help", "version": "version", "store": "store"}
_PLAIN = {"int", "float", "str", "bool"}
# argparse's own default when add_argument gets none (help: argparse.SUPPRESS).
_IMPLICIT_DEFAULT = {"store": None, "store_true": False, "store_false": True, "store_const": None,
                     "append": None, "append_const": None, "count": None, "boolean_optional": None,
                     "help": "==SUPPRESS=="}
# SGLang's deprecated actions that take no value (DeprecatedAction defaults nargs=0).
_ZERO_ARG_DEPRECATED = {"DeprecatedAction", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction"}
_ZERO_ARGS = {"store_true", "store_false", "store_const", "append_const", "count", "help", "version",
              "boolean_optional"}
_LEADING_DEPRECATED = re.compile(r"^\W*deprecated\b", re.IGNORECASE)


def _literal(node: ast.expr | None, names: dict[str, ast.expr], depth: int = 0) -> Any:
    """A literal value: constants, containers, ``+`` of lists/strings, module-level names."""
    if node is None or depth > 5:
        raise ValueError("not literal")
    if isinstance(node, ast.Name) and node.id in names:
        return _literal(names[node.id], names, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, names, depth + 1) + _literal(node.right, names, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(e, names, depth + 1) for e in node.elts]
    return ast.literal_eval(node)


def _text(node: ast.expr | None, names: dict[str, ast.expr]) -> str | None:
    """A help string; f-string parts that are not literal become ``{expr}`` placeholders."""
    if node is None:
        return None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, names), _text(node.right, names)
        return None if left is None or right is None else left + right
    try:
        value = _literal(node, names)
    except (ValueError, TypeError, SyntaxError):
        return "{" + ast.unparse(node) + "}"
    return value if isinstance(value, str) else None


def module_names(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = <expr>`` assignments (the last one wins, as at import)."""
    names: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            names[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            names[stmt.target.id] = stmt.value
    return names


def _kind(action: ast.expr | None) -> str:
    if action is None:
        return "store"
    if isinstance(action, ast.Constant) and action.value in _ARGPARSE_ACTIONS:
        return _ARGPARSE_ACTIONS[action.value]
    name = ast.unparse(action).split(".")[-1]
    if name.startswith("Deprecated") and name.endswith("Action"):
        return "deprecated"
    if name == "BooleanOptionalAction":
        return "boolean_optional"
    return f"other:{name}"


def _type(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if text in _PLAIN else f"callable:{text}"


def _dest(options: list[str]) -> str:
    longs = [o for o in options if o.startswith("--")]
    return (longs or options)[0].lstrip("-").replace("-", "_")


def _canonical(options: list[str]) -> str:
    longs = [o for o in options if o.startswith("--")]
    return (longs or options)[0]


def deprecation(entry: dict[str, Any], new_flag: str | None, error: str | None) -> dict[str, Any] | None:
    """The ``deprecated`` block the probe would record: by action class, or by help text."""
    help_text = entry.get("help") or ""
    by_text = _LEADING_DEPRECATED.search(help_text) or any(
        re.search(re.escape(o) + r"\b[^.]*\bis deprecated\b", help_text, re.IGNORECASE)
        for o in entry["option_strings"])
    if entry["kind"] != "deprecated" and not by_text:
        return None
    message = error or help_text or (f"Use {new_flag} instead." if new_flag else f"{entry['canonical']} is deprecated.")
    return {"message": message, "new_flag": new_flag, "fatal": bool(error)}


def _entry(options: list[str], kw: dict[str, ast.expr], names: dict[str, ast.expr],
           defaults: dict[str, Any]) -> dict[str, Any]:
    """One flag from add_argument keywords (or the equivalent derived from a field)."""
    entry: dict[str, Any] = {"option_strings": options, "canonical": _canonical(options),
                             "kind": _kind(kw.get("action")), "type": _type(kw.get("type")),
                             "help": _text(kw.get("help"), names), "nargs": None, "choices": None}
    entry["dest"] = _literal(kw["dest"], names) if "dest" in kw else _dest(options)
    action_name = ast.unparse(kw["action"]).split(".")[-1] if "action" in kw else ""
    if entry["kind"] in _ZERO_ARGS or action_name in _ZERO_ARG_DEPRECATED:
        entry["nargs"] = 0  # argparse's own nargs for these actions (and SGLang's DeprecatedAction)
    if entry["kind"] == "boolean_optional":  # argparse adds --no-X for every --X
        entry["option_strings"] = [o for s in options for o in ([s, "--no-" + s[2:]] if s.startswith("--") else [s])]
    if "nargs" in kw:
        try:
            entry["nargs"] = _literal(kw["nargs"], names)
        except (ValueError, TypeError, SyntaxError):
            entry["nargs"] = ast.unparse(kw["nargs"])
    if "choices" in kw:
        try:
            entry["choices"] = _literal(kw["choices"], names)
        except (ValueError, TypeError, SyntaxError):
            entry["choices_expr"] = ast.unparse(kw["choices"])
    if "default" not in kw and entry["kind"] in _IMPLICIT_DEFAULT:
        entry["default"] = _IMPLICIT_DEFAULT[entry["kind"]]  # what argparse itself stores
    if "default" in kw:
        default = kw["default"]
        ref = ast.unparse(default)
        if ref.startswith("ServerArgs.") and ref.split(".", 1)[1] in defaults:
            entry["default"] = defaults[ref.split(".", 1)[1]]
        else:
            try:
                entry["default"] = _literal(default, names)
            except (ValueError, TypeError, SyntaxError):
                pass
    new_flag = _text(kw.get("new_flag"), names)
    error = _text(kw.get("error_message"), names)
    entry["deprecated"] = deprecation(entry, new_flag, error)
    return entry


def add_argument_calls(tree: ast.Module, defaults: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """Every ``*.add_argument("--x", ...)`` with literal option strings; also the count skipped."""
    names = module_names(tree)
    found, skipped = [], 0
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not options or len(options) != len(node.args) or not all(o.startswith("-") for o in options):
            skipped += 1  # computed option strings, or a positional argument
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        found.append(_entry(options, kw, names, defaults))
    return found, skipped


def _annotated(ann: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """``(T, meta)`` of ``A[T, meta, ...]`` / ``Annotated[...]`` where meta is str or Arg(...)."""
    if not (isinstance(ann, ast.Subscript) and ast.unparse(ann.value).split(".")[-1] in ("A", "Annotated")):
        return None
    parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    for meta in parts[1:]:
        if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
            return parts[0], meta
        if isinstance(meta, (ast.JoinedStr, ast.BinOp)):
            return parts[0], meta
        if isinstance(meta, ast.Call) and ast.unparse(meta.func).split(".")[-1] == "Arg":
            return parts[0], meta
    return None


def _unwrap(tp: ast.expr) -> tuple[str, ast.expr]:
    """``(shape, inner)``: shape is literal/list/bool/scalar after dropping Optional / ``| None``."""
    if isinstance(tp, ast.Subscript) and ast.unparse(tp.value).split(".")[-1] == "Optional":
        tp = tp.slice
    if isinstance(tp, ast.BinOp) and isinstance(tp.op, ast.BitOr):
        parts = [p for p in (tp.left, tp.right) if ast.unparse(p) != "None"]
        tp = parts[0] if len(parts) == 1 else tp
    head = ast.unparse(tp.value).split(".")[-1] if isinstance(tp, ast.Subscript) else ast.unparse(tp)
    if head == "Literal":
        return "literal", tp
    if head in ("List", "list"):
        return "list", tp
    return ("bool" if head == "bool" else "scalar"), tp


def field_flag(name: str, ann: ast.expr, value: ast.expr | None, names: dict[str, ast.expr]) -> dict[str, Any] | None:
    """The flag ``add_cli_args_from_dataclass`` derives from one annotated field, or None."""
    found = _annotated(ann)
    if found is None:
        return None
    tp, meta = found
    kw: dict[str, ast.expr] = {}
    if isinstance(meta, ast.Call):
        kw = {k.arg: k.value for k in meta.keywords if k.arg}
        if meta.args:
            kw.setdefault("help", meta.args[0])
        if "no_cli" in kw and ast.unparse(kw["no_cli"]) == "True":
            return None
    else:
        kw = {"help": meta}
    cli = _literal(kw["cli_name"], names) if "cli_name" in kw else "--" + name.replace("_", "-")
    options = [cli] + (_literal(kw["aliases"], names) if "aliases" in kw else [])
    args: dict[str, ast.expr] = {"help": kw.get("help", ast.Constant(""))}
    args["dest"] = ast.Constant(name)
    if value is not None:
        args["default"] = value
    shape, inner = _unwrap(tp)
    if "action" in kw:
        args["action"] = kw["action"]
        extra = kw.get("action_kwargs")  # passed straight to add_argument
        if isinstance(extra, ast.Dict):
            args.update({k.value: v for k, v in zip(extra.keys, extra.values) if isinstance(k, ast.Constant)})
    elif shape == "literal":
        elts = inner.slice.elts if isinstance(inner.slice, ast.Tuple) else [inner.slice]  # type: ignore[attr-defined]
        args["choices"] = kw.get("choices", ast.List(elts=elts))
        first = elts[0].value if elts and isinstance(elts[0], ast.Constant) else ""
        # _infer_type_func: int/float/str map to themselves, anything else (None, bool) to str
        name = type(first).__name__ if type(first) in (int, float, str) else "str"
        args["type"] = kw.get("type_parser", ast.Name(id=name))
    elif shape == "list" and "type_parser" not in kw:
        elem = inner.slice if isinstance(inner, ast.Subscript) else ast.Name(id="str")  # type: ignore[attr-defined]
        args["type"] = elem if ast.unparse(elem) in ("int", "float", "str") else ast.Name(id="str")
        args["nargs"] = kw.get("nargs", ast.Constant("+"))
    elif shape == "bool":
        args["action"] = ast.Constant("store_true")
    else:
        text = ast.unparse(inner)
        args["type"] = kw.get("type_parser", ast.Name(id=text if text in ("int", "float", "str") else "str"))
    for key in ("choices", "nargs"):
        if key in kw and key not in args:
            args[key] = kw[key]
    return _entry(options, args, names, {})


def annotated_fields(tree: ast.Module) -> list[dict[str, Any]]:
    """Flags of every ``A[...]``-annotated field of every class in one module."""
    names = module_names(tree)
    found = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                entry = field_flag(stmt.target.id, stmt.annotation, stmt.value, names)
                if entry is not None:
                    found.append(entry)
    return found


def class_defaults(tree: ast.Module, cls_name: str = "ServerArgs") -> dict[str, Any]:
    """Literal defaults of ``ServerArgs``'s fields, for ``default=ServerArgs.x`` references."""
    names = module_names(tree)
    out: dict[str, Any] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name):
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                try:
                    out[stmt.target.id] = _literal(stmt.value, names)
                except (ValueError, TypeError, SyntaxError):
                    pass
    return out


def read_flags(sources: dict[str, str]) -> dict[str, Any]:
    """The flags of one release from ``{path: text}`` of its server_args.py and fields modules.

    Later entries for an option string replace earlier ones, as argparse would refuse a
    duplicate; a duplicate is counted in ``duplicates`` so a misreading shows.
    """
    flags: dict[str, dict[str, Any]] = {}
    dup = skipped = 0
    for path in sorted(sources, key=lambda p: (not p.endswith("server_args.py"), p)):
        tree = ast.parse(sources[path], filename=path)
        fields = annotated_fields(tree)
        calls, skip = add_argument_calls(tree, class_defaults(tree)) if path.endswith("server_args.py") else ([], 0)
        skipped += skip
        for entry in fields + calls:
            if entry["canonical"] in flags:
                dup += 1
            flags[entry["canonical"]] = entry
    # SGLang's parser is a plain ArgumentParser(): argparse adds -h/--help itself.
    flags.setdefault("--help", {"option_strings": ["-h", "--help"], "canonical": "--help", "kind": "help",
                                "type": None, "help": "show this help message and exit", "nargs": 0,
                                "choices": None, "dest": "help", "default": "==SUPPRESS==", "deprecated": None})
    return {"actions": sorted(flags.values(), key=lambda e: e["canonical"]),
            "duplicates": dup, "skipped_calls": skipped}
