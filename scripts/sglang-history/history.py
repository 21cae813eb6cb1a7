"""SGLang's flag history across its PyPI releases, as one compact JSON file (standard library only).

For every release chosen (the newest post-release of each X.Y.Z from 0.4.0 on, taken from
``pip index versions sglang``), the flag list comes from gen's committed probe catalog
(``catalogs/sglang/<V>.json``, captured from the real parser: ``source: probe``) when one
exists, else from the AST of the release's wheel (``flagsource.py``: ``source: ast``,
approximate where choices or help are built at import time). Wheels are downloaded once
with ``pip download --no-deps`` into a temporary folder keyed by version, never the repo.

The history keys each flag by its canonical option string. ``spans`` are runs of consecutive
releases in which the flag's shape (options, dest, kind, type, choices, nargs, default,
deprecation) stayed the same; ``deprecated`` lists SGLang's own deprecation messages with the
releases that printed them and the successor parsed from the text (``--ep-size``,
``--moe-a2a-backend deepep``).

    python3 history.py select                      # the versions, from pip index
    python3 history.py fetch  [--wheels DIR]       # download the missing wheels
    python3 history.py build  --out catalogs/sglang/history.json [--catalogs DIR] [--wheels DIR]
    python3 history.py show   FILE FLAG...         # what the history says about FLAG
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import zipfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flagsource import read_flags  # noqa: E402
from successor import successor  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from generator.load.captured import stamp  # noqa: E402  (standard library only, like this script)

TOOL = "scripts/sglang-history/history.py build"

FORMAT_VERSION = 1
DEFAULT_WHEELS = "/tmp/gen-sglang-wheels"
# The repository's own catalogs; the output goes to catalogs/sglang/history.json.
DEFAULT_CATALOGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "catalogs", "sglang")
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:\.post(\d+))?$")
# The parts of a flag whose change starts a new span.
SHAPE = ("option_strings", "dest", "kind", "type", "choices", "choices_expr", "nargs", "default")


def version_key(version: str) -> tuple[int, int, int, int]:
    """Sort key of a final release ``X.Y.Z[.postN]``; ValueError for anything else (rc, dev)."""
    m = _RELEASE.match(version)
    if not m:
        raise ValueError(f"not a final release: {version}")
    return int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0)


def select_versions(available: list[str], since: str = "0.4.0") -> list[str]:
    """The newest post-release of each X.Y.Z at or after ``since``, oldest first."""
    best: dict[tuple[int, int, int], str] = {}
    floor = version_key(since)[:3]
    for v in available:
        try:
            key = version_key(v)
        except ValueError:
            continue  # pre-releases are not lines anyone pins
        if key[:3] >= floor and (key[:3] not in best or version_key(best[key[:3]]) < key):
            best[key[:3]] = v
    return [best[k] for k in sorted(best)]


def pip_versions() -> list[str]:
    """Every version of sglang the configured index lists (one ``pip index versions``)."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "sglang"],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Available versions:"))
    return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()]


def wheel_path(wheels: str, version: str) -> str | None:
    """The wheel of ``version`` under ``wheels/<version>/``, if downloaded."""
    found = sorted(glob.glob(os.path.join(wheels, version, f"sglang-{version}-*.whl")))
    return found[0] if found else None


def fetch(versions: list[str], wheels: str, skip: set[str]) -> list[str]:
    """Download the missing wheels (``--no-deps``, wheels only); returns the versions it failed."""
    failed = []
    for v in versions:
        if v in skip or wheel_path(wheels, v):
            continue
        dest = os.path.join(wheels, v)
        os.makedirs(dest, exist_ok=True)
        run = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                              "--only-binary=:all:", f"sglang=={v}", "-d", dest], capture_output=True, text=True)
        if run.returncode != 0 or not wheel_path(wheels, v):
            failed.append(v)
            print(f"history: cannot download sglang {v}: {run.stderr.strip()[-300:]}", file=sys.stderr)
    return failed


def wheel_sources(path: str) -> dict[str, str]:
    """server_args.py and the arg_groups field modules of one wheel, read without unpacking."""
    with zipfile.ZipFile(path) as whl:
        wanted = [n for n in whl.namelist() if n == "sglang/srt/server_args.py"
                  or (n.startswith("sglang/srt/arg_groups/fields/") and n.endswith(".py"))]
        return {n: whl.read(n).decode("utf-8") for n in wanted}


