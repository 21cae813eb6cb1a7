"""The on-host rollout steps (generator/live/onhost_rollout.py) on a temporary root.

systemd is the stand-in of tests/standin_systemd.py (named as one); the files are real files
under tmp_path and the health endpoint is a real HTTP server on 127.0.0.1. The live tests
(tests/live/test_rollout_*.py) run the same script against the real systemd; these pin down
its decisions one by one: what a save keeps, what a rollback restores, removes, stops and
starts again, and how the wait loop tells healthy from failed.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.live import onhost_rollout as rollout
from tests.standin_systemd import StandinSystemd, StandinUnit

UNIT = "sglang-chat.service"


class _Subprocess:
    """The module's ``subprocess`` with ``run`` answered by the stand-in."""

    def __init__(self, standin: StandinSystemd) -> None:
        self.run = standin.run


@pytest.fixture
def systemd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> StandinSystemd:
    """The stand-in wired into the script, and the previous sets kept under tmp_path."""
    standin = StandinSystemd()
    monkeypatch.setattr(rollout, "subprocess", _Subprocess(standin))
    monkeypatch.setattr(rollout, "PREVIOUS", str(tmp_path / "var/lib/gen/previous"))
    monkeypatch.setattr(rollout, "POLL_S", 0.01)
    return standin


