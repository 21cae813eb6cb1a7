"""cli/output.py: color only on a terminal and never with NO_COLOR; diagnostics painted by severity."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli.output import Output, color_wanted
from generator.errors import Diagnostic, Position, Severity

ROOT = Path(__file__).resolve().parent.parent


def test_color_on_a_real_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as tty, open(os.devnull, "w") as plain:
            monkeypatch.delenv("NO_COLOR", raising=False)
            assert color_wanted(tty) is True
            assert color_wanted(plain) is False
            monkeypatch.setenv("NO_COLOR", "1")
            assert color_wanted(tty) is False
    finally:
        os.close(master)
        os.close(slave)


def test_painted_diagnostic_keeps_the_text() -> None:
    d = Diagnostic(Position("models/x.yaml", 3, 5), "S001", "unknown key 'tpp'", Severity.ERROR,
                   "did you mean 'tp'?")
    painted = Output("check", color=True)._painted(d)
    assert "\x1b[31m" in painted  # red for errors
    import click

    assert click.unstyle(painted) == str(d)


def test_check_on_a_terminal_is_colored_and_no_color_turns_it_off(tmp_path: Path) -> None:
    """The real entry point with stderr on a pseudo-terminal."""
    repo = tmp_path / "repo"
    for part in ("models", "hosts", "templates", "catalogs", "output"):
        shutil.copytree(ROOT / part, repo / part)
    model = repo / "models/qwen3.5-122b-a10b.yaml"
    model.write_text(model.read_text().replace("parallel:", "paralel:"))

    def stderr_of(env: dict[str, str]) -> bytes:
        master, slave = os.openpty()
        try:
            proc = subprocess.run([sys.executable, "-m", "generator", "check", "--root", str(repo)],
                                  stderr=slave, stdout=subprocess.DEVNULL, env=env, timeout=120)
            assert proc.returncode == 1
            os.close(slave)
            chunks = []
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the terminal's other side is closed
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(master)

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert b"\x1b[" in stderr_of(env)
    plain = stderr_of({**env, "NO_COLOR": "1"})
    assert b"\x1b[" not in plain and b"error[S001]" in plain
