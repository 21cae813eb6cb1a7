"""`gen model snapshot`: the checkpoint reader on stand-in checkpoints, a hub cache read by the
real huggingface_hub, and untrusted input (each bad checkpoint a positioned error, never a
traceback or a hang)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.checkpoint import reader
from generator.checkpoint.capture import checkpoint_document
from generator.checkpoint.names import compact_names, expand_names
from generator.checkpoint.snapshot import snapshot_path
from generator.cli.main import main
from standin_checkpoint import LLAMA_CONFIG, llama_tensors, write_checkpoint, write_hub_cache

GEN = Path(sys.executable).with_name("gen")


def _snapshot(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GEN), "model", "snapshot", "--root", str(root), *args], capture_output=True,
                          text=True, timeout=60, env=env)


def test_folder_facts(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    facts = reader.read_folder(str(folder))
    weights = checkpoint_document(facts, {})["weights"]
    assert facts["problems"] == []
    assert facts["config"] == LLAMA_CONFIG
    assert [s["file"] for s in weights["shards"]] == ["model-00001-of-00002.safetensors",
                                                       "model-00002-of-00002.safetensors"]
    assert weights["dtypes"]["BF16"]["elements"] == sum(
        (s[1][0] * (s[1][1] if len(s[1]) > 1 else 1)) for s in llama_tensors().values())
    assert weights["total_size"] == weights["dtypes"]["BF16"]["bytes"]
    assert expand_names(weights["tensor_names"]) == sorted(llama_tensors())
    assert weights["tensor_names"]["model.layers.*.mlp.down_proj.weight"] == "0-1"
    assert set(facts["files"]) == {"config.json", "model.safetensors.index.json"}
    for shard in weights["shards"]:
        assert shard["bytes"] == (folder / shard["file"]).stat().st_size
        assert len(shard["header_sha256"]) == 64


def test_a_single_file_checkpoint_without_index(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck", index=False)
    weights = checkpoint_document(reader.read_folder(str(folder)), {})["weights"]
    assert weights["index"] is None and [s["file"] for s in weights["shards"]] == ["model.safetensors"]
    assert expand_names(weights["tensor_names"]) == sorted(llama_tensors())


def test_remote_code_is_recorded_never_run(tmp_path: Path) -> None:
    config = {**LLAMA_CONFIG, "auto_map": {"AutoConfig": "configuration_x.XConfig",
                                           "AutoModel": "other/repo--modeling_y.Y"}}
    folder = write_checkpoint(tmp_path / "ck", config)
    (folder / "configuration_x.py").write_text("raise SystemExit('never imported')\n")
    facts = reader.read_folder(str(folder))
    assert facts["problems"] == []
    assert checkpoint_document(facts, {})["remote_code"]["files"] == {
        "configuration_x.py": {"classes": ["configuration_x.XConfig"], "present": True},
        "other/repo--modeling_y.py": {"classes": ["other/repo--modeling_y.Y"], "present": False}}
    assert "configuration_x.py" in facts["files"]


@settings(max_examples=60, deadline=None)
@given(st.sets(st.tuples(st.sampled_from(["a", "b.c", "layers"]), st.integers(0, 40), st.integers(0, 5),
                         st.sampled_from(["w", "x.y", "07"])), min_size=1, max_size=60))
def test_tensor_name_templates_are_exact(parts: set[tuple[str, int, int, str]]) -> None:
    names = {f"{a}.{i}.m.{j}.{tail}" for a, i, j, tail in parts} | {"lm_head.weight", "a.*.b"}
    compact = compact_names(names)
    assert expand_names(compact) == sorted(names)


def test_a_moe_index_compacts_to_a_few_templates() -> None:
    names = {f"model.layers.{i}.mlp.experts.{e}.{p}.weight" for i in range(3, 61) for e in range(256)
             for p in ("gate_proj", "up_proj", "down_proj")}
    names |= {f"model.layers.{i}.mlp.down_proj.weight" for i in range(3)}
    compact = compact_names(names)
    assert compact["model.layers.*.mlp.experts.*.down_proj.weight"] == "3-60 x 0-255"
    assert compact["model.layers.*.mlp.down_proj.weight"] == "0-2"
    assert len(json.dumps(compact)) < 400
    assert expand_names(compact) == sorted(names)


# ----- untrusted input: every case a positioned error, exit 1, nothing written --------------


def _bad(tmp_path: Path, how: str) -> Path:
    folder = write_checkpoint(tmp_path / how)
    shard = folder / "model-00001-of-00002.safetensors"
    index = folder / "model.safetensors.index.json"
    if how == "truncated-index":
        index.write_bytes(index.read_bytes()[:150])
    elif how == "header-claim":
        with shard.open("r+b") as handle:
            handle.write(struct.pack("<Q", 2 * 1024**3))
    elif how == "header-longer-than-file":
        with shard.open("r+b") as handle:
            handle.write(struct.pack("<Q", 50_000_000))
    elif how == "symlinked-shard":
        target = tmp_path / "elsewhere.safetensors"
        shard.rename(target)
        shard.symlink_to(target)
    elif how == "config-not-json":
        (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],\n  "vocab_size": 12,,\n}')
    elif how == "config-not-object":
        (folder / "config.json").write_text("[1, 2]")
    elif how == "fifo-shard":
        shard.unlink()
        os.mkfifo(shard)
    elif how == "device-config":
        (folder / "config.json").unlink()
        (folder / "config.json").symlink_to("/dev/zero")
    elif how == "shard-cut-short":
        shard.write_bytes(shard.read_bytes()[:-10])
    elif how == "missing-shard":
        shard.unlink()
    elif how == "index-lies":
        data = json.loads(index.read_text())
        data["weight_map"]["model.layers.9.extra.weight"] = shard.name
        index.write_text(json.dumps(data))
    elif how == "index-escapes":
        data = json.loads(index.read_text())
        data["weight_map"]["lm_head.weight"] = "../../etc/passwd.safetensors"
        index.write_text(json.dumps(data))
    elif how == "header-not-json":
        raw = b"{not json"
        shard.write_bytes(struct.pack("<Q", len(raw)) + raw)
    return folder


BAD = {
    "truncated-index": ("model.safetensors.index.json:", "M002", "is not valid JSON"),
    "header-claim": ("model-00001-of-00002.safetensors:1:1", "M001", "claims a 2147483648-byte safetensors header"),
    "header-longer-than-file": ("model-00001-of-00002.safetensors:1:1", "M003", "but the file has only"),
    "symlinked-shard": ("model-00001-of-00002.safetensors", "M001", "is a symbolic link"),
    "config-not-json": ("config.json:2:20", "M002", "is not valid JSON"),
    "config-not-object": ("config.json:1:1", "M002", "is not a JSON object"),
    "fifo-shard": ("model-00001-of-00002.safetensors", "M001", "is a FIFO"),
    "device-config": ("config.json", "M001", "is a symbolic link"),
    "shard-cut-short": ("model-00001-of-00002.safetensors", "M003", "its header says"),
    "missing-shard": ("model-00001-of-00002.safetensors", "M003", "is missing"),
    "index-lies": ("model-00001-of-00002.safetensors", "M003", "lacks 1 tensor(s) the index names"),
    "index-escapes": ("model.safetensors.index.json", "M002", "not a .safetensors file of this folder"),
    "header-not-json": ("model-00001-of-00002.safetensors:1:2", "M002", "is not valid JSON"),
}


@pytest.mark.parametrize("how", sorted(BAD))
def test_bad_checkpoint_is_a_positioned_error(repo_copy: Path, tmp_path: Path, how: str) -> None:
    folder = _bad(tmp_path, how)
    where, code, text = BAD[how]
    committed = snapshot_path(repo_copy, "qwen3.5-122b-a10b").read_bytes()
    out = _snapshot(repo_copy, "--model", "qwen3.5-122b-a10b", str(folder))
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    line = next(ln for ln in out.stderr.splitlines() if f"error[{code}]" in ln)
    assert line.startswith(f"{folder}/{where}"), line
    assert text in line
    assert "no snapshot written" in out.stderr
    assert snapshot_path(repo_copy, "qwen3.5-122b-a10b").read_bytes() == committed


def test_every_problem_at_once(repo_copy: Path, tmp_path: Path) -> None:
    folder = _bad(tmp_path, "header-claim")
    (folder / "config.json").write_text("{")
    os.unlink(folder / "model-00002-of-00002.safetensors")
    out = _snapshot(repo_copy, "--model", "qwen3.5-122b-a10b", str(folder))
    assert out.returncode == 1
    assert [c for c in ("M001", "M002", "M003") if f"error[{c}]" in out.stderr] == ["M001", "M002", "M003"]


def test_the_reader_never_follows_an_index_into_a_fifo_without_a_bound(tmp_path: Path) -> None:
    # The whole reader as the host runs it (python - PATH): a FIFO index must not block it.
    folder = _bad(tmp_path, "fifo-shard")
    (folder / "model.safetensors.index.json").unlink()
    os.mkfifo(folder / "model.safetensors.index.json")
    facts = _as_the_host_runs_it(folder)
    assert any("is a FIFO" in p["message"] for p in facts["problems"])


def _as_the_host_runs_it(folder: Path) -> dict:
    """The reader alone on stdin, as a host runs it: -I -S so gen's own package (the
    editable install, the working folder) is not importable, as on a host."""
    done = subprocess.run([sys.executable, "-I", "-S", "-", str(folder)],
                          input=reader.__loader__.get_data(reader.__file__), capture_output=True, timeout=30)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return json.loads(done.stdout.decode().split(reader.RESULT_MARKER, 1)[1])


def test_the_reader_runs_alone_on_a_host_without_gen(tmp_path: Path) -> None:
    facts = _as_the_host_runs_it(write_checkpoint(tmp_path / "ck"))
    assert not facts["problems"] and facts["config"]


# ----- writing, the CLI ---------------------------------------------------------------------


def test_snapshot_written_and_stable(repo_copy: Path, tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    draft = write_checkpoint(tmp_path / "draft", tensors={"midlayer.mlp.weight": ("BF16", [4, 4])}, shards=1)
    result = CliRunner().invoke(main, ["model", "snapshot", "--root", str(repo_copy), "--model",
                                       "kimi-k2.5-eagle3", str(folder), "--draft", str(draft)])
    assert result.exit_code == 0, result.output
    path = snapshot_path(repo_copy, "kimi-k2.5-eagle3")
    first = path.read_bytes()
    doc = json.loads(first)
    assert doc["model"] == "kimi-k2.5-eagle3" and doc["format"] == 1
    assert doc["checkpoint"]["source"] == {"kind": "folder", "path": str(folder)}
    assert doc["draft"]["weights"]["tensor_names"] == {"midlayer.mlp.weight": ""}
    again = CliRunner().invoke(main, ["model", "snapshot", "--root", str(repo_copy), "--model",
                                      "kimi-k2.5-eagle3", str(folder), "--draft", str(draft)])
    assert again.exit_code == 0 and "unchanged" in again.output
    assert path.read_bytes() == first


# ----- the hub, through the real huggingface_hub (its cache, offline) ------------------------


def _hub_env(hf_home: Path) -> dict[str, str]:
    return {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def test_hub_repo_through_huggingface_hub_cache(repo_copy: Path, tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    (folder / "generation_config.json").write_text(json.dumps({"temperature": 0.6}))
    commit = "0123456789abcdef0123456789abcdef01234567"
    write_hub_cache(tmp_path / "hf", "org/tiny-llama", folder, commit)
    out = _snapshot(repo_copy, "--model", "qwen3.5-122b-a10b", "org/tiny-llama", "--revision", "main",
                    env=_hub_env(tmp_path / "hf"))
    assert out.returncode == 0, out.stderr
    doc = json.loads(snapshot_path(repo_copy, "qwen3.5-122b-a10b").read_text())
    part = doc["checkpoint"]
    assert part["source"] == {"kind": "hub", "repo": "org/tiny-llama", "revision": "main", "commit": commit}
    assert part["generation_config"] == {"temperature": 0.6}
    local = checkpoint_document(reader.read_folder(str(folder)), {})
    assert part["files"] == local["files"]
    assert part["weights"] == local["weights"]  # headers read from the cached shards


def test_hub_shards_not_cached_are_never_fetched(repo_copy: Path, tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    repo_dir = write_hub_cache(tmp_path / "hf", "org/tiny-llama", folder)
    for link in (repo_dir / "snapshots").rglob("*.safetensors"):
        link.unlink()
    out = _snapshot(repo_copy, "--model", "qwen3.5-122b-a10b", "org/tiny-llama", env=_hub_env(tmp_path / "hf"))
    assert out.returncode == 0, out.stderr
    part = json.loads(snapshot_path(repo_copy, "qwen3.5-122b-a10b").read_text())["checkpoint"]
    assert "headers" in part["source"]["note"]
    assert part["weights"]["total_size"] == checkpoint_document(reader.read_folder(str(folder)), {})["weights"]["total_size"]
    assert part["weights"]["dtypes"] is None
    assert all(s["header_sha256"] is None for s in part["weights"]["shards"])


def test_hub_unknown_revision_is_an_environment_error(repo_copy: Path, tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    write_hub_cache(tmp_path / "hf", "org/tiny-llama", folder)
    out = _snapshot(repo_copy, "--model", "qwen3.5-122b-a10b", "org/tiny-llama", "--revision", "v9",
                    env=_hub_env(tmp_path / "hf"))
    assert out.returncode == 3, out.stderr
    assert "Traceback" not in out.stderr and "org/tiny-llama" in out.stderr


def test_hub_cache_link_outside_blobs_is_refused(repo_copy: Path, tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "ck")
    repo_dir = write_hub_cache(tmp_path / "hf", "org/tiny-llama", folder)
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    link = next((repo_dir / "snapshots").rglob("model.safetensors.index.json"))
    link.unlink()
    link.symlink_to(secret)
    out = _snapshot(repo_copy, "--model", "qwen3.5-122b-a10b", "org/tiny-llama", env=_hub_env(tmp_path / "hf"))
    assert out.returncode == 1
    assert "error[M001]" in out.stderr and "outside the repository's blobs/" in out.stderr
