"""Capture SGLang's environment-variable catalog as deterministic JSON on stdout.

Runs INSIDE the Python that has SGLang installed, like ``sglang_probe.py``: standard
library only, no import of ``generator``. Run as a file it imports ``envsource.py`` and
``envscan.py`` from beside it; piped on stdin it expects their text in front of its own:
``cat envsource.py envscan.py envprobe.py | python - [--commit HEX]`` (so this file has no
``from __future__`` import, which would have to come first, and no annotation that
Python 3.9 could not evaluate).

The typed registry ``sglang.srt.environ.Envs`` is read by importing it (the source of
truth: defaults that are expressions or enum members come out as SGLang computes them);
when that import fails, or with ``--ast-only`` / ``--root``, from the AST instead, marked
``registry.source = "ast"``. Imported or not, the AST reading is compared with the import
(``registry.ast_mismatches``) and the EnvBool rule read from the source is checked against
the real ``EnvBool.parse``. Deprecations, parse rules and the ad hoc reads come from the
source (``envsource``). No date is recorded: two captures of one install are byte-identical.
"""

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

if "scan_package" not in globals():  # run as a file: its two modules lie beside this one
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from envscan import scan_package
    from envsource import ENV_NAME, field_type, json_value, read_source, tree_version, unclassified

FORMAT_VERSION = 1
PROBE_VERSION = 1
TOOL = "gen sglang envprobe"


def registry_from_import() -> List[Dict[str, Any]]:
    """Every EnvField of ``sglang.srt.environ.Envs``, read from the imported module."""
    from sglang.srt import environ

    fields = []
    for name, field in vars(environ.Envs).items():
        if not isinstance(field, environ.EnvField):
            continue
        fields.append({
            "name": name, "class": type(field).__name__,
            "type": field_type([c.__name__ for c in type(field).__mro__]),
            "default": json_value(field.default),
            "secret": bool(getattr(field, "secret", False)),
            "deprecated_name": getattr(field, "deprecated_name", None),
        })
    return sorted(fields, key=lambda f: f["name"])


