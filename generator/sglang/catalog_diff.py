"""What changed in SGLang's CLI between two pins: the logic behind ``gen sglang diff A B``.

Two catalogs are compared flag by flag. A flag of pin A is matched in pin B by any of
its option strings (SGLang keeps old spellings as aliases, e.g. ``--tensor-parallel-size``
in 0.5.23); a flag with no option string left in B is *renamed* when its successor can
be derived (the curated ``catalogs/renames.yaml``, or the same argparse dest under a new
name) and *removed* otherwise. A flag B keeps only as a deprecated action whose
replacement is new in B is a rename too ("deprecated alias pointing to a new flag"); any
other newly deprecated flag is listed as deprecated. For flags present in both, the
kind, type, nargs, choices, default and option strings are compared; help texts are not
(they change wording every release and mean nothing to a command line).

Everything is sorted by option string, so the output of two runs is identical.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.sglang.catalog import Action, Catalog, FlagTables, load_flag_tables


@dataclass(frozen=True)
class Renamed:
    """A flag of pin A that pin B spells differently."""

    old: str  # A's canonical option string
    new: tuple[str, ...]  # B's canonical option string(s); two when a flag split in two
    how: str  # why we know: "renames.yaml", "same setting 'dest'", "deprecated alias"


@dataclass(frozen=True)
class Deprecated:
    """A flag live in pin A that pin B marks deprecated (no new flag replaces it)."""

    flag: str
    replacement: str | None
    message: str
    fatal: bool


@dataclass(frozen=True)
class Changed:
    """A flag in both pins whose definition changed; ``changes`` are readable lines."""

    flag: str  # B's canonical option string
    changes: tuple[str, ...]


@dataclass(frozen=True)
class CatalogDiff:
    """The difference between the CLIs of two pins."""

    a: Catalog
    b: Catalog
    added: tuple[str, ...]
    removed: tuple[str, ...]
    renamed: tuple[Renamed, ...]
    deprecated: tuple[Deprecated, ...]
    changed: tuple[Changed, ...]

    @property
    def empty(self) -> bool:
        """True when the two CLIs are the same (help texts aside)."""
        return not (self.added or self.removed or self.renamed or self.deprecated or self.changed)


def _flags(catalog: Catalog) -> list[Action]:
    """The actions that are command-line flags (``--help`` is not a setting)."""
    return [a for a in catalog.actions if a.kind not in ("help", "version")]


def _is_deprecated(action: Action) -> bool:
    return action.deprecated is not None or action.kind == "deprecated"


def _in(catalog: Catalog, action: Action) -> Action | None:
    """The action of ``catalog`` holding any option string of ``action`` (canonical first)."""
    for opt in (action.canonical, *action.option_strings):
        found = catalog.by_option(opt)
        if found is not None:
            return found
    return None


def _successors(a: Action, b: Catalog, tables: FlagTables) -> tuple[tuple[str, ...], str]:
    """What ``a`` (gone from ``b``) became in ``b``, and how that is known; ((), "") if unknown."""
    for opt in a.option_strings:
        found = [x.canonical for x in map(b.by_option, tables.renames.get(opt, ())) if x is not None]
        if found:
            return tuple(dict.fromkeys(found)), "renames.yaml"
    for dest in tables.dest_names(a.dest):
        same = b.by_dest(dest)
        if same is not None and not _is_deprecated(same):
            return (same.canonical,), f"same setting '{dest}'"
    return (), ""


def _value(value: object) -> str:
    """A default or choice as JSON text (stable, and how the catalog stores it)."""
    return json.dumps(value, sort_keys=True)


def _short(items: Sequence[str], limit: int = 12) -> str:
    """A comma list, cut after ``limit`` items with a count of the rest."""
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def _changes(a: Action, b: Action) -> tuple[str, ...]:
    """Readable lines for what differs between one flag's two definitions."""
    out: list[str] = []
    if a.canonical != b.canonical:
        out.append(f"canonical name {a.canonical} -> {b.canonical} "
                   f"({a.canonical} is {'still an alias' if a.canonical in b.option_strings else 'gone'})")
    gone = [o for o in a.option_strings if o not in b.option_strings and o != b.canonical]
    # A new canonical name is reported on its own line above, not again as a new spelling.
    new = [o for o in b.option_strings if o not in a.option_strings and o != b.canonical]
    if gone:
        out.append(f"spelling removed: {', '.join(gone)}")
    if new:
        out.append(f"spelling added: {', '.join(new)}")
    if a.kind != b.kind:
        out.append(f"kind {a.kind} -> {b.kind}")
    if a.type != b.type:
        out.append(f"type {a.type or 'str'} -> {b.type or 'str'}")
    if a.nargs != b.nargs:
        out.append(f"nargs {_value(a.nargs)} -> {_value(b.nargs)}")
    if a.choices != b.choices:
        if a.choices is None:
            out.append(f"choices now restricted to: {_short(list(b.choices or ()))}")
        elif b.choices is None:
            out.append("choices no longer checked by the parser (free text)")
        else:
            added = [c for c in b.choices if c not in a.choices]
            dropped = [c for c in a.choices if c not in b.choices]
            if added:
                out.append(f"choices added: {_short(added)}")
            if dropped:
                out.append(f"choices removed: {_short(dropped)}")
            if not added and not dropped:
                out.append("choices reordered")
    if _value(a.default) != _value(b.default):
        out.append(f"default {_value(a.default)} -> {_value(b.default)}")
    return tuple(out)


