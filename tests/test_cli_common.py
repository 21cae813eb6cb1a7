"""The shared CLI options (generator.cli.common): every out-of-range value is a usage error (2).

``--jobs 5000`` used to fork until BlockingIOError and then hang the pool; ``--root /nonexistent``
exited 1 as if it were a finding; ``gen import --size-gb nan`` wrote ``size_gb: nan``; a FIFO as ``--inventory`` or ``--file`` hung.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.load.limits import MAX_JOBS


@pytest.mark.parametrize(("args", "message"), [
    (["check", "--jobs", "5000"], f"5000 is not in the range 1<=x<={MAX_JOBS}"),
    (["check", "--jobs", "0"], "0 is not in the range 1<=x<="),
    (["check", "--jobs", "-1"], "-1 is not in the range 1<=x<="),
    (["render", "--all", "--jobs", "99999999999999999999"], "is not in the range"),
    (["diff", "-j", "x"], "'x' is not a valid integer"),
    (["verify", "--all", "--jobs", "65"], f"65 is not in the range 1<=x<={MAX_JOBS}"),
    (["check", "--root", "/nonexistent"], "Directory '/nonexistent' does not exist"),
    (["render", "--all", "--root", "/etc/hostname"], "Directory '/etc/hostname' is a file"),
    (["import", "--sglang", "0.5.9", "--size-gb", "nan", "--", "python", "-m", "sglang.launch_server"],
     "'nan' is not a finite number"),
    (["import", "--sglang", "0.5.9", "--size-gb", "inf", "--", "python", "-m", "sglang.launch_server"],
     "is not in the range 0.001<=x<=100000"),
    (["render", "--host", ""], "no host '' in hosts/"),
    (["verify", "--all", "--inventory", "FIFO"], "is not a regular file"),
    (["import", "--sglang", "0.5.9", "--file", "FIFO"], "is not a regular file"),
    (["import", "--sglang", "0.5.9", "--file", "/etc"], "is a directory"),
])
def test_out_of_range_options_are_usage_errors(args: list[str], message: str, repo_copy: Path) -> None:
    if "FIFO" in args:  # a FIFO without a writer: reading it blocked forever
        os.mkfifo(repo_copy / "fifo")
        args = [str(repo_copy / "fifo") if a == "FIFO" else a for a in args]
    if "--root" not in args:
        args = [*args, "--root", str(repo_copy)]
    started = time.monotonic()
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert time.monotonic() - started < 10  # --jobs 5000 hung; the bound is generous


def test_the_largest_job_count_works(repo_copy: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--jobs", str(MAX_JOBS), "--root", str(repo_copy)])
    assert result.exit_code == 0, result.stderr
