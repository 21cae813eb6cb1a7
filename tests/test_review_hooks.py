"""The pre-commit hook and the CI example: well-formed, and their commands really run."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
GEN = [sys.executable, "-m", "generator"]


def _yaml(path: Path) -> object:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def test_pre_commit_hook_has_the_fields_pre_commit_requires_and_its_entry_passes() -> None:
    hooks = _yaml(ROOT / ".pre-commit-hooks.yaml")
    assert isinstance(hooks, list)
    [hook] = hooks
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    words = shlex.split(hook["entry"])
    assert words[0] == "gen"
    done = subprocess.run(GEN + words[1:], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_ci_example_uploads_the_sarif_gen_check_writes(tmp_path: Path) -> None:
    workflow = _yaml(ROOT / "docs/ci-example.yml")
    assert isinstance(workflow, dict)
    steps = workflow["jobs"]["check"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "gen check --format sarif > gen.sarif" in runs
    upload = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
    assert upload and upload[0]["with"]["sarif_file"] == "gen.sarif"
    assert workflow["permissions"]["security-events"] == "write"
    done = subprocess.run(GEN + ["check", "--format", "sarif"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["version"] == "2.1.0"
