"""The curated tables beside the catalogs: other servers' spellings, renames across pins.

``catalogs/foreign-flags.yaml`` maps another server's flag (vLLM, TGI, llama.cpp) to the
SGLang setting it means; ``catalogs/renames.yaml`` maps option strings SGLang renamed and
groups dests that name one setting in different pins. Both are reviewed by hand and read
through the positioned loader and a schema (see datafiles.py): a broken entry is a
positioned error, exit 1.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import Diagnostics

FOREIGN_FILE = "foreign-flags.yaml"
RENAMES_FILE = "renames.yaml"
SYNONYMS_FILE = "choice-synonyms.yaml"
# Other servers also use one-dash flags (llama.cpp's -ngl, TGI's -tp).
# The errors Path.is_file answers False to (pathlib's _IGNORED_ERRNOS).
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
_FOREIGN_FLAG = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ForeignSpelling:
    """A flag another server (vLLM, TGI, llama.cpp) spells differently from SGLang."""

    server: str
    dest: str | None  # the SGLang dest it means; None when SGLang has no such setting
    also: tuple[str, ...] = ()  # dests SGLang needs alongside it
    note: str = ""  # "{dest}" placeholders print as the pin's option string


@dataclass(frozen=True)
class FlagTables:
    """``catalogs/foreign-flags.yaml`` and ``catalogs/renames.yaml``, loaded."""

    foreign: dict[str, ForeignSpelling]
    renames: dict[str, tuple[str, ...]]  # option string -> its names in other pins (both ways)
    dest_groups: tuple[tuple[str, ...], ...]  # dests that name one setting across pins
    synonyms: dict[str, dict[str, str]] = field(default_factory=dict)  # dest -> word -> choice

    def dest_names(self, dest: str) -> tuple[str, ...]:
        """``dest`` followed by the other dests the same setting has in other pins."""
        for group in self.dest_groups:
            if dest in group:
                return (dest, *(d for d in group if d != dest))
        return (dest,)


def tables_dir(source_file: Path) -> Path:
    """The ``catalogs/`` folder holding the tables: next to the catalog, else the project's."""
    beside = source_file.parent.parent
    if (beside / FOREIGN_FILE).is_file():
        return beside
    return Path(__file__).resolve().parents[2] / "catalogs"


def load_flag_tables(source_file: Path) -> FlagTables:
    """The tables that belong with the catalog at ``source_file`` (cached per folder).

    Raises DataFileError (positioned diagnostics, exit 1) when a table is broken.
    """
    # Asked for twice per service: one stat per table file (tables_dir's own test of the
    # foreign table is its first stamp), as cheap as the stamps that keep it fresh can be.
    beside = source_file.parent.parent
    first = _stamp(os.path.join(beside, FOREIGN_FILE))
    folder = beside if first else tables_dir(source_file)
    if not first:
        first = _stamp(os.path.join(folder, FOREIGN_FILE))
    stamps = (first, _stamp(os.path.join(folder, RENAMES_FILE)), _stamp(os.path.join(folder, SYNONYMS_FILE)))
    return _load_tables_cached(folder, stamps)


