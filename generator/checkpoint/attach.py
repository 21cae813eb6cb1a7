"""Each model manifest with its checkpoint snapshot: weights from the facts, hand values checked.

:func:`load_models` is how the pipeline loads ``models/``: the manifests
(:func:`generator.load.sources.load_models`), then for each one its snapshot
``catalogs/models/<name>.json`` when there is one. With a snapshot:

* ``weights.size_gb``, ``weights.shards`` and ``weights.params_b`` come from it (the index's
  total_size, its shard files, the parameter count); a value typed in the manifest that
  disagrees is an error at that value (M010-M012), so the keys are optional;
* the snapshot rides on the model (``Model.snapshot``) for the rules and memory, read with
  :func:`snapshot_of`.

Without one everything works as before (``size_gb`` is then required: M010), and
:func:`models_without_snapshot` names the models for the one info line the CLI prints.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from generator.checkpoint.snapshot import ModelSnapshot, load_snapshot, snapshot_command
from generator.errors import Diagnostics
from generator.load import sources
from generator.load.resolve import Model
from generator.load.sources import ModelSet

# A hand-typed size or parameter count within 1% of the snapshot's agrees (234 for 233.7 GB);
# a GiB figure (7.4% less) does not: size_gb is decimal GB, as disk sizes are written.
TOLERANCE = 0.01


def snapshot_of(model: Model) -> ModelSnapshot | None:
    """The snapshot attached to ``model``, or None."""
    found = model.snapshot
    return found if isinstance(found, ModelSnapshot) else None


def load_models(root: Path) -> ModelSet:
    """Every model manifest, each with its snapshot's facts applied (module docstring)."""
    return attach_snapshots(root, sources.load_models(root))


def attach_snapshots(root: Path, models: ModelSet) -> ModelSet:
    """``models`` with each model's snapshot attached and weights resolved; findings added."""
    diags = Diagnostics()
    resolved = {}
    for name, model in models.models.items():
        snapshot = load_snapshot(root, name, diags)
        resolved[name] = resolve_weights(model, snapshot, diags)
    return dataclasses.replace(models, models=resolved, diagnostics=models.diagnostics + tuple(diags.items))


def _disagrees(hand: float, fact: float) -> bool:
    return abs(hand - fact) > TOLERANCE * max(abs(fact), 1e-9)


def resolve_weights(model: Model, snapshot: ModelSnapshot | None, diags: Diagnostics) -> Model:
    """The model with its weights from ``snapshot`` (hand values checked), or as written."""
    w = model.weights
    written = model.doc.value_pos
    if snapshot is None:
        if ("weights", "size_gb") not in written and not model.dropped("weights", "size_gb"):
            diags.error(model.pos("weights", key=True), "M010",
                        "weights.size_gb is missing and the model has no checkpoint snapshot",
                        f"write the size of the weights in GB, or capture the facts: `{snapshot_command(model.name)}`")
        return model
    facts = snapshot.checkpoint
    where = snapshot.display
    size, shards, params = facts.size_gb, facts.shard_count, facts.params_b
    if size is not None and ("weights", "size_gb") in written and _disagrees(w.size_gb, size):
        gib = facts.total_size / 2**30 if facts.total_size else 0
        also = " (that is the size in GiB: size_gb is decimal GB)" if gib and not _disagrees(w.size_gb, gib) else ""
        diags.error(model.pos("weights", "size_gb"), "M010",
                    f"weights.size_gb {w.size_gb:g} disagrees with the checkpoint: its index says "
                    f"{size:.1f} GB (total_size {facts.total_size} bytes, {where}){also}",
                    "remove weights.size_gb (the snapshot gives it) or correct it")
    if shards is not None and ("weights", "shards") in written and w.shards != shards:
        diags.error(model.pos("weights", "shards"), "M011",
                    f"weights.shards {w.shards} disagrees with the checkpoint: it has {shards} safetensors "
                    f"file(s) ({where})", "remove weights.shards (the snapshot gives it) or correct it")
    if params is not None and ("weights", "params_b") in written and w.params_b is not None \
            and _disagrees(float(w.params_b), params):
        diags.error(model.pos("weights", "params_b"), "M012",
                    f"weights.params_b {w.params_b:g} disagrees with the checkpoint: it holds {params:.1f}B "
                    f"parameters ({where})", "remove weights.params_b (the snapshot gives it) or correct it")
    weights = dataclasses.replace(
        w, size_gb=size if size is not None else w.size_gb,
        shards=shards if shards is not None else w.shards,
        params_b=round(params, 3) if params is not None else w.params_b,
        source="snapshot" if size is not None else w.source)
    if size is None and ("weights", "size_gb") not in written:
        diags.error(model.pos("weights", key=True), "M010",
                    f"weights.size_gb is missing and the snapshot {where} has no weights' size",
                    f"write the size of the weights in GB, or capture the facts from the checkpoint folder: "
                    f"`{snapshot_command(model.name)}`")
    return dataclasses.replace(model, weights=weights, snapshot=snapshot)


def models_without_snapshot(models: ModelSet) -> list[str]:
    """Names of the loaded models that have no snapshot (model checks skipped for them)."""
    return [name for name, model in models.models.items() if snapshot_of(model) is None]
