"""The reason first (issue 23 item 3): the deciding line of a failed start, then a bounded excerpt.

``generator/live/onhost_rollout.py`` reads the journal of a failed start on the host. Its
:func:`deciding_line` picks argparse's ``error:`` line, else the last exception's line,
else the first line that is not usage text; :func:`excerpt` collapses the usage text,
drops repeated lines and keeps at most 40. The oracle for the shapes is the real SGLang:
its own output for an unknown flag (300 lines of usage, then the error) and for a model
folder without config.json (three chained tracebacks), wrapped as journald prints it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from sglang_env import sglang_python

from generator.emit.ansible.tasks import MARKER, tasks_text
from generator.live.onhost import _capture
from generator.live.onhost_rollout import EXCERPT_LINES, deciding_line, excerpt

UNIT = "sglang-qwen.service"


def journal(stderr: str, pid: int = 4242) -> str:
    """STDERR as `journalctl -o short-iso` shows a unit's output, with systemd's lines after it."""
    lines = [f"2025-12-01T23:55:0{i % 10}+0000 llm-two python3[{pid}]: {ln}" for i, ln in enumerate(stderr.splitlines())]
    lines += [f"2025-12-01T23:55:09+0000 llm-two systemd[1]: {UNIT}: Main process exited, code=exited, "
              "status=2/INVALIDARGUMENT",
              f"2025-12-01T23:55:09+0000 llm-two systemd[1]: {UNIT}: Failed with result 'exit-code'."]
    return "\n".join(lines) + "\n"


USAGE = "usage: launch_server.py [-h] --model-path MODEL_PATH\n" + "".join(
    f"                        [--flag-{i} FLAG_{i}]\n" for i in range(300))
ERROR = "launch_server.py: error: unrecognized arguments: --frobnicate 1"


def test_argparse_error_line_decides_even_after_usage_printed_twice() -> None:
    text = journal("Warning: something harmless\n" + USAGE + ERROR + "\n", 10) + journal(USAGE + ERROR + "\n", 11)
    assert deciding_line(text) == ERROR
    short = excerpt(text)
    assert len(short.splitlines()) <= EXCERPT_LINES + 1 and ERROR in short
    assert short.count("usage: ...") == 1 and "--flag-7" not in short  # the usage text collapsed, once
    assert "repeated line(s) left out" in short  # the second copy


def test_last_exception_of_the_last_traceback_decides() -> None:
    text = journal("loading\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
                   "ValueError: first\n\nDuring handling of the above exception, another exception occurred:\n\n"
                   "Traceback (most recent call last):\n  File \"b.py\", line 2, in f\n    raise RuntimeError(x)\n"
                   "RuntimeError: the real one\n")
    assert deciding_line(text) == "RuntimeError: the real one"


def test_without_error_or_exception_the_first_line_that_is_not_usage_decides() -> None:
    text = journal(USAGE + "rank 1: waiting for rank 0 at 10.0.0.1:50000: timed out\n" * 70)
    assert deciding_line(text) == "rank 1: waiting for rank 0 at 10.0.0.1:50000: timed out"
    short = excerpt(text)
    assert short.count("waiting for rank 0") == 1 and "(69 repeated line(s) left out" in short
    assert deciding_line("") == ""
    assert deciding_line(journal("")) == f"{UNIT}: Main process exited, code=exited, status=2/INVALIDARGUMENT"


def test_a_long_journal_keeps_its_head_and_tail() -> None:
    text = journal("".join(f"step {i}\n" for i in range(200)))
    short = excerpt(text).splitlines()
    assert len(short) == EXCERPT_LINES + 1
    assert short[0].endswith("step 0") and "left out" in short[10] and short[-1].endswith("'exit-code'.")


def test_preflight_says_argparse_error_line_not_the_usage() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="launch_server.py")
    for i in range(50):
        parser.add_argument(f"--flag-{i}")
    _, error = _capture(parser.parse_args, ["--frobnicate", "1"])
    assert error == "exit status 2: " + ERROR


def _real_sglang(*args: str) -> str:
    proc = subprocess.run([sglang_python("0.5.9"), "-m", "sglang.launch_server", *args], capture_output=True,
                          text=True, timeout=600, env=os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert proc.returncode != 0
    return proc.stderr


@pytest.mark.sglang
def test_real_sglang_unknown_flag_journal_leads_with_its_error_line() -> None:
    stderr = _real_sglang("--model-path", "/nonexistent/model", "--frobnicate", "1")
    assert len(stderr.splitlines()) > 250  # the usage text the issue saw
    text = journal(stderr, 10) + journal(stderr, 11)  # printed twice, as in the issue
    assert deciding_line(text) == ERROR
    short = excerpt(text)
    assert ERROR in short and len(short.splitlines()) <= EXCERPT_LINES + 1, short


@pytest.mark.sglang
def test_real_sglang_missing_config_journal_leads_with_the_last_exception() -> None:
    stderr = _real_sglang("--model-path", "/nonexistent/model", "--device", "cpu")
    assert stderr.count("Traceback (most recent call last)") >= 2
    reason = deciding_line(journal(stderr))
    assert reason.startswith("OSError: Can't load the configuration of '/nonexistent/model'"), reason


def _tasks(tmp_path: Path) -> dict[str, dict[str, Any]]:
    repo = tmp_path / "ansible"
    repo.mkdir()
    (repo / "rollout.yml").write_text(tasks_text())
    loaded = DataLoader().load_from_file(str(repo / "rollout.yml"), trusted_as_template=True)
    return {t["name"]: t for t in loaded}


def _render(task: dict[str, Any], variables: dict[str, Any]) -> str:
    for name, expr in (task.get("vars") or {}).items():
        variables = variables | {name: Templar(loader=DataLoader(), variables=variables).template(expr)}
    return str(Templar(loader=DataLoader(), variables=variables).template(task["ansible.builtin.fail"]["msg"]))


def test_the_preflight_stop_message_leads_with_each_deciding_line(tmp_path: Path) -> None:
    (task,) = [t for n, t in _tasks(tmp_path).items() if n.startswith("Stop before anything running is touched")]
    failures = {"mn-a": ["sglang-mn.service on mn-a sglang-preflight: exit status 2: " + ERROR],
                "mn-b": ["sglang-mn.service on mn-b sglang-server-args: ValueError: tp 3 at server_args.py:9\n"
                         + "".join(f"frame {i}\n" for i in range(100)) + "ValueError: tp 3"]}
    msg = _render(task, {"ansible_play_batch": ["mn-a", "mn-b"],
                         "hostvars": {h: {"gen_pre_failures": f} for h, f in failures.items()}})
    lines = msg.splitlines()
    assert lines[0] == "sglang-mn.service on mn-a sglang-preflight: exit status 2: " + ERROR
    assert lines[1] == "sglang-mn.service on mn-b sglang-server-args: ValueError: tp 3 at server_args.py:9"
    assert lines[2] == "preflight failed, nothing running was touched"
    assert "frame 99" in msg and "frame 60" not in msg and len(lines) < 40  # the detail: its last 30 lines


def test_the_failed_start_message_leads_with_the_reason_then_the_excerpt(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path)
    (task,) = [t for n, t in tasks.items() if n.startswith("Fail with the reason first")]
    text = journal(USAGE + ERROR + "\n", 10) + journal(USAGE + ERROR + "\n", 11)
    failure = {"unit": "sglang-qwen.service", "ok": False, "check": "exited", "seconds": 2.0,
               "detail": "sglang-qwen.service is failed (failed), result exit-code, exit status 2",
               "reason": deciding_line(text), "journal": excerpt(text)}
    rewait = {"sglang-qwen.service": {"unit": "sglang-qwen.service", "ok": True, "reason": "",
                                      "detail": "sglang-qwen.service is active and answers 200 after 3.1 s"}}
    msg = _render(task, {"gen_failures": [failure], "inventory_hostname": "llm-two", "gen_rollout_group": "",
                         "ansible_play_batch": ["llm-two"], "hostvars": {"llm-two": {"gen_failures": [failure]}},
                         "gen_rewait": {"stdout": "\n" + MARKER + "\n" + json.dumps(rewait)}})
    lines = msg.splitlines()
    assert lines[0] == "sglang-qwen.service on llm-two: " + ERROR, lines[:3]
    assert lines[1] == "rollback: sglang-qwen.service is active and answers 200 after 3.1 s"
    assert lines[2].startswith("--- sglang-qwen.service on llm-two failed its exited check: ")
    assert "gen status --host llm-two --service qwen" in lines[3]
    assert len(lines) <= EXCERPT_LINES + 6 and msg.count(ERROR) == 2  # the reason, and once in the excerpt