def norm_type(text: str | None) -> str | None:
    """A type name both sources spell alike: ``callable:<last name>``.

    The probe records ``callable:sglang.srt.utils.common.json_list_type``, the AST sees
    ``callable:json_list_type``; lambdas are ``callable:<lambda>`` either way.
    """
    if not text or not text.startswith("callable:"):
        return text
    body = text[len("callable:"):]
    if "lambda" in body:
        return "callable:<lambda>"
    if body.startswith(("functools.partial(", "partial(")):
        inner = body.split("(", 1)[1].split(",")[0].rstrip(")")
        return f"callable:partial({inner.split('.')[-1]})"
    return "callable:" + body.split("(")[0].split(".")[-1]


def _shape(action: dict[str, Any]) -> dict[str, Any]:
    """The span attributes of one catalog action (probe or AST), keys omitted when unknown."""
    out = {k: action[k] for k in SHAPE if k in action}
    out["type"] = norm_type(out.get("type"))
    dep = action.get("deprecated")
    out["deprecated"] = dep["message"] if dep else None
    return out


def release_flags(version: str, catalogs: str, wheels: str) -> tuple[str, list[dict[str, Any]]]:
    """``(source, actions)`` of one release: the probe catalog if committed, else the wheel's AST."""
    catalog = os.path.join(catalogs, f"{version}.json")
    if os.path.exists(catalog):
        with open(catalog, encoding="utf-8") as handle:
            return "probe", json.load(handle)["actions"]
    path = wheel_path(wheels, version)
    if path is None:
        raise FileNotFoundError(f"no catalog and no wheel for sglang {version} (run: history.py fetch)")
    return "ast", read_flags(wheel_sources(path))["actions"]


def _add_span(spans: list[dict[str, Any]], version: str, prev: str | None, shape: dict[str, Any]) -> None:
    """Extend the last span when ``version`` follows it with the same shape, else open one."""
    last = spans[-1] if spans else None
    if last and last["to"] == prev and {k: v for k, v in last.items() if k not in ("from", "to")} == shape:
        last["to"] = version
    else:
        spans.append({"from": version, "to": version, **shape})


