"""SGLang's flag history across its releases, from ``catalogs/sglang/history.json``.

The file is built by ``scripts/sglang-history/history.py`` from 34 releases (0.4.0.post2 to
0.5.23): the committed probe catalogs where they exist (``source: probe``), else the AST of
the release's ``server_args.py`` (``source: ast``, approximate in types and choices). Per
flag: the runs of releases it exists in and SGLang's own deprecation messages, with the
successor parsed from that text. It is read only when a flag is unknown to every committed
pin (lazily, cached on the file's mtime), so the common check never pays for it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from generator.sglang.catalog import version_key

HISTORY_FILE = "history.json"


@dataclass(frozen=True)
class PastFlag:
    """What the history says about one option string."""

    canonical: str
    first: str  # first release that has it
    last: str  # last release that has it
    gone_from: str | None  # first release after ``last`` (None: still in the newest)
    successor: str | None  # "--ep-size", "--moe-a2a-backend deepep" (SGLang's own text)
    message: str | None  # the deprecation message the successor came from


@dataclass(frozen=True)
class History:
    """The releases (version, probe|ast) and the flags by option string."""

    versions: tuple[tuple[str, str], ...]
    flags: Mapping[str, Mapping[str, Any]]
    by_option: Mapping[str, str]


def history_path(catalog_file: Path) -> Path:
    """history.json beside the pin catalogs."""
    return catalog_file.with_name(HISTORY_FILE)


def load_history(path: Path) -> History | None:
    """The history at ``path`` (cached on its mtime); None when there is none."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    return _load_cached(path, stamp)


@functools.lru_cache(maxsize=2)
def _load_cached(path: Path, _stamp: int) -> History:
    doc = json.loads(path.read_text(encoding="utf-8"))
    by_option: dict[str, str] = {}
    for name, entry in doc["flags"].items():
        by_option.setdefault(name, name)
        for span in entry["spans"]:
            for opt in span.get("option_strings") or ():
                by_option.setdefault(opt, name)
    versions = tuple((v["version"], v["source"]) for v in doc["versions"])
    return History(versions, doc["flags"], by_option)


def past_flag(history: History, option: str) -> PastFlag | None:
    """What the history knows of ``option``, or None when no release had it."""
    name = history.by_option.get(option)
    if name is None:
        return None
    entry = history.flags[name]
    order = [v for v, _ in history.versions]
    first, last = entry["spans"][0]["from"], entry["spans"][-1]["to"]
    gone = order[order.index(last) + 1] if last in order and last != order[-1] else None
    successor = message = None
    for dep in entry["deprecated"]:  # oldest first: the last one with a successor wins
        succ = dep.get("successor")
        if succ:
            successor = succ["flag"] + (f" {succ['value']}" if succ.get("value") else "")
            message = dep.get("message")
    return PastFlag(name, first, last, gone, successor, message)


def source_of(history: History, version: str) -> str | None:
    """``probe`` or ``ast``: how the history read that release."""
    return dict(history.versions).get(version)


def is_before(a: str, b: str) -> bool:
    """True when release ``a`` is older than release ``b`` (by release number)."""
    ka, kb = version_key(a), version_key(b)
    return ka is not None and kb is not None and ka < kb
