"""A host's checkpoint folder against the model's snapshot (gen verify, preflight): the on-host
script's real `check_weights` on stand-in folders, compared by `compare_snapshot`."""

from __future__ import annotations

import json
from pathlib import Path

from generator.checkpoint.capture import checkpoint_document
from generator.checkpoint.facts import CheckpointFacts
from generator.checkpoint.reader import read_folder
from generator.checkpoint.snapshot import ModelSnapshot
from generator.live.checkpoint_compare import compare_snapshot
from generator.live.onhost import check_weights
from generator.live.plan import checkpoint_expect
from generator.load.manifests import Document
from standin_checkpoint import write_checkpoint


def _expect(folder: Path):
    part = checkpoint_document(read_folder(str(folder)), {"kind": "folder", "path": str(folder)})
    snapshot = ModelSnapshot("m", "catalogs/models/m.json", Path("catalogs/models/m.json"), CheckpointFacts(part), None, Document("x", {}))
    return checkpoint_expect(snapshot, "checkpoint")


def test_the_same_checkpoint_passes(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    expect = _expect(folder)
    assert dict(expect.files).keys() == {"config.json", "model.safetensors.index.json"}
    assert compare_snapshot(check_weights(str(folder)), expect) == []


def test_a_changed_config_fails_naming_it(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    expect = _expect(folder)
    config = json.loads((folder / "config.json").read_text())
    config["num_key_value_heads"] = 4
    (folder / "config.json").write_text(json.dumps(config))
    [problem] = compare_snapshot(check_weights(str(folder)), expect)
    assert problem.startswith("config.json: changed since catalogs/models/m.json was captured")


def test_a_missing_index_or_other_shards_fail(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    expect = _expect(folder)
    other = write_checkpoint(tmp_path / "other", shards=3)
    problems = compare_snapshot(check_weights(str(other)), expect)
    assert any(p.startswith("model.safetensors.index.json: changed") for p in problems)
    assert any(p.startswith("model-00001-of-00003.safetensors: on the host's index but not in") for p in problems)
    assert any(p.startswith("model-00001-of-00002.safetensors: named by") for p in problems)
    (folder / "model.safetensors.index.json").unlink()
    assert any("model.safetensors.index.json: missing" in p for p in compare_snapshot(check_weights(str(folder)), expect))


def test_a_published_snapshot_without_hashes_expects_no_file() -> None:
    part = {"files": {"config.json": {"sha256": None, "bytes": None}}, "weights": None}
    snapshot = ModelSnapshot("m", "catalogs/models/m.json", Path("catalogs/models/m.json"), CheckpointFacts(part), None, Document("x", {}))
    expect = checkpoint_expect(snapshot, "checkpoint")
    assert expect is not None and expect.files == () and expect.shards == ()