@pytest.fixture
def health() -> Iterator[str]:
    """A real /health endpoint on 127.0.0.1 that answers 200; stopped after the test."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server calls it by this name
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/health"
    server.shutdown()
    server.server_close()
    thread.join()


def _files(root: Path, name: str = "chat") -> dict[str, Path]:
    return {"unit": root / f"etc/systemd/system/sglang-{name}.service", "env": root / f"etc/sglang/{name}.env"}


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def _item(files: dict[str, Path], unit: str = UNIT) -> dict:
    return {"unit": unit, "paths": [str(files["unit"]), str(files["env"])]}


def test_rollback_restores_the_unit_and_its_env_file_byte_for_byte(systemd: StandinSystemd, tmp_path: Path) -> None:
    files = _files(tmp_path)
    _write(files["unit"], "[Service]\nExecStart=/old\n")
    _write(files["env"], "OLD=1\n", mode=0o640)
    systemd.units[UNIT] = StandinUnit(active="active", sub="running", enabled=True)
    saved = rollout.save([_item(files)])
    assert saved[UNIT] == {"new": False, "active": True, "saved": [str(files["unit"]), str(files["env"])]}
    _write(files["unit"], "[Service]\nExecStart=/new\n", mode=0o600)
    _write(files["env"], "NEW=1\n", mode=0o644)
    out = rollout.rollback([_item(files)])
    assert out[UNIT]["restored"] is True
    assert files["unit"].read_text() == "[Service]\nExecStart=/old\n"
    assert files["env"].read_text() == "OLD=1\n"
    assert files["unit"].stat().st_mode & 0o7777 == 0o644
    assert files["env"].stat().st_mode & 0o7777 == 0o640
    assert not [p for p in files["env"].parent.iterdir() if ".gen-restore-" in p.name]


def test_rollback_removes_a_file_the_new_set_added(systemd: StandinSystemd, tmp_path: Path) -> None:
    files = _files(tmp_path)
    _write(files["unit"], "[Service]\nExecStart=/old\n")  # the previous set had no env file
    systemd.units[UNIT] = StandinUnit(active="active", sub="running")
    rollout.save([_item(files)])
    _write(files["env"], "NEW=1\n")
    rollout.rollback([_item(files)])
    assert not files["env"].exists()
    assert files["unit"].read_text() == "[Service]\nExecStart=/old\n"


def test_rollback_stops_every_unit_reloads_once_and_starts_only_what_ran_before(
        systemd: StandinSystemd, tmp_path: Path) -> None:
    ran, stopped = _files(tmp_path, "ran"), _files(tmp_path, "stopped")
    for files in (ran, stopped):
        _write(files["unit"], "[Service]\n")
        _write(files["env"], "A=1\n")
    systemd.units["sglang-ran.service"] = StandinUnit(active="active", sub="running")
    systemd.units["sglang-stopped.service"] = StandinUnit(active="inactive", sub="dead")
    items = [_item(ran, "sglang-ran.service"), _item(stopped, "sglang-stopped.service")]
    rollout.save(items)
    rollout.start([{"unit": "sglang-ran.service"}, {"unit": "sglang-stopped.service"}])
    systemd.calls.clear()
    out = rollout.rollback(items)
    assert out["sglang-ran.service"]["active"] is True and out["sglang-stopped.service"]["active"] is False
    assert systemd.verbs("sglang-ran.service") == ["stop", "reset-failed", "restart"]
    assert systemd.verbs("sglang-stopped.service") == ["stop"], "a unit stopped before the rollout stays stopped"
    assert systemd.units["sglang-stopped.service"].active == "inactive"
    reloads = [i for i, c in enumerate(systemd.calls) if c[1:] == ["daemon-reload"]]
    restarts = [i for i, c in enumerate(systemd.calls) if c[1] == "restart"]
    assert len(reloads) == 1 and reloads[0] < restarts[0], "the restored files are loaded before any start"
    assert "cursor" in out["sglang-ran.service"] and "nrestarts" in out["sglang-ran.service"]


def test_rollback_of_a_new_unit_disables_it_and_removes_its_files(systemd: StandinSystemd, tmp_path: Path) -> None:
    files = _files(tmp_path)
    saved = rollout.save([_item(files)])  # nothing there yet: a new service
    assert saved[UNIT] == {"new": True, "active": False, "saved": []}
    _write(files["unit"], "[Service]\n")
    _write(files["env"], "A=1\n")
    rollout.start([{"unit": UNIT}])
    out = rollout.rollback([_item(files)])
    assert out[UNIT] == {"restored": False, "active": False}
    assert not files["unit"].exists() and not files["env"].exists()
    assert systemd.units[UNIT].enabled is False
    assert systemd.verbs(UNIT)[-2:] == ["stop", "disable"]


def test_rollback_without_a_saved_set_treats_the_unit_as_new(systemd: StandinSystemd, tmp_path: Path) -> None:
    files = _files(tmp_path)
    _write(files["unit"], "[Service]\n")
    out = rollout.rollback([_item(files)])
    assert out[UNIT] == {"restored": False, "active": False}
    assert not files["unit"].exists()


def test_save_replaces_the_previous_set_whole_and_leaves_no_temporary_folder(
        systemd: StandinSystemd, tmp_path: Path) -> None:
    files = _files(tmp_path)
    _write(files["unit"], "one\n")
    _write(files["env"], "A=1\n")
    rollout.save([_item(files)])
    files["env"].unlink()
    _write(files["unit"], "two\n")
    rollout.save([_item(files)])
    folder = Path(rollout.PREVIOUS) / UNIT
    meta = json.loads((folder / "files.json").read_text())
    assert [f.get("absent", False) for f in meta["files"]] == [False, True]
    assert (folder / "files" / str(files["unit"]).lstrip("/")).read_text() == "two\n"
    assert not (folder / "files" / str(files["env"]).lstrip("/")).exists(), "a set is replaced, never merged"
    assert sorted(p.name for p in folder.parent.iterdir()) == [UNIT]
    assert folder.stat().st_mode & 0o777 == 0o700


def test_start_resets_enables_and_queues_each_restart_without_blocking(systemd: StandinSystemd) -> None:
    systemd.units[UNIT] = StandinUnit(active="failed", sub="failed", result="exit-code", nrestarts=3)
    out = rollout.start([{"unit": UNIT}])
    assert out[UNIT]["nrestarts"] == 3 and out[UNIT]["queued"] is True and out[UNIT]["error"] == ""
    assert [c[1:] for c in systemd.calls if c[0] == "systemctl" and c[1] != "show"] == [
        ["reset-failed", UNIT], ["enable", "--quiet", UNIT], ["restart", "--no-block", UNIT]]
    systemd.refuse_restart.add("sglang-gone.service")
    refused = rollout.start([{"unit": "sglang-gone.service"}])["sglang-gone.service"]
    assert refused["queued"] is False and "not found" in refused["error"]


def _wait(services: list[str], started: dict, url: str, timeout_s: int = 30) -> dict:
    return rollout.wait({"services": [{"unit": u, "health_url": url, "timeout_start_s": timeout_s} for u in services],
                         "started": started})


def test_wait_reports_a_running_unit_that_answers_health_as_healthy(systemd: StandinSystemd, health: str) -> None:
    out = _wait([UNIT], rollout.start([{"unit": UNIT}]), health)
    assert out[UNIT]["ok"] is True and out[UNIT]["check"] == "healthy" and out[UNIT]["journal"] == ""


def test_a_health_endpoint_that_never_answers_is_not_healthy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that accepts the connection and never answers: the poll goes on, it does not hang."""
    monkeypatch.setattr(rollout, "HEALTH_TIMEOUT_S", 0.2)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # listens; the kernel accepts, nobody answers
        answers: list[bool] = []
        poll = threading.Thread(target=lambda: answers.append(
            rollout._healthy(f"http://127.0.0.1:{silent.getsockname()[1]}/health")), daemon=True)
        poll.start()
        poll.join(timeout=10)
        assert answers == [False], "the /health request must time out"


