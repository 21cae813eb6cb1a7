"""catalogs/models/<model>.json: read like every catalog (regular files, positioned errors), and
used by the manifest (weights from the snapshot, hand values that disagree refused)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.checkpoint.attach import load_models, snapshot_of
from generator.checkpoint.snapshot import load_snapshot, snapshot_path
from generator.cli.main import main
from generator.errors import Diagnostics
from generator.load.captured import captured_json
from standin_checkpoint import write_checkpoint

MODEL = "qwen3.5-122b-a10b"


def _capture(repo: Path, tmp_path: Path, model: str = MODEL) -> Path:
    folder = write_checkpoint(tmp_path / "ck")
    result = CliRunner().invoke(main, ["model", "snapshot", "--root", str(repo), "--model", model, str(folder)])
    assert result.exit_code == 0, result.output
    return snapshot_path(repo, model)


def _check(repo: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--jobs", "1"])
    return result.exit_code, result.output


def _loaded(repo: Path) -> tuple[object, list[str]]:
    diags = Diagnostics()
    found = load_snapshot(repo, MODEL, diags)
    return found, [str(d) for d in diags.items]


def test_a_snapshot_loads_with_its_facts(repo_copy: Path, tmp_path: Path) -> None:
    _capture(repo_copy, tmp_path)
    found, problems = _loaded(repo_copy)
    assert problems == []
    assert found is not None and found.checkpoint.architecture == "LlamaForCausalLM"
    assert found.checkpoint.int_of("num_key_value_heads") == 8
    assert found.checkpoint.shard_count == 2
    assert found.checkpoint.has_tensor("model.layers.1.mlp.")
    assert not found.checkpoint.has_tensor("model.layers.2.")


@pytest.mark.parametrize("edit, where, code", [
    (lambda t: t[:-40], ":", "C040"),  # cut short: the parser's line and column
    (lambda t: t.replace('"format": 1', '"format": 2'), "", "C041"),
    (lambda t: t.replace('"model": "qwen3.5-122b-a10b"', '"model": "other"'), "", "C041"),
    (lambda t: t.replace('"tensor_count": ', '"tensor_count": -'), "", "S005"),
    (lambda t: t.replace('"header_sha256": "', '"header_sha256": "zz'), "", "S009"),
    (lambda t: t.replace('"generation_config": null', '"generation_config": 5'), "", "S002"),
])
def test_a_broken_snapshot_is_a_positioned_error(repo_copy: Path, tmp_path: Path, edit, where: str,
                                                 code: str) -> None:
    path = _capture(repo_copy, tmp_path)
    text = edit(path.read_text())
    path.write_text(text)
    found, problems = _loaded(repo_copy)
    assert found is None
    problem = next(p for p in problems if f"[{code}]" in p)
    position, line = problem.split(": ", 1)[0], int(problem.split(":")[1])
    assert position.startswith("catalogs/models/qwen3.5-122b-a10b.json:")
    assert line > 1 or code == "C040"
    if code != "C040":  # the line named holds the broken key or value
        key = {"C041": '"format"' if "format\": 2" in text else '"model"', "S005": '"tensor_count"',
               "S009": '"header_sha256"', "S002": '"generation_config"'}[code]
        assert key in text.splitlines()[line - 1]
    status, output = _check(repo_copy)
    assert status == 1 and f"error[{code}]" in output and "Traceback" not in output


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_a_snapshot_that_is_no_regular_file_is_refused(repo_copy: Path, tmp_path: Path, kind: str) -> None:
    path = snapshot_path(repo_copy, MODEL)
    path.unlink()
    if kind == "symlink":
        path.symlink_to("/etc/passwd")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    found, problems = _loaded(repo_copy)
    assert found is None and any("[Y009]" in p for p in problems), problems


def test_weights_come_from_the_snapshot(repo_copy: Path, tmp_path: Path) -> None:
    path = _capture(repo_copy, tmp_path)
    size = json.loads(path.read_text())["checkpoint"]["weights"]["total_size"]
    manifest = repo_copy / "models" / f"{MODEL}.yaml"
    text = manifest.read_text()
    text = text.replace("  size_gb: 234\n", "").replace("  shards: 39\n", "").replace("  params_b: 125\n", "")
    manifest.write_text(text)
    model = load_models(repo_copy).models[MODEL]
    assert snapshot_of(model) is not None
    assert model.weights.size_gb == size / 1e9 and model.weights.shards == 2
    assert model.weights.source == "snapshot"


@pytest.mark.parametrize("key, written, code, says", [
    ("size_gb", "234", "M010", "disagrees with the checkpoint"),
    ("shards", "39", "M011", "it has 2 safetensors file(s)"),
    ("params_b", "125", "M012", "parameters"),
])
def test_a_hand_value_that_disagrees_is_an_error(repo_copy: Path, tmp_path: Path, key: str, written: str,
                                                 code: str, says: str) -> None:
    _capture(repo_copy, tmp_path)
    manifest = repo_copy / "models" / f"{MODEL}.yaml"
    lines = manifest.read_text().splitlines()
    line = next(i for i, ln in enumerate(lines, 1) if ln.strip() == f"{key}: {written}")
    status, output = _check(repo_copy)
    assert status == 1
    found = [ln for ln in output.splitlines() if f"error[{code}]" in ln]
    assert found and found[0].startswith(f"models/{MODEL}.yaml:{line}:"), output
    assert says in found[0]


def test_a_gib_size_is_named_as_such(repo_copy: Path, tmp_path: Path) -> None:
    path = _capture(repo_copy, tmp_path)
    doc = json.loads(path.read_text())
    doc["checkpoint"]["weights"]["total_size"] = 251_255_586_816  # 234 GiB
    path.write_text(captured_json(doc))  # a re-capture's stamp: the edit is the test's, not C016's
    status, output = _check(repo_copy)
    assert "that is the size in GiB" in output


def test_a_value_that_agrees_is_fine(repo_copy: Path, tmp_path: Path) -> None:
    path = _capture(repo_copy, tmp_path)
    doc = json.loads(path.read_text())
    doc["checkpoint"]["weights"]["total_size"] = 233_700_000_000
    doc["checkpoint"]["weights"]["total_parameters"] = 125_300_000_000
    doc["checkpoint"]["weights"]["shards"] = [dict(doc["checkpoint"]["weights"]["shards"][0], file=f"m{i}.safetensors")
                                              for i in range(39)]
    path.write_text(captured_json(doc))  # a re-capture's stamp: the edit is the test's, not C016's
    status, output = _check(repo_copy)
    assert not any(f"[{code}]" in output for code in ("M010", "M011", "M012", "C016")), output


def test_size_gb_is_required_without_a_snapshot(repo_copy: Path) -> None:
    snapshot_path(repo_copy, MODEL).unlink()
    manifest = repo_copy / "models" / f"{MODEL}.yaml"
    manifest.write_text(manifest.read_text().replace("  size_gb: 234\n", ""))
    status, output = _check(repo_copy)
    assert status == 1
    line = next(ln for ln in output.splitlines() if "error[M010]" in ln)
    assert line.startswith(f"models/{MODEL}.yaml:") and "gen model snapshot --model" in line


def test_the_example_snapshots_load_and_say_where_they_came_from() -> None:
    root = Path(__file__).resolve().parent.parent
    for name in ("qwen3.5-122b-a10b", "kimi-k2.5-eagle3", "deepseek-v3-bf16"):
        diags = Diagnostics()
        found = load_snapshot(root, name, diags)
        assert found is not None and diags.items == [], [str(d) for d in diags.items]
        source = found.checkpoint.data["source"]
        assert source["kind"] == "published" and source["urls"] and "cannot reach huggingface.co" in source["note"]
    kimi = load_snapshot(root, "kimi-k2.5-eagle3", Diagnostics())
    assert kimi is not None and kimi.draft is not None and kimi.draft.architecture == "LlamaForCausalLMEagle3"