def compile_history(releases: list[tuple[str, str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """The history document from ``(version, source, actions)`` triples, oldest first."""
    flags: dict[str, dict[str, Any]] = {}
    prev: str | None = None
    for version, _source, actions in releases:
        for a in actions:
            entry = flags.setdefault(a["canonical"], {"spans": [], "help": None, "deprecated": []})
            shape = _shape(a)
            if shape["option_strings"] == [a["canonical"]]:
                del shape["option_strings"]  # the common case, implied by the key
            if shape.get("dest") == a["canonical"].lstrip("-").replace("-", "_"):
                del shape["dest"]
            message = shape.pop("deprecated")
            _add_span(entry["spans"], version, prev, shape)
            entry["help"] = a.get("help") or entry["help"]  # the newest help text
            if message:
                deps = entry["deprecated"]
                if deps and deps[-1]["message"] == message and deps[-1]["to"] == prev:
                    deps[-1]["to"] = version
                else:
                    deps.append({"from": version, "to": version, "message": message})
        prev = version
    known = set(flags) | {o for f in flags.values() for s in f["spans"] for o in s.get("option_strings", [])}
    for name, entry in flags.items():
        own = {name} | {o for s in entry["spans"] for o in s.get("option_strings", [])}
        for dep in entry["deprecated"]:
            dep["successor"] = successor(dep["message"], own, known)
    return {"format": FORMAT_VERSION, "captured": {"tool": TOOL, "sha256": "0" * 64},
            "versions": [{"version": v, "source": s, "actions": len(a),
                          "choices_unknown": sum("choices_expr" in x for x in a)} for v, s, a in releases],
            "flags": dict(sorted(flags.items()))}


def dumps(doc: dict[str, Any]) -> str:
    """Compact canonical text: no indentation, sorted keys, one flag per line."""
    head = {k: v for k, v in doc.items() if k != "flags"}
    lines = [json.dumps(name) + ":" + json.dumps(entry, sort_keys=True, separators=(",", ":"))
             for name, entry in doc["flags"].items()]
    body = json.dumps(head, sort_keys=True, separators=(",", ":"))[:-1]
    text = body + ',"flags":{\n' + ",\n".join(lines) + "\n}}\n"
    return stamp(text) if "captured" in head else text  # the capture digest (generator/load/captured.py)


def load(path: str) -> dict[str, Any]:
    """The history document, with ``by_option`` (every option string -> canonical keys) added."""
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    index: dict[str, list[str]] = {}
    for name, entry in doc["flags"].items():
        for opt in {name} | {o for s in entry["spans"] for o in s.get("option_strings", [])}:
            index.setdefault(opt, []).append(name)
    doc["by_option"] = index
    return doc


def describe(doc: dict[str, Any], flag: str) -> str:
    """One line on ``flag``: the releases it exists in, its deprecations and successor."""
    names = doc["by_option"].get(flag)
    if not names:
        return f"{flag}: in no known release"
    order = [v["version"] for v in doc["versions"]]
    parts = []
    for name in names:
        entry = doc["flags"][name]
        ranges = ", ".join(s["from"] if s["from"] == s["to"] else f"{s['from']}..{s['to']}" for s in _merged(entry, order))
        last = entry["spans"][-1]["to"]
        gone = "" if last == order[-1] else f"; gone from {order[order.index(last) + 1]} on"
        text = f"{flag}{'' if name == flag else f' (alias of {name})'}: in {ranges}{gone}"
        for dep in entry["deprecated"]:
            succ = dep["successor"]
            said = f"; SGLang said ({dep['from']}..{dep['to']}): {dep['message']!r}"
            text += said + (f" -> successor {succ['flag']}{' ' + succ['value'] if succ['value'] else ''}" if succ else "")
        parts.append(text)
    return "\n".join(parts)


def _merged(entry: dict[str, Any], order: list[str]) -> list[dict[str, str]]:
    """The flag's spans joined where one ends right before the next starts (shape changes)."""
    out: list[dict[str, str]] = []
    for s in entry["spans"]:
        if out and order.index(out[-1]["to"]) + 1 == order.index(s["from"]):
            out[-1]["to"] = s["to"]
        else:
            out.append({"from": s["from"], "to": s["to"]})
    return out


def _build(args: argparse.Namespace) -> int:
    # Oldest first whatever order they came in: spans join neighbours in this order.
    versions = sorted(set(args.versions or select_versions(pip_versions())), key=version_key)
    releases = []
    for v in versions:
        try:
            source, actions = release_flags(v, args.catalogs, args.wheels)
        except (OSError, SyntaxError, zipfile.BadZipFile) as exc:
            print(f"history: sglang {v}: {exc}", file=sys.stderr)
            return 3
        releases.append((v, source, actions))
        print(f"{v}: {len(actions)} flags ({source})", file=sys.stderr)
    text = dumps(compile_history(releases))
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, args.out)  # atomic: a reader never sees half a file
    print(f"history: wrote {args.out}, {len(text.encode())} bytes", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: select, fetch, build, show (see the module docstring)."""
    cli = argparse.ArgumentParser(prog="history", description=__doc__.splitlines()[0])
    sub = cli.add_subparsers(dest="cmd", required=True)
    sub.add_parser("select", help="print the chosen versions")
    f = sub.add_parser("fetch", help="download the missing wheels")
    b = sub.add_parser("build", help="write the history file")
    for p in (f, b):
        p.add_argument("--wheels", default=DEFAULT_WHEELS)
        p.add_argument("--catalogs", default=DEFAULT_CATALOGS)
        p.add_argument("--versions", nargs="*", help="instead of asking pip index")
    b.add_argument("--out", required=True)
    s = sub.add_parser("show", help="describe flags")
    s.add_argument("file")
    s.add_argument("flags", nargs="+")
    args = cli.parse_args(argv)
    if args.cmd == "select":
        print("\n".join(select_versions(pip_versions())))
        return 0
    if args.cmd == "fetch":
        versions = args.versions or select_versions(pip_versions())
        have = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(args.catalogs, "*.json"))}
        return 1 if fetch(versions, args.wheels, have) else 0
    if args.cmd == "build":
        return _build(args)
    doc = load(args.file)
    print("\n".join(describe(doc, flag) for flag in args.flags))
    return 0


if __name__ == "__main__":
    sys.exit(main())