def _stamp(path: str) -> int:
    """The file's mtime (ns) when it is a regular file (links followed), else 0: Path.is_file's answer."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno in _MISSING:
            return 0
        raise
    except ValueError:  # an embedded NUL, as Path.is_file
        return 0
    return st.st_mtime_ns if stat.S_ISREG(st.st_mode) else 0


@functools.lru_cache(maxsize=8)
def _load_tables_cached(folder: Path, stamps: tuple[int, ...]) -> FlagTables:
    """Parse and check both tables; the stamps only key the cache."""
    # Imported here: a catalog alone needs neither YAML nor the schema machinery.
    from generator.sglang.datafiles import raise_if_errors

    diags = Diagnostics()
    foreign = _foreign(folder / FOREIGN_FILE, diags) if stamps[0] else {}
    renames, groups = _renames(folder / RENAMES_FILE, diags) if stamps[1] else ({}, ())
    synonyms = _synonyms(folder / SYNONYMS_FILE, diags) if stamps[2] else {}
    raise_if_errors(diags)
    return FlagTables(foreign=foreign, renames=renames, dest_groups=groups, synonyms=synonyms)


def _synonyms(path: Path, diags: Diagnostics) -> dict[str, dict[str, str]]:
    """choice-synonyms.yaml: dest -> {word: choice}."""
    from generator.load.manifests import load_file
    from generator.sglang.datafiles import display_path

    doc = load_file(path, display_path(path), diags)
    if doc is None:
        return {}
    if not isinstance(doc.data, dict):
        diags.error(doc.pos(), "S002", "expected a mapping of settings (dests) at the top")
        return {}
    out: dict[str, dict[str, str]] = {}
    for dest, words in doc.data.items():
        if not isinstance(words, dict):
            diags.error(doc.pos((dest,)), "S002", f"'{dest}' must be a mapping of word: choice")
            continue
        for word, choice in words.items():
            if not isinstance(word, str) or not isinstance(choice, str):
                diags.error(doc.pos((dest, word)), "S002",
                            f"'{dest}.{word}' must map a word to a choice, both strings")
                continue
            out.setdefault(str(dest), {})[word.lower()] = choice
    return out


def _foreign(path: Path, diags: Diagnostics) -> dict[str, ForeignSpelling]:
    """foreign-flags.yaml: a mapping of flags, each entry checked against its schema."""
    from generator.load.manifests import load_file
    from generator.sglang.datafiles import display_path

    doc = load_file(path, display_path(path), diags)
    if doc is None:
        return {}
    if not isinstance(doc.data, dict):
        diags.error(doc.pos(), "S002", "expected a mapping of flags at the top")
        return {}
    out: dict[str, ForeignSpelling] = {}
    for spelling, entry in doc.data.items():
        if not isinstance(spelling, str) or not _FOREIGN_FLAG.fullmatch(spelling):
            diags.error(doc.pos((spelling,), key=True), "S009",
                        f"key {spelling!r} is not a flag ('-x' or '--name')")
            continue
        if not _foreign_entry_ok(doc, spelling, entry, diags):
            continue
        out[spelling] = ForeignSpelling(server=entry["server"], dest=entry.get("dest"),
                                        also=tuple(entry.get("also") or ()),
                                        note=entry.get("note") or "")
    return out


def _foreign_entry_ok(doc: Any, spelling: str, entry: Any, diags: Diagnostics) -> bool:
    """One entry against its schema (generator/sglang/datafiles.py), reported like a manifest's."""
    from generator.load.schema import validate
    from generator.sglang.datafiles import FOREIGN_ENTRY_SCHEMA

    if not isinstance(entry, dict):
        diags.error(doc.pos((spelling,)), "S002", f"'{spelling}' must be a mapping")
        return False
    return validate(doc, FOREIGN_ENTRY_SCHEMA, diags, base=(spelling,))


def _renames(path: Path, diags: Diagnostics) -> tuple[dict[str, tuple[str, ...]], tuple[tuple[str, ...], ...]]:
    """renames.yaml: option renames (read both ways) and dest groups."""
    from generator.sglang.datafiles import RENAMES_SCHEMA, load_data_file

    doc = load_data_file(path, RENAMES_SCHEMA, diags)
    if doc is None:
        return {}, ()
    renames: dict[str, tuple[str, ...]] = {}
    for old, new in (doc.data.get("options") or {}).items():
        # A flag split in two ("--x" -> "--x-decode", "--x-prefill") is a list.
        news = (new,) if isinstance(new, str) else tuple(new)
        renames[old] = renames.get(old, ()) + news
        for n in news:
            renames[n] = renames.get(n, ()) + (old,)
    groups = tuple(tuple(g) for g in doc.data.get("dests") or ())
    return renames, groups
