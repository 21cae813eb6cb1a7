"""Model snapshots, ``catalogs/models/<model>.json``: the format, writing, reading with positions.

A snapshot is data gen captured from a checkpoint (``gen model snapshot``), committed and
reviewed as a diff, like the flag catalogs. It is repository content a pull request
controls, so it is read like every catalog: regular files only (no symlink, FIFO, device),
bounded, and every problem is a positioned diagnostic: JSON syntax at the parser's line and
column (C040), schema problems at the broken key or value (S codes, as for rules.yaml), the
format or the model name wrong (C041). A broken snapshot is an error of its model; the model's
other checks still run without it.

Format 1 (``catalogs/README.md`` documents every key)::

    {"format": 1, "model": "<models/NAME.yaml's name>",
     "captured": {"tool": "gen model snapshot", "reader": 1},
     "checkpoint": CHECKPOINT, "draft": CHECKPOINT | null}

    CHECKPOINT = {"source": {"kind": "folder" | "host" | "hub" | "published", ...},
                  "files": {name: {"sha256": hex | null, "bytes": int | null}},
                  "config": {...config.json whole...}, "generation_config": {...} | null,
                  "remote_code": {"auto_map": {...} | null, "files": {file: {"classes", "present"}}},
                  "weights": null | {"format", "index", "total_size", "total_parameters",
                                     "shards": [{"file", "bytes", "header_sha256", "tensors"}],
                                     "dtypes": {dtype: {"tensors", "elements", "bytes"}} | null,
                                     "tensor_count", "tensor_names": {template: numbers}}}

The text is ``captured_json(doc)`` (generator/load/captured.py: indent 1, sorted keys, ASCII,
a final newline, the capture header's ``sha256`` of the file itself): a re-capture of the same
checkpoint is byte-identical (no date is recorded), and an edit after it is C016.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.checkpoint.facts import CheckpointFacts
from generator.checkpoint.jsonpos import positioned
from generator.checkpoint.listing import FOLDER
from generator.errors import Diagnostic, Diagnostics, Position
from generator.load.captured import captured_json
from generator.load.files import read_file
from generator.load.manifests import Document
from generator.load.schema import validate

SNAPSHOT_FORMAT = 1
# The largest snapshot (a 1T MoE with its drafter) is ~100 KB: tensor names are templates.
MAX_SNAPSHOT_BYTES = 16 << 20
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_HEX64 = r"^[0-9a-f]{64}$"
_NUMBERS = r"^$|^[0-9,\- x()+]+$"

_INT = {"type": "integer", "min": 0, "nullable": True}
_HASH = {"type": "string", "regex": _HEX64, "nullable": True}
_SOURCE = {
    "type": "dict", "required": True,
    "schema": {
        "kind": {"type": "string", "required": True, "allowed": ["folder", "host", "hub", "published"]},
        "path": {"type": "string", "nullable": True},
        "host": {"type": "string", "nullable": True},
        "repo": {"type": "string", "nullable": True},
        "revision": {"type": "string", "nullable": True},
        "commit": {"type": "string", "regex": r"^[0-9a-f]{40}$", "nullable": True},
        "urls": {"type": "list", "schema": {"type": "string"}},
        "note": {"type": "string"},
    },
}
_WEIGHTS = {
    "type": "dict", "nullable": True, "required": True,
    "schema": {
        "format": {"type": "string", "required": True, "allowed": ["safetensors"]},
        "index": {"type": "string", "nullable": True, "required": True},
        "total_size": {**_INT, "required": True},
        "total_parameters": {**_INT, "required": True},
        "shards": {"type": "list", "required": True, "schema": {"type": "dict", "schema": {
            "file": {"type": "string", "required": True, "regex": r"^[^/\\]+\.safetensors$"},
            "bytes": {**_INT, "required": True},
            "header_sha256": {**_HASH, "required": True},
            "tensors": {**_INT, "required": True},
        }}},
        "dtypes": {"type": "dict", "nullable": True, "required": True, "keysrules": {"type": "string"},
                   "valuesrules": {"type": "dict", "schema": {
                       "tensors": {"type": "integer", "min": 0, "required": True},
                       "elements": {"type": "integer", "min": 0, "required": True},
                       "bytes": {"type": "integer", "min": 0, "required": True}}}},
        "tensor_count": {"type": "integer", "min": 0, "required": True},
        "tensor_names": {"type": "dict", "required": True, "keysrules": {"type": "string"},
                         "valuesrules": {"type": "string", "regex": _NUMBERS}},
    },
}
_CHECKPOINT = {
    "source": _SOURCE,
    "files": {"type": "dict", "required": True, "keysrules": {"type": "string"},
              "valuesrules": {"type": "dict", "schema": {"sha256": {**_HASH, "required": True},
                                                        "bytes": {**_INT, "required": True}}}},
    "config": {"type": "dict", "required": True},
    "generation_config": {"type": "dict", "nullable": True, "required": True},
    "remote_code": {"type": "dict", "required": True, "schema": {
        "auto_map": {"type": "dict", "nullable": True, "required": True},
        "files": {"type": "dict", "required": True, "keysrules": {"type": "string"},
                  "valuesrules": {"type": "dict", "schema": {
                      "classes": {"type": "list", "required": True, "schema": {"type": "string"}},
                      "present": {"type": "boolean", "required": True}}}}}},
    "weights": _WEIGHTS,
}
SNAPSHOT_SCHEMA: dict[str, Any] = {
    "format": {"type": "integer", "required": True},
    "model": {"type": "string", "required": True},
    "captured": {"type": "dict", "required": True, "schema": {
        "tool": {"type": "string", "required": True}, "reader": {"type": "integer", "required": True},
        "sha256": {"type": "string", "required": True, "regex": _HEX64}}},
    "note": {"type": "string"},
    "checkpoint": {"type": "dict", "required": True, "schema": _CHECKPOINT},
    "draft": {"type": "dict", "nullable": True, "required": True, "schema": _CHECKPOINT},
}


@dataclass(frozen=True)
class ModelSnapshot:
    """One model's snapshot: its checkpoint's facts and its draft model's (None without one)."""

    model: str
    display: str  # catalogs/models/<model>.json, as diagnostics print it
    path: Path  # the file read (its capture digest names it in rendered files)
    checkpoint: CheckpointFacts
    draft: CheckpointFacts | None
    document: Document  # positions, for findings that point into the snapshot

    def as_json(self) -> dict[str, Any]:
        """The facts gen uses, for ``gen show --format json``."""
        return {"snapshot": self.display, "checkpoint": self.checkpoint.summary(),
                "draft": self.draft.summary() if self.draft else None}


