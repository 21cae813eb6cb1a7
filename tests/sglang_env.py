"""Locate the Python of a real SGLang release venv for tests (built by scripts/sglang-venv).

Import it as ``from sglang_env import sglang_python`` (tests/conftest.py puts tests/ on
sys.path; a test may also insert ``Path(__file__).parent`` itself). The first call
for a version builds the venv when it is not cached yet (about 1.5 minutes with a warm
pip cache, a 2.3 GB download otherwise) and later calls in the process reuse the path.
A build failure raises, so a test that needs SGLang fails rather than skips.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SGLANG_VENV = ROOT / "scripts" / "sglang-venv"
BUILD_TIMEOUT = 3600  # a cold build downloads torch-sized wheels; far more means a hang


class SGLangVenvError(RuntimeError):
    """The SGLang venv for a version could not be found or built."""


def env_var(version: str) -> str:
    """The variable that may name a ready interpreter: ``GEN_SGLANG_PYTHON_0_5_9`` for 0.5.9."""
    return "GEN_SGLANG_PYTHON_" + "".join(c if c.isalnum() else "_" for c in version)


@functools.cache
def sglang_python(version: str) -> str:
    """Path of a Python with the real SGLang ``version`` importable (cached per process).

    ``$GEN_SGLANG_PYTHON_<version>`` wins when set (it must be an executable);
    otherwise ``scripts/sglang-venv VERSION`` builds or reuses the cached venv and its
    last stdout line is the path.
    """
    override = os.environ.get(env_var(version))
    if override:
        if not os.access(override, os.X_OK):
            raise SGLangVenvError(
                f"${env_var(version)}={override} is not an executable"
            )
        return override
    proc = subprocess.run(
        [str(SGLANG_VENV), version],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SGLangVenvError(
            f"{SGLANG_VENV} {version} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    python = lines[-1]
    if not os.access(python, os.X_OK):
        raise SGLangVenvError(
            f"{SGLANG_VENV} {version} printed {python!r}, not an executable"
        )
    return python
