"""The on-host weights check (generator/live/onhost.py ``check_weights``): the index's names are data.

``model.safetensors.index.json`` comes with the checkpoint, not from gen. A shard name that is
absolute or climbs out of the folder is reported as a problem and never opened: before, its
first 8 bytes were read (and their value printed as an implausible header length).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "live"))
from standins.fake_model import safetensors_bytes  # noqa: E402  (FAKE checkpoints, stdlib only)

from generator.live.onhost import INDEX_FILE, check_weights  # noqa: E402


def test_an_index_naming_files_outside_the_folder_opens_none_of_them(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "a.safetensors").write_bytes(safetensors_bytes(["w"]))
    secret = tmp_path / "secret.safetensors"
    secret.write_bytes(b"root:$6$" + b"x" * 64)
    weight_map = {"w": "a.safetensors", "x": str(secret), "y": "../secret.safetensors",
                  "z": "sub/../../secret.safetensors"}
    (model / INDEX_FILE).write_text(json.dumps({"weight_map": weight_map}))
    report = check_weights(str(model))
    assert [s["file"] for s in report["shards"]] == ["a.safetensors"]  # only the one inside was opened
    named = sorted(p.split(" names ")[1].split(",")[0] for p in report["problems"])
    assert named == sorted(repr(n) for n in (str(secret), "../secret.safetensors", "sub/../../secret.safetensors"))
    assert not any("plausible" in p for p in report["problems"])
