"""Rollout strategy settings: ``rollout.yaml`` for the repository, ``rollout:`` per model.

An operator writes the strategy once, at the repository's root, the way ``ansible.cfg``
or a chart's ``values.yaml`` sit beside what they configure, and a model manifest can
override any key for its own services (its ``rollout:`` section), as a Kubernetes
Deployment carries its own ``strategy``. Every key is optional:

* ``canary`` (default 1): hosts rolled out first, on their own, before any batch;
* ``batch`` (default ``25%``): hosts per batch after the canary, a number or a
  percentage of the hosts the play rolls out (at least 1);
* ``max_fail_percentage`` (default 0): the failure budget, Ansible's own setting: the
  percentage of a batch's hosts that may fail before the run stops (0: any failure
  stops it); the batch that fails rolls back and the hosts after it are not touched;
* ``max_unavailable`` (default 1): replicas of one model (its services on different
  hosts) that may restart at once, a number or a percentage of the model's hosts (at
  least 1): with the default, two replicas of a model are never down together.

Models with the same ``canary``, ``batch`` and ``max_fail_percentage`` roll out in one play
(generator/plan/rollout.py makes the batches). The file's YAML and schema problems keep
their Y/S codes; a size that is neither a count nor a percentage is A001.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.errors import Diagnostics, Position
from generator.load.files import SourceFile, read_file
from generator.load.manifests import Document, load_source
from generator.load.schema import ROLLOUT_SCHEMA, check_strings, validate

ROLLOUT_FILE = "rollout.yaml"
KEYS = tuple(ROLLOUT_SCHEMA)


@dataclass(frozen=True)
class Size:
    """A number of hosts, or a percentage of some number of hosts."""

    value: int
    percent: bool = False

    @staticmethod
    def parse(raw: Any) -> Size:
        """A validated size (an int >= 1, or 'N%')."""
        if isinstance(raw, str):
            return Size(int(raw.strip().rstrip("%")), percent=True)
        return Size(int(raw))

    def of(self, total: int) -> int:
        """The count for TOTAL hosts: a percentage rounds down, as Ansible's serial does, to at least 1."""
        count = total * self.value // 100 if self.percent else self.value
        return max(1, count)

    def __str__(self) -> str:
        return f"{self.value}%" if self.percent else str(self.value)


@dataclass(frozen=True)
class RolloutSettings:
    """One model's effective rollout settings, and where each non-default value was written."""

    canary: int = 1
    batch: Size = Size(25, percent=True)
    max_fail_percentage: int = 0
    max_unavailable: Size = Size(1)
    # key -> where the value in force was written (rollout.yaml or the model's manifest).
    written_at: tuple[tuple[str, Position], ...] = field(default=(), compare=False)

    def updated(self, values: Mapping[str, Any], positions: Mapping[str, Position]) -> RolloutSettings:
        """These settings with VALUES (validated, raw as written) in force, from POSITIONS."""
        changes: dict[str, Any] = {}
        for key, raw in values.items():
            changes[key] = Size.parse(raw) if key in ("batch", "max_unavailable") else int(raw)
        where = dict(self.written_at) | {k: positions[k] for k in values if k in positions}
        return replace(self, **changes, written_at=tuple(sorted(where.items())))

    def position(self, key: str) -> Position | None:
        """Where KEY's value was written (None: gen's default)."""
        return dict(self.written_at).get(key)

    @property
    def play_key(self) -> tuple[int, str, int]:
        """What one play shares: models that agree on it roll out together."""
        return self.canary, str(self.batch), self.max_fail_percentage


DEFAULTS = RolloutSettings()


def _values(doc: Document, base: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Position]]:
    data: Any = doc.data
    for step in base:
        data = data.get(step) if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return {}, {}
    values = {k: v for k, v in data.items() if k in KEYS}
    return values, {k: doc.pos(base + (k,)) for k in values}


def load_rollout(root: Path, diags: Diagnostics) -> RolloutSettings:
    """The repository's settings from ROOT/rollout.yaml (gen's defaults when there is none).

    Problems go to DIAGS with their positions; on any, gen's defaults are returned.
    """
    path = root / ROLLOUT_FILE
    if not path.exists() and not path.is_symlink():
        return DEFAULTS
    data, error = read_file(path, ROLLOUT_FILE)
    doc = load_source(SourceFile(path, ROLLOUT_FILE, data, error), diags)
    if doc is None:
        return DEFAULTS
    if doc.data is None:  # an empty file: every default
        return DEFAULTS
    start = diags.error_count
    if not (check_strings(doc, diags) and validate(doc, ROLLOUT_SCHEMA, diags)) or diags.error_count > start:
        return DEFAULTS
    return DEFAULTS.updated(*_values(doc, ()))


def model_settings(repo: RolloutSettings, overrides: tuple[tuple[str, Any], ...],
                   doc: Document | None) -> RolloutSettings:
    """A model's settings: the repository's, with its manifest's ``rollout:`` keys in force."""
    if not overrides:
        return repo
    positions = {k: doc.pos(("rollout", k)) for k, _ in overrides} if doc is not None else {}
    return repo.updated(dict(overrides), positions)
