"""The checkpoint on a real host against its snapshot: `gen model snapshot --host` over SSH,
then `gen verify` and `gen preflight` pass on the same checkpoint and fail, naming the file,
when config.json changes or the index goes (the model's and the drafter's).

The checkpoint folders are the live tests' stand-in model (tests/live/standins/fake_model.py:
real safetensors files with tiny fake tensors, named as stand-ins).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.live import preflight, verify
from generator.cli.main import main

from .deploy import (DRAFT_DIR, HOST, MODEL_DIR, deploy, fixture_repo, provision, render_plan, sh, stop_units,
                     write_ssh_config)
from .host import TestHost, free_port

pytestmark = pytest.mark.live
MODEL = "standin-llama-eagle3"


@pytest.fixture(scope="module")
def repo(test_host: TestHost, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The fixture repo deployed, its model's snapshot captured from the host, deployed again."""
    tmp = tmp_path_factory.mktemp("live-checkpoint")
    root = fixture_repo(tmp / "repo", free_port())
    ssh_config = write_ssh_config(test_host, tmp / "ssh_config")
    plan, files = render_plan(root)
    provision(test_host, plan)
    deploy(test_host, plan, files)
    out = CliRunner().invoke(main, ["model", "snapshot", "--root", str(root), "--model", MODEL, "--host", HOST,
                                    MODEL_DIR, "--draft", DRAFT_DIR, "--ssh-option", "-F",
                                    "--ssh-option", str(ssh_config)])
    assert out.exit_code == 0, out.output
    # The snapshot gives the weights' size (the stand-in's 64 bytes): the hand-typed 1 GB the
    # fixture needs without one now disagrees (M010), so it goes, as the fix text says.
    manifest = root / "models" / f"{MODEL}.yaml"
    text = manifest.read_text()
    assert "  size_gb: 1\n" in text, "the fixture manifest's size line moved"
    # Sized by token from the snapshot's config.json, SGLang 0.5.9 loads the EAGLE3 draft's KV
    # cache after the target's pool: at the default fraction the stand-in GPU runs out of memory
    # at launch (P034, whose fix names at most 0.499), so the fixture takes a fraction that fits.
    manifest.write_text(text.replace("  size_gb: 1\n", "") + "memory:\n  mem_fraction_static: 0.45\n")
    plan, files = render_plan(root)  # now with the snapshot's expectations (and its size)
    assert plan.services[0].model_expect is not None and plan.services[0].draft_expect is not None
    deploy(test_host, plan, files)
    try:
        yield root, ssh_config
    finally:
        stop_units(test_host, plan)


def _lines(output: str, word: str, check: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.startswith(f"{word} ") and f" {check}:" in ln]


def _verify(root: Path, ssh_config: Path) -> tuple[int, str]:
    res = CliRunner().invoke(verify, ["--host", HOST, "--ssh-config", str(ssh_config), "--root", str(root)])
    return res.exit_code, res.output


def _preflight(root: Path, ssh_config: Path) -> tuple[int, str]:
    res = CliRunner().invoke(preflight, ["--host", HOST, "--ssh-config", str(ssh_config), "--root", str(root)])
    return res.exit_code, res.output


def test_the_snapshot_came_from_the_host(repo: tuple[Path, Path]) -> None:
    root, _ = repo
    doc = json.loads((root / "catalogs" / "models" / f"{MODEL}.json").read_text())
    assert doc["checkpoint"]["source"] == {"kind": "host", "host": HOST, "path": MODEL_DIR}
    assert doc["draft"]["weights"]["tensor_names"]["midlayer.self_attn.q_proj.weight"] == ""
    assert [s["file"] for s in doc["checkpoint"]["weights"]["shards"]] == [
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]


def test_the_same_checkpoint_passes_verify_and_preflight(test_host: TestHost, repo: tuple[Path, Path]) -> None:
    root, ssh_config = repo
    code, output = _verify(root, ssh_config)
    assert _lines(output, "PASS", "weights-snapshot") and _lines(output, "PASS", "draft-weights-snapshot"), output
    code, output = _preflight(root, ssh_config)
    assert _lines(output, "PASS", "checkpoint-model-snapshot"), output
    assert _lines(output, "PASS", "checkpoint-draft-snapshot"), output


def test_a_changed_config_fails_naming_it(test_host: TestHost, repo: tuple[Path, Path]) -> None:
    root, ssh_config = repo
    sh(test_host, f"cp {MODEL_DIR}/config.json /tmp/config.keep && sed -i 's/\"num_hidden_layers\": 2/"
                  f"\"num_hidden_layers\": 3/' {MODEL_DIR}/config.json")
    try:
        code, output = _verify(root, ssh_config)
        assert code == 1
        [line] = _lines(output, "FAIL", "weights-snapshot")
        assert f"{MODEL_DIR}: config.json: changed since catalogs/models/{MODEL}.json was captured" in line
        code, output = _preflight(root, ssh_config)
        assert code == 1 and _lines(output, "FAIL", "checkpoint-model-snapshot"), output
    finally:
        sh(test_host, f"mv /tmp/config.keep {MODEL_DIR}/config.json")


def test_a_drafter_without_its_index_fails_naming_it(test_host: TestHost, repo: tuple[Path, Path]) -> None:
    root, ssh_config = repo
    sh(test_host, f"mv {DRAFT_DIR}/model.safetensors.index.json /tmp/index.keep")
    try:
        code, output = _verify(root, ssh_config)
        assert code == 1
        [line] = _lines(output, "FAIL", "draft-weights-snapshot")
        assert "model.safetensors.index.json: missing" in line
    finally:
        sh(test_host, f"mv /tmp/index.keep {DRAFT_DIR}/model.safetensors.index.json")
