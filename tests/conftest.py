"""Shared fixtures: the example repository, and throwaway copies of it to break."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
# Small helper modules beside the tests (sglang_env, systemd_unquote, ...) import by name.
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

REPO_PARTS = ("models", "hosts", "templates", "catalogs", "output")


@pytest.fixture
def repo_root() -> Path:
    """The real repository root (read-only use)."""
    return ROOT


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A copy of the example deployment repo (models, hosts, templates, catalogs, output)."""
    dest = tmp_path / "repo"
    dest.mkdir()
    for part in REPO_PARTS:
        src = ROOT / part
        if src.exists():
            shutil.copytree(src, dest / part)
    return dest
