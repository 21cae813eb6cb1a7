"""Shared fixtures: the example repository and throwaway copies of it.

Runs stay hermetic: gen itself writes nothing outside the repository it is given
(tests/test_hermetic.py). ``GEN_CACHE`` is left alone on purpose: the heavy, input-keyed
build products under it (SGLang venvs from scripts/sglang-venv and tests/sglang_env.py,
the test host's root from scripts/test-host) must still be found.

Hypothesis runs under the ``ci`` profile (a budget of examples per test, see
tests/hypothesis_budget.py) unless ``HYPOTHESIS_PROFILE=nightly`` asks for ten times more.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
# Small helper modules beside the tests (sglang_env, systemd_unquote, ...) import by name.
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

REPO_PARTS = ("models", "hosts", "templates", "catalogs", "output", "rollout.yaml")

# No deadline: timings on a shared 2-core machine vary too much to fail a test on.
settings.register_profile("ci", deadline=None, print_blob=True, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow])
# Tests state their own budget (hypothesis_budget.examples); these are the defaults for any
# test that does not.
settings.register_profile("nightly", parent=settings.get_profile("ci"), max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
        if src.is_dir():
            shutil.copytree(src, dest / part)
        elif src.is_file():
            shutil.copy2(src, dest / part)
    return dest
