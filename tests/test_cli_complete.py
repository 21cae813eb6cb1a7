"""Shell completion (click's ``_GEN_COMPLETE``): host names, service names and pins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _complete(words: str, cwd: Path = ROOT) -> list[str]:
    """Ask the real entry point as bash would: COMP_WORDS/COMP_CWORD, one 'type,value' per line."""
    env = {**os.environ, "_GEN_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split(" ")) - 1)}
    out = subprocess.run([sys.executable, "-m", "generator", *[]], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line]


def test_host_names_complete() -> None:
    assert _complete("gen render --host llm") == ["llm-two", "llm-two-full"]


def test_service_names_complete_for_the_host_given() -> None:
    assert _complete("gen status --host llm-two --service ") == ["qwen"]


def test_pins_complete() -> None:
    assert _complete("gen check --sglang 0.5.") == ["0.5.9", "0.5.23"]  # version order, no companion files


def test_completion_reads_the_root_given(tmp_path: Path) -> None:
    (tmp_path / "hosts").mkdir()
    (tmp_path / "hosts" / "box-1.yaml").write_text("name: box-1\n")
    assert _complete(f"gen show --root {tmp_path} --host b") == ["box-1"]
