"""Crash residue (issue 10, item 11): a real ``gen render --all`` of 300 hosts killed with SIGKILL
while it writes, then ``gen check`` must report every temp file it left and the next render
must remove them all, and nothing else.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from fleet import make_fleet  # noqa: E402

GEN = Path(sys.executable).parent / "gen"
HOSTS = 300
MIN_RESIDUE = 300  # kill once this many temp files are on disk (the whole fleet writes 3,120)
BUDGET_S = 90  # every attempt together; a kill that never lands in the write phase fails the test


def _temps(output: Path) -> list[Path]:
    return sorted(Path(d) / n for d, _, names in os.walk(output) for n in names if n.endswith(".tmp"))


def _kill_while_writing(root: Path, cache: Path) -> list[Path]:
    """Start renders until one is killed with temp files on disk; return them."""
    deadline = time.monotonic() + BUDGET_S
    while time.monotonic() < deadline:
        subprocess.run(["rm", "-rf", str(root / "output"), str(cache)], check=True)
        proc = subprocess.Popen([str(GEN), "render", "--all", "--root", str(root)],
                                env={**os.environ, "GEN_CACHE": str(cache)},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if (root / "output").exists() and len(_temps(root / "output")) >= MIN_RESIDUE:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
                time.sleep(0.005)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        if proc.returncode == -signal.SIGKILL:
            found = _temps(root / "output")
            if found:
                return found
    pytest.fail(f"no render was killed with temp files on disk within {BUDGET_S}s")


def _gen(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GEN), *args, "--root", str(root)], env={**os.environ, "GEN_CACHE": str(cache)},
                          capture_output=True, text=True, timeout=120, check=False)


def test_kill_9_residue_is_reported_by_check_and_removed_by_render(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_fleet(root, HOSTS)
    cache = tmp_path / "cache"
    residue = _kill_while_writing(root, cache)
    # Files of the same shape that are not gen's: never removed, and output/ is then not
    # what gen renders (O002): render writes nothing until the operator deletes them.
    theirs = [root / "output" / "notes.abcdefgh.tmp", root / "output" / "gpu-0000" / ".notes.abcdefgh.tmp"]
    for p in theirs:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("not gen's\n")
    blocked = _gen(root, cache, "check")
    assert blocked.returncode == 1
    assert {f"output/{p.relative_to(root / 'output')}" for p in theirs} == {
        ln.split(": error[O002]")[0] for ln in blocked.stderr.splitlines() if "error[O002]" in ln}
    assert _gen(root, cache, "render", "--all").returncode == 1
    assert set(theirs) <= set(_temps(root / "output"))  # untouched
    for p in theirs:
        p.unlink()

    check = _gen(root, cache, "check")
    assert check.returncode == 1, check.stderr
    reported = {ln.split()[1] for ln in check.stderr.splitlines() if ln.endswith(" would be removed")}
    assert {f"output/{p.relative_to(root / 'output')}" for p in residue} <= reported, check.stderr[-3000:]

    render = _gen(root, cache, "render", "--all")
    assert render.returncode == 0, render.stderr
    assert _temps(root / "output") == []
    again = _gen(root, cache, "check")
    assert again.returncode == 0, again.stderr
    assert "output/ is current" in again.stdout