def diff_catalogs(a: Catalog, b: Catalog, tables: FlagTables | None = None) -> CatalogDiff:
    """Compare the CLI of pin ``a`` with pin ``b`` (``tables``: renames, default the catalogs')."""
    tables = tables or load_flag_tables(b.source_file)
    removed: list[str] = []
    renamed: list[Renamed] = []
    deprecated: list[Deprecated] = []
    changed: list[Changed] = []
    targets: set[str] = set()  # B flags that are the new name of an A flag: not "added"
    for old in _flags(a):
        now = _in(b, old)
        if now is None:
            new, how = _successors(old, b, tables)
            if new:
                renamed.append(Renamed(old.canonical, new, how))
                targets.update(new)
            else:
                removed.append(old.canonical)
            continue
        if _is_deprecated(now) and not _is_deprecated(old):
            dep = now.deprecated
            replacement = dep.replacement if dep else None
            repl_action = b.by_option(replacement) if replacement else None
            if repl_action is not None and _in(a, repl_action) is None:
                renamed.append(Renamed(old.canonical, (repl_action.canonical,),
                                       "deprecated alias in the new pin"))
                targets.add(repl_action.canonical)
            else:
                deprecated.append(Deprecated(old.canonical, replacement,
                                             dep.message if dep else "", bool(dep and dep.fatal)))
            continue
        lines = _changes(old, now)
        if lines:
            changed.append(Changed(now.canonical, lines))
    added = [x.canonical for x in _flags(b) if _in(a, x) is None and x.canonical not in targets]
    return CatalogDiff(
        a=a, b=b,
        added=tuple(sorted(added)),
        removed=tuple(sorted(removed)),
        renamed=tuple(sorted(renamed, key=lambda r: r.old)),
        deprecated=tuple(sorted(deprecated, key=lambda d: d.flag)),
        changed=tuple(sorted(changed, key=lambda c: c.flag)),
    )


def format_diff(diff: CatalogDiff, used: Mapping[str, Sequence[str]] | None = None) -> str:
    """The diff as plain text: a summary line, then one section per kind of change.

    ``used`` maps option strings to who uses them (``host/service``); each entry naming
    such a flag is marked ``[used by ...]`` and the summary counts them.
    """
    a, b = diff.a, diff.b
    used = used or {}

    def mark(*flags: str) -> str:
        users = sorted({u for f in flags for u in used.get(f, ())})
        return f"  [used by {', '.join(users)}]" if users else ""

    marked = sum(bool(mark(f)) for f in (*diff.removed, *diff.added, *(d.flag for d in diff.deprecated),
                                         *(c.flag for c in diff.changed))) \
        + sum(bool(mark(r.old, *r.new)) for r in diff.renamed)
    lines = [
        f"SGLang {a.pin} -> {b.pin}: {len(_flags(a))} -> {len(_flags(b))} flags; "
        f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.renamed)} renamed, "
        f"{len(diff.deprecated)} deprecated, {len(diff.changed)} changed"
        + (f"; {marked} of them used here" if used else ""),
    ]

    def section(title: str, items: list[str], count: int) -> None:
        # ``count`` is the number of flags: a changed flag takes one line per change.
        if items:
            lines.append("")
            lines.append(f"{title} ({count}):")
            lines.extend(items)

    section("Removed", [f"  - {f}{mark(f)}" for f in diff.removed], len(diff.removed))
    section("Renamed", [f"  ~ {r.old} -> {' or '.join(r.new)}  ({r.how}){mark(r.old, *r.new)}"
                        for r in diff.renamed], len(diff.renamed))
    section("Deprecated", [
        f"  ! {d.flag}" + (f" -> {d.replacement}" if d.replacement else "")
        + (" (refused by SGLang)" if d.fatal else "")
        + (f": {d.message}" if d.message else "") + mark(d.flag)
        for d in diff.deprecated], len(diff.deprecated))
    section("Added", [f"  + {f}{mark(f)}" for f in diff.added], len(diff.added))
    changed: list[str] = []
    for c in diff.changed:
        changed.append(f"  * {c.flag}{mark(c.flag)}")
        changed.extend(f"      {line}" for line in c.changes)
    section("Changed", changed, len(diff.changed))
    if diff.empty:
        lines.append("No differences (help texts aside).")
    return "\n".join(lines) + "\n"
