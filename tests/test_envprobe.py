"""Tests for generator/sglang/envprobe.py (+ envsource.py, envscan.py): the env catalogs are
re-captured from the real SGLang and must equal the committed ones byte for byte."""

from __future__ import annotations

import json

import subprocess
from pathlib import Path

import pytest

from generator.load.captured import captured_json
from generator.sglang.snapshot import probe_env
from sglang_env import sglang_python

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "generator" / "sglang"
PARTS = ("envsource.py", "envscan.py", "envprobe.py")


@pytest.mark.sglang
@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_recaptured_env_catalog_equals_the_committed_one(pin: str, tmp_path: Path) -> None:
    """Piped as `python -` (the way a snapshot over SSH runs it), in a clean environment."""
    source = "".join((HERE / p).read_text(encoding="utf-8") for p in PARTS)
    env = probe_env()
    env["HOME"] = str(tmp_path)  # no default may name the HOME of the capturing machine
    out = subprocess.run([sglang_python(pin), "-"], input=source.encode(), capture_output=True,
                         env=env, cwd=tmp_path, timeout=600, check=False)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    committed = (ROOT / "catalogs" / "sglang" / f"{pin}.env.json").read_bytes()
    # The probe prints the canonical text; gen adds the capture digest (load/captured.py).
    assert captured_json(json.loads(out.stdout)).encode() == committed


def test_probe_parts_use_the_standard_library_only() -> None:
    """They run inside the SGLang python, which has no gen installed."""
    import ast
    import sys

    for part in PARTS:
        tree = ast.parse((HERE / part).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top in ("envscan", "envsource", "sglang", "__future__"), (part, name)


@pytest.mark.sglang
def test_env_snapshot_through_a_remote_shell_prefix() -> None:
    """snapshot_env_remote sends the probe as stdin of one shell command, as over ssh."""
    from generator.sglang.envsnapshot import snapshot_env_remote

    text = snapshot_env_remote(["sh", "-c"], sglang_python("0.5.9"))
    assert text == (ROOT / "catalogs" / "sglang" / "0.5.9.env.json").read_bytes()


def test_env_snapshot_refuses_output_that_is_not_an_env_catalog(tmp_path: Path) -> None:
    from generator.sglang.envsnapshot import snapshot_env_remote
    from generator.sglang.snapshot import SnapshotError

    with pytest.raises(SnapshotError, match="not an env catalog"):
        # A stand-in interpreter that prints valid JSON which is no env catalog.
        stand_in = tmp_path / "stand-in-python-prints-json"
        stand_in.write_text('#!/bin/sh\ncat >/dev/null\necho \'{"format": 1}\'\n')
        stand_in.chmod(0o755)
        snapshot_env_remote(["sh", "-c"], str(stand_in))