@pytest.mark.parametrize(("outcome", "check", "words"), [
    ("failed", "exited", "is failed (failed), result exit-code, exit status 2"),
    ("auto-restart", "exited", "(auto-restart)"),
    ("restarted", "exited", "restarted 1 time(s)"),
])
def test_wait_fails_a_unit_that_exited_or_restarted_and_carries_its_journal(
        systemd: StandinSystemd, health: str, outcome: str, check: str, words: str) -> None:
    systemd.journal_lines[UNIT] = ["1 from an earlier start"]
    systemd.position = 1
    systemd.on_start[UNIT] = outcome
    out = _wait([UNIT], rollout.start([{"unit": UNIT}]), health)[UNIT]
    assert out["ok"] is False and out["check"] == check and words in out["detail"]
    assert out["reason"] and out["reason"] in out["journal"] + out["detail"]  # gen status and the fail message read it
    assert "Starting sglang-chat.service" in out["journal"]
    assert "from an earlier start" not in out["journal"], "only the journal since this start"


def test_wait_fails_a_unit_whose_restart_was_refused(systemd: StandinSystemd, health: str) -> None:
    systemd.refuse_restart.add(UNIT)
    out = _wait([UNIT], rollout.start([{"unit": UNIT}]), health)[UNIT]
    assert out["ok"] is False and out["check"] == "start" and "refused" in out["detail"]


def test_wait_gives_up_at_the_deadline_when_health_never_answers(
        systemd: StandinSystemd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rollout, "MARGIN_S", 0)
    # Nothing listens on port 9 of 127.0.0.1 here: the unit runs but never answers.
    out = _wait([UNIT], rollout.start([{"unit": UNIT}]), "http://127.0.0.1:9/health", timeout_s=0)[UNIT]
    assert out["ok"] is False and out["check"] == "readiness-timeout"
    assert "did not answer 200 within 0 s" in out["detail"]


def test_wait_decides_every_unit_even_when_one_fails_first(systemd: StandinSystemd, health: str) -> None:
    systemd.on_start["sglang-bad.service"] = "failed"
    started = rollout.start([{"unit": UNIT}, {"unit": "sglang-bad.service"}])
    out = _wait([UNIT, "sglang-bad.service"], started, health)
    assert (out[UNIT]["ok"], out["sglang-bad.service"]["ok"]) == (True, False)


def test_main_prints_the_result_after_the_marker_and_refuses_an_unknown_mode(
        systemd: StandinSystemd, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path)
    spec = base64.b64encode(json.dumps([_item(files)]).encode()).decode()
    assert rollout.main(["save", spec]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed.split(rollout.RESULT_MARKER + "\n", 1)[1]) == {
        UNIT: {"new": True, "active": False, "saved": []}}
    assert rollout.main(["deploy", spec]) == 2
    assert rollout.main(["save"]) == 2
    assert "usage: onhost_rollout.py save|start|wait" in capsys.readouterr().err
    assert os.path.isdir(rollout.PREVIOUS)
