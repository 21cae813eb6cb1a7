"""An approximate flag catalog for a release that only the flag history knows.

``catalogs/sglang/history.json`` holds, per flag, the spans of releases it exists in with
its kind, type, nargs, default and choices as read from that release (mostly from the AST
of ``server_args.py``, where the probe could not import it on CPU). ``gen check --sglang
PIN`` for such a release checks flags against the Catalog built here, and says how far it
is from a captured one (``HistoryCatalog.missing``): choices SGLang computes at run time
are unknown (any value passes), dests not written in the source are argparse's default
spelling, and there is no environment catalog (``env:`` keys are not checked).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from generator.sglang.catalog import Action, Catalog, Deprecation, catalogs_dir
from generator.sglang.flaghistory import (flags_at, history_path, load_history, resolve_version,
                                          source_of)

APPROXIMATE_NOTE = "approximate: from the AST of server_args.py"


@dataclass(frozen=True)
class HistoryCatalog:
    """The Catalog, where the history read the release from, and what a full catalog has more."""

    catalog: Catalog
    source: str  # probe | ast
    missing: tuple[str, ...]

    @property
    def note(self) -> str:
        """One line for the report: how approximate the check is."""
        head = APPROXIMATE_NOTE if self.source == "ast" else "from the flag history (probe)"
        return (f"{head} of SGLang {self.catalog.version}: {len(self.catalog.actions)} flags with kind, "
                f"type, nargs and default; missing: " + "; ".join(self.missing))


def _deprecation(entry: Mapping[str, Any], order: dict[str, int], at: int) -> Deprecation | None:
    for dep in entry.get("deprecated") or ():
        if order.get(dep["from"], at + 1) <= at <= order.get(dep["to"], -1):
            succ = dep.get("successor") or {}
            flag = succ.get("flag")
            return Deprecation(flag + (f" {succ['value']}" if succ.get("value") else "") if flag else None,
                               dep.get("message") or "")
    return None


def _action(name: str, span: Mapping[str, Any], dep: Deprecation | None) -> Action:
    options = list(span.get("option_strings") or [name])
    if span["kind"] == "boolean_optional" and "--no-" + name[2:] not in options:
        options.append("--no-" + name[2:])  # argparse.BooleanOptionalAction adds it
    return Action(option_strings=tuple(options), canonical=name,
                  dest=span.get("dest") or name[2:].replace("-", "_"), kind=span["kind"],
                  type=span.get("type"),
                  choices=None if span.get("choices") is None else tuple(str(c) for c in span["choices"]),
                  nargs=span.get("nargs"), default=span.get("default"), deprecated=dep)


@functools.lru_cache(maxsize=8)
def _build(history_file: Path, stamp: int, pin: str) -> HistoryCatalog | None:
    history = load_history(history_file)
    version = None if history is None else resolve_version(history, pin)
    if history is None or version is None:
        return None
    order = {v: i for i, (v, _) in enumerate(history.versions)}
    spans = flags_at(history, version)
    actions = tuple(_action(name, span, _deprecation(history.flags[name], order, order[version]))
                    for name, span in sorted(spans.items()))
    unknown_choices = sum(1 for s in spans.values() if s.get("choices_expr"))
    no_default = sum(1 for s in spans.values() if "default" not in s)
    missing: list[str] = []
    if unknown_choices:
        missing.append(f"choices of {unknown_choices} flags unknown (computed at run time; any value passes)")
    if no_default:
        missing.append(f"defaults of {no_default} flags unknown")
    missing.append("no environment catalog (env: keys are not checked)")
    catalog = Catalog(pin=pin, version=version, commit=None,
                      source_file=history_file.with_name(f"{pin}.json"), actions=actions)
    return HistoryCatalog(catalog, source_of(history, version) or "ast", tuple(missing))


def history_catalog(repo_root: Path, pin: str) -> HistoryCatalog | None:
    """The approximate catalog of ``pin`` (a release, or X.Y.Z for its newest post-release)."""
    path = history_path(catalogs_dir(repo_root) / f"{pin}.json")
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _build(path, stamp, pin)
