"""A host's reply to a script sent on stdin (preflight, the sandbox check) is bounded in size and time.

``run_with_stdin`` read the whole reply (``capture_output``) and let ``TimeoutExpired`` through:
a host printing without end filled the controller's memory, and a host that never answered
ended ``gen preflight`` as an internal error (exit 4). The ssh client is stood in for by
``sh -c`` (the command ssh would hand the remote shell, run here): what is tested is what gen
does with the reply, not ssh.
"""

from __future__ import annotations

import time

import pytest

from generator.errors import ExitCode
from generator.live import target as target_mod
from generator.live.target import HostReplyError, HostUnreachableError, Target


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch) -> Target:
    monkeypatch.setattr(Target, "ssh_argv", lambda self: ["sh", "-c"])  # stand-in for ssh: runs here
    return Target("stand-in")


def test_a_reply_past_the_bound_is_stopped_and_refused(local: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(target_mod, "REPLY_MOST", 1 << 20)
    start = time.monotonic()
    with pytest.raises(HostReplyError, match=r"printed more than 1 MiB in reply to yes: stopped") as exc:
        target_mod.run_with_stdin(local, ["yes"], b"")
    assert exc.value.exit_code == ExitCode.ENVIRONMENT and time.monotonic() - start < 30


def test_a_host_that_never_answers_is_an_environment_error_not_a_crash(local: Target) -> None:
    with pytest.raises(HostReplyError, match=r"did not finish sleep within 1 s") as exc:
        target_mod.run_with_stdin(local, ["sleep", "60"], b"", timeout=1)
    assert exc.value.exit_code == ExitCode.ENVIRONMENT


def test_a_normal_reply_and_ssh_failure(local: Target) -> None:
    done = target_mod.run_with_stdin(local, ["cat"], b"report\n")
    assert (done.returncode, done.stdout) == (0, b"report\n")
    with pytest.raises(HostUnreachableError, match=r"ssh stand-in failed: no route\\x1b"):
        target_mod.run_with_stdin(local, ["sh", "-c", "printf 'no route\\033' >&2; exit 255"], b"")