def snapshot_path(root: Path, model: str) -> Path:
    """Where the snapshot of model manifest ``model`` lives."""
    return root / FOLDER / f"{model}.json"


def render_snapshot(doc: dict[str, Any]) -> str:
    """The committed text of a snapshot document (deterministic), stamped with its capture
    header's digest (generator/load/captured.py: an edit after the capture is C016)."""
    return captured_json(doc)


def snapshot_command(model: str) -> str:
    """The command that captures a model's snapshot, as messages name it."""
    return f"gen model snapshot --model {model} SOURCE (a checkpoint folder, --host H PATH, or a hub repo id)"


def load_snapshot(root: Path, model: str, diags: Diagnostics) -> ModelSnapshot | None:
    """The snapshot of ``model``, or None (no file: nothing recorded; a broken one: findings)."""
    path = snapshot_path(root, model)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        diags.error(Position(_display(model)), "Y008", f"cannot read file: {exc.strerror or exc}")
        return None
    found = _load_cached(str(path), model, info.st_mtime_ns, info.st_size, info.st_ino)
    diags.items.extend(found[1])
    return found[0]


def _display(model: str) -> str:
    return f"{FOLDER.as_posix()}/{model}.json"


@functools.lru_cache(maxsize=64)
def _load_cached(path: str, model: str, mtime_ns: int, size: int, inode: int) -> tuple[ModelSnapshot | None,
                                                                                      tuple[Diagnostic, ...]]:
    """Read and check one snapshot file; the stamp arguments only key the cache."""
    display = _display(model)
    diags = Diagnostics()
    data, problem = read_file(Path(path), display, limit=MAX_SNAPSHOT_BYTES)
    if problem is not None or data is None:
        diags.add(problem or Diagnostic(Position(display), "Y008", "cannot read file"))
        return None, tuple(diags.items)
    snapshot = snapshot_from_bytes(data, display, model, diags, Path(path))
    return snapshot, tuple(diags.items)


def snapshot_from_bytes(data: bytes, display: str, model: str, diags: Diagnostics,
                        path: Path | None = None) -> ModelSnapshot | None:
    """Parse and check the bytes of a snapshot file; None with findings when it is broken."""
    from generator.checkpoint.reader import Problem, parse_json

    try:
        parsed = parse_json(display, data)
    except Problem as problem:
        diags.error(Position(display, problem.line, problem.column), "C040", f"model snapshot {problem.message}; "
                    f"re-capture it with `{snapshot_command(model)}`")
        return None
    doc = Document(display, parsed)
    if not isinstance(parsed, dict) or not validate(doc, SNAPSHOT_SCHEMA, Diagnostics()):
        doc = positioned(data.decode("utf-8"), display)  # the same data, now with positions
        validate(doc, SNAPSHOT_SCHEMA, diags)
        return None
    if parsed["format"] != SNAPSHOT_FORMAT:
        doc = positioned(data.decode("utf-8"), display)
        diags.error(doc.pos(("format",)), "C041", f"model snapshot format {parsed['format']} is not "
                    f"{SNAPSHOT_FORMAT}; re-capture it with `{snapshot_command(model)}`")
        return None
    if parsed["model"] != model:
        doc = positioned(data.decode("utf-8"), display)
        diags.error(doc.pos(("model",)), "C041", f"the snapshot in {display} is of model '{parsed['model']}', "
                    f"not '{model}'; snapshots are named after the model manifest they serve")
        return None
    return ModelSnapshot(model, display, path or Path(display), CheckpointFacts(parsed["checkpoint"], "checkpoint"),
                         CheckpointFacts(parsed["draft"], "draft") if parsed["draft"] else None, doc)


def valid_model_name(name: str) -> bool:
    """True for a name a manifest may carry (and so a snapshot file may be named after)."""
    return bool(_NAME_RE.fullmatch(name))

