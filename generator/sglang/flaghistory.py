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

from generator.sglang.catalog import CatalogFormatError, read_data_text, version_key
from generator.load import json_text

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
    # Repository data a pull request can edit (and re-stamp): another shape than the capture
    # writes is an error naming the file, never a crash of the checks that read it later.
    try:
        doc = json_text.loads(read_data_text(path))
        by_option: dict[str, str] = {}
        for name, entry in doc["flags"].items():
            spans, deprecated = entry["spans"], entry["deprecated"]
            if not isinstance(spans, list) or not spans or not isinstance(deprecated, list) \
                    or not all(isinstance(d, dict) for d in deprecated):
                raise TypeError(f"{name}: spans and deprecated are lists (of objects), spans not empty")
            by_option.setdefault(name, name)
            for span in spans:
                if not isinstance(span["from"], str) or not isinstance(span["to"], str):
                    raise TypeError(f"{name}: a span's from and to are versions (text)")
                for opt in span.get("option_strings") or ():
                    by_option.setdefault(str(opt), name)
        versions = tuple((str(v["version"]), str(v["source"])) for v in doc["versions"])
        return History(versions, doc["flags"], by_option)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, CatalogFormatError):
            raise
        raise CatalogFormatError(f"{path}: malformed flag history: {exc}") from exc


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


def resolve_version(history: History, pin: str) -> str | None:
    """The history's release for ``pin``: exact, or the post-release of that X.Y.Z."""
    versions = [v for v, _ in history.versions]
    if pin in versions:
        return pin
    posts = [v for v in versions if v.startswith(pin + ".post")]
    return posts[-1] if posts else None


def flags_at(history: History, version: str) -> dict[str, Mapping[str, Any]]:
    """Canonical flag -> its span in ``version``."""
    order = {v: i for i, (v, _) in enumerate(history.versions)}
    at = order[version]
    out: dict[str, Mapping[str, Any]] = {}
    for name, entry in history.flags.items():
        for span in entry["spans"]:
            if order[span["from"]] <= at <= order[span["to"]]:
                out[name] = span
    return out


def _changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    notes = []
    for key in ("kind", "type", "nargs", "default"):
        if a.get(key) != b.get(key):
            notes.append(f"{key} {json.dumps(a.get(key))} -> {json.dumps(b.get(key))}")
    ca, cb = set(a.get("choices") or ()), set(b.get("choices") or ())
    if ca != cb and a.get("choices") is not None and b.get("choices") is not None:
        if cb - ca:
            notes.append("choices added: " + ", ".join(sorted(map(str, cb - ca))))
        if ca - cb:
            notes.append("choices removed: " + ", ".join(sorted(map(str, ca - cb))))
    return notes


def format_history_diff(history: History, a: str, b: str) -> str:
    """``gen sglang diff A B`` for releases without a committed catalog, from the history."""
    fa, fb = flags_at(history, a), flags_at(history, b)
    opts = {n: set(s.get("option_strings") or [n]) for n, s in fb.items()}
    removed, added = sorted(set(fa) - set(fb)), sorted(set(fb) - set(fa))
    renamed = {old: new for old in removed for new in added
               if set(fa[old].get("option_strings") or [old]) & opts[new]}
    changed = [(n, _changes(fa[n], fb[n])) for n in sorted(set(fa) & set(fb))]
    changed = [(n, c) for n, c in changed if c]
    src = dict(history.versions)
    lines = [f"SGLang {a} -> {b} (from the flag history: {a} read by {src[a]}, {b} by {src[b]}; "
             f"releases read from the AST are approximate in types and choices): "
             f"{len(fa)} -> {len(fb)} flags; {len(added) - len(renamed)} added, "
             f"{len(removed) - len(renamed)} removed, {len(renamed)} renamed, {len(changed)} changed", ""]
    gone = [n for n in removed if n not in renamed]
    if gone:
        lines.append(f"Removed ({len(gone)}):")
        for name in gone:
            past = past_flag(history, name)
            said = f"  (SGLang said: use {past.successor})" if past and past.successor else ""
            lines.append(f"  - {name}{said}")
        lines.append("")
    if renamed:
        lines.append(f"Renamed ({len(renamed)}):")
        lines += [f"  ~ {old} -> {new}" for old, new in sorted(renamed.items())]
        lines.append("")
    new = [n for n in added if n not in renamed.values()]
    if new:
        lines.append(f"Added ({len(new)}):")
        lines += [f"  + {name}" for name in new]
        lines.append("")
    lines += changed_section(changed)
    return "\n".join(lines)


def changed_section(changed: list[tuple[str, list[str]]]) -> list[str]:
    """The "Changed (N):" block of a diff report (flags or variables), empty when nothing changed."""
    if not changed:
        return []
    lines = [f"Changed ({len(changed)}):"]
    for name, notes in changed:
        lines.append(f"  * {name}")
        lines += [f"      {n}" for n in notes]
    return lines + [""]
