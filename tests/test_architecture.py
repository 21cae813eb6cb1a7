"""The dependency rule between stages, checked by import-linter's own ``lint-imports``.

The contracts live in pyproject.toml (``[tool.importlinter]``); this runs the real tool
on the tree, and once on a copy with one upward import added, to show the contracts can
fail.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH first, so the copy's `generator` is analysed, not the installed one.
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(cwd / "pyproject.toml")],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_tree_keeps_every_contract() -> None:
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout
    assert "live never imports cli KEPT" in out.stdout


def test_an_upward_import_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "generator", tmp_path / "generator",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    checks = tmp_path / "generator" / "live" / "checks" / "gpus.py"
    checks.write_text(checks.read_text() + "\nfrom generator.cli import common  # upward\n")
    load = tmp_path / "generator" / "load" / "manifests.py"
    load.write_text(load.read_text() + "\nimport generator.plan.placement  # upward\n")
    out = _lint(tmp_path)
    assert out.returncode != 0, out.stdout
    assert "2 broken" in out.stdout, out.stdout
    assert "generator.live.checks.gpus -> generator.cli.common" in out.stdout
    assert "generator.load.manifests -> generator.plan.placement" in out.stdout


def test_every_package_and_module_of_generator_has_a_layer() -> None:
    # A module in no layer is not held by the layers contract at all: place it on purpose.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [stages] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    layered = {name.strip() for layer in stages["layers"] for name in re.split(r"[|:]", layer)}
    top = {f"generator.{p.stem if p.is_file() else p.name}" for p in (ROOT / "generator").iterdir()
           if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
           or (p.is_dir() and (p / "__init__.py").is_file())}
    assert top - layered == set(), "add these to a layer in pyproject.toml [tool.importlinter]"
    assert layered - top == set(), "layers name modules that do not exist"
