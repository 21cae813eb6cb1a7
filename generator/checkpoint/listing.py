"""Which model manifests have a snapshot: file names only, for the one info line of every run.

Standard library only, so a warm `gen check` (answered from the render cache) imports
nothing heavy to print it.
"""

from __future__ import annotations

import os
from pathlib import Path

FOLDER = Path("catalogs") / "models"


def snapshot_files(root: Path) -> list[str]:
    """The model names of every ``catalogs/models/*.json`` (hidden entries skipped), sorted."""
    try:
        with os.scandir(root / FOLDER) as entries:
            return sorted(e.name[:-5] for e in entries if e.name.endswith(".json") and not e.name.startswith("."))
    except OSError:
        return []


def missing_snapshots(root: Path) -> list[str]:
    """The model manifests (``models/*.yaml``) that have no ``catalogs/models/<name>.json``."""
    try:
        with os.scandir(root / "models") as entries:
            names = {e.name.rsplit(".", 1)[0] for e in entries
                     if e.name.endswith((".yaml", ".yml")) and not e.name.startswith(".")}
    except OSError:
        return []
    have = set(snapshot_files(root))
    return sorted(n for n in names if n not in have)