def check_bool_rule(rule: Dict[str, Any]) -> List[str]:
    """Mismatches between the EnvBool rule read from the AST and the imported EnvBool.parse."""
    from sglang.srt.environ import EnvBool

    field, problems = EnvBool(False), []
    for expected, values in ((True, rule["true"] or []), (False, rule["false"] or [])):
        for text in values + ([v.upper() for v in values] if rule["case_insensitive"] else []):
            if field.parse(text) is not expected:
                problems.append(f"EnvBool.parse({text!r}) is not {expected}")
    with contextlib.suppress(ValueError):
        field.parse("definitely-not-a-bool")
        problems.append("EnvBool.parse accepted 'definitely-not-a-bool'")
    return problems


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout (Python and fd 1) to stderr meanwhile."""
    sys.stdout.flush()
    saved_fd, saved_stream = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = saved_stream


def _mismatches(imported: List[Dict[str, Any]], from_ast: List[Dict[str, Any]]) -> List[str]:
    """Names where the AST reading differs from the import (defaults only where literal)."""
    by_name = {f["name"]: f for f in from_ast}
    out = set(by_name) ^ {f["name"] for f in imported}
    for f in imported:
        a = by_name.get(f["name"])
        if a is None:
            continue
        literal = not (isinstance(a["default"], dict) and "expr" in a["default"])
        if any(a[k] != f[k] for k in ("class", "type", "secret", "deprecated_name")) or (
                literal and a["default"] != f["default"]):
            out.add(f["name"])
    return sorted(out)


def _add_default_exprs(imported: List[Dict[str, Any]], from_ast: List[Dict[str, Any]]) -> None:
    """Keep an imported default only where it cannot depend on the machine.

    A literal or an enum member (``ToolStrictLevel.OFF`` -> 0) stays as imported. Any other
    expression (``os.path.expanduser(...)`` evaluated at import names this user's home; a
    lambda's name says nothing) becomes its source text, ``{"expr": ..., "callable"?: ...}``.
    """
    by_name = {f["name"]: f for f in from_ast}
    for f in imported:
        a = by_name.get(f["name"])
        if not (a and isinstance(a["default"], dict) and "expr" in a["default"]):
            continue
        if isinstance(f["default"], dict) and "callable" in f["default"]:
            f["default"]["expr"] = a["default"]["expr"]
        elif not (isinstance(f["default"], int) and not isinstance(f["default"], bool)):
            f["default"] = {"expr": a["default"]["expr"]}


def registry(from_ast: List[Dict[str, Any]], ast_only: bool) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The registry block: imported when possible, else the AST reading (with the reason)."""
    meta: Dict[str, Any] = {"source": "ast", "import_error": None, "ast_mismatches": []}
    if ast_only:
        return meta, from_ast
    try:
        with stdout_to_stderr():
            fields = registry_from_import()
    except Exception as exc:  # noqa: BLE001  (any import failure: fall back, say why)
        meta["import_error"] = f"{type(exc).__name__}: {exc}"
        print(f"envprobe: import failed, registry from AST: {meta['import_error']}", file=sys.stderr)
        return meta, from_ast
    meta.update(source="import", ast_mismatches=_mismatches(fields, from_ast))
    return meta, fields


def sglang_info(root: str, commit: Optional[str], imported: bool) -> Dict[str, Any]:
    """Version (installed metadata, else ``sglang/version.py``), commit and install source."""
    version = None
    if imported:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            version = importlib.metadata.version("sglang")
    return {"version": version or tree_version(root), "commit": commit,
            "source": "git" if commit else ("pypi" if imported else "tree")}


def build(root: str, commit: Optional[str], ast_only: bool) -> Dict[str, Any]:
    """The whole environment catalog of the SGLang package folder ``root``."""
    src = read_source(root)
    meta, fields = registry(src["fields"], ast_only)
    rules = src["parse_rules"]
    if meta["source"] == "import" and "EnvBool" in rules:
        meta["bool_rule_problems"] = check_bool_rule(rules["EnvBool"])
        _add_default_exprs(fields, src["fields"])
    names = {f["name"] for f in fields}
    deprecated = src["deprecated"]
    known = names | {f["deprecated_name"] for f in fields if f["deprecated_name"]}
    known |= {e["name"] for e in deprecated} | {e["replacement"] for e in deprecated if e["replacement"]}
    adhoc = scan_package(root, names)
    rules = {**rules, **adhoc.pop("helpers")}  # EnvField classes by name, helpers by file:function
    by_type: Dict[str, int] = {}
    for f in fields:
        by_type[f["type"]] = by_type.get(f["type"], 0) + 1
    own = [v for v in adhoc["vars"] if not v["in_registry"] and ENV_NAME.match(v["name"])]
    return {
        "format": FORMAT_VERSION,
        "sglang": sglang_info(root, commit, meta["source"] == "import"),
        "captured": {"tool": TOOL, "probe": PROBE_VERSION, "python": platform.python_version()},
        "registry": {**meta, "fields": fields},
        "deprecated": deprecated, "prefix_renames": src["prefix_renames"],
        "unclassified": unclassified(src["tree"], known), "parse_rules": rules, "adhoc": adhoc,
        "counts": {"registry": len(fields), "registry_by_type": dict(sorted(by_type.items())),
                   "deprecated": len(deprecated), "adhoc_names": len(adhoc["vars"]),
                   "adhoc_sglang_not_in_registry": len(own),
                   "adhoc_dynamic_sites": len(adhoc["dynamic_sites"])},
    }


def _package_root(given: Optional[str]) -> Optional[str]:
    if given is not None:
        return os.path.abspath(given)
    spec = importlib.util.find_spec("sglang")  # the folder, without running sglang/__init__
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.abspath(list(spec.submodule_search_locations)[0])


def main(argv: Optional[List[str]] = None) -> int:
    """Print the environment catalog of the SGLang importable here (or at ``--root``)."""
    cli = argparse.ArgumentParser(prog="envprobe", description=(__doc__ or "").splitlines()[0])
    cli.add_argument("--commit", help="git commit of a source install (40 hex digits)")
    cli.add_argument("--ast-only", action="store_true", help="do not import SGLang; read its source only")
    cli.add_argument("--root", help="an unpacked sglang package folder to read instead (implies --ast-only)")
    args = cli.parse_args(argv)
    if args.commit is not None and not re.fullmatch(r"[0-9a-f]{40}", args.commit):
        cli.error(f"--commit must be 40 lowercase hex digits, got {args.commit!r}")
    root = _package_root(args.root)
    if root is None:
        print("envprobe: no sglang package importable by this Python", file=sys.stderr)
        return 1
    try:
        doc = build(root, args.commit, args.ast_only or args.root is not None)
    except (OSError, SyntaxError, StopIteration) as exc:
        print(f"envprobe: cannot read SGLang's environment: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    problems = doc["registry"].get("bool_rule_problems")
    if problems:
        print("envprobe: EnvBool rule read from the source disagrees with EnvBool.parse: "
              + "; ".join(problems), file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
