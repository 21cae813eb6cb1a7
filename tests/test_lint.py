"""ruff and mypy on generator/, configured in pyproject.toml: the tree is clean, and each tool
is shown to fail on a copy with one defect added (so neither check can pass vacuously).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(tool: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    # The tools' caches go to the test's folder: a test run writes nothing into the checkout.
    args = {"ruff": ["check", "--no-cache", "generator"],
            "mypy": ["--cache-dir", str(cache)]}[tool]
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "generator", tree / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_ruff_finds_nothing(tmp_path: Path) -> None:
    out = _run("ruff", ROOT, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    out = _run("mypy", ROOT, tmp_path / "cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found" in out.stdout


def test_both_fail_on_a_defect(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    target = tree / "generator" / "errors.py"
    # An unused import (ruff F401) and a str returned where an int is declared (mypy).
    target.write_text(target.read_text() + "\n\nimport os\n\n\ndef _wrong() -> int:\n    return 'text'\n")
    ruff = _run("ruff", tree, tmp_path / "cache")
    assert ruff.returncode == 1 and "F401" in ruff.stdout, ruff.stdout + ruff.stderr
    mypy = _run("mypy", tree, tmp_path / "cache")
    assert mypy.returncode == 1 and "errors.py" in mypy.stdout and "return-value" in mypy.stdout, mypy.stdout
