"""The live test host is a real systemd host: ssh, testinfra, units, verify, stop."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from testinfra.host import Host

from .host import (
    TestHost,
    boot_test_host,
    copy_to,
    free_port,
    pid_alive,
    ssh,
    stop_test_host,
)

pytestmark = pytest.mark.live

STANDINS = Path(__file__).parent / "standins"
STANDIN_UNIT = STANDINS / "standin-http.service"


def _wait(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll PREDICATE (a callable) every 0.1 s until true or TIMEOUT seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def test_pid1_is_systemd_and_the_system_is_up(test_host: TestHost) -> None:
    """PID 1 inside is systemd, it reports running/degraded, and the host is the container."""
    result = ssh(test_host, "cat /proc/1/comm; hostname; systemctl is-system-running")
    comm, hostname, state = result.stdout.split()
    assert comm == "systemd"
    assert hostname == test_host.name
    assert state in ("running", "degraded"), ssh(test_host, "systemctl --failed").stdout


def test_testinfra_sees_sshd_running_and_listening(
    test_host: TestHost, testinfra_host: Host
) -> None:
    """testinfra over ssh finds ssh.service running and its loopback port listening."""
    assert testinfra_host.service("ssh").is_running
    assert testinfra_host.socket(f"tcp://127.0.0.1:{test_host.port}").is_listening
    # The container shares this machine's network namespace, so ss inside lists the
    # machine's sockets too; those owned by processes in the container carry "users:"
    # (the machine's own processes are not visible there). Only sshd may be among them.
    listening = testinfra_host.check_output("ss -Hltnup")
    owned = [line for line in listening.splitlines() if "users:" in line]
    assert owned and all('(("sshd",' in line for line in owned), listening
    assert any(f"127.0.0.1:{test_host.port} " in line for line in owned), listening


def test_pytest_hosts_option_reaches_the_container(test_host: TestHost, tmp_path: Path) -> None:
    """``pytest --hosts=ssh://ALIAS --ssh-config=FILE`` runs testinfra's ``host`` there."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "def test_probe(host):\n"
        f"    assert host.check_output('hostname') == {test_host.name!r}\n"
        "    assert host.service('ssh').is_running\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--rootdir={tmp_path}",
            f"--hosts={test_host.testinfra_url}",
            f"--ssh-config={test_host.ssh_config}",
            str(probe),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_copied_unit_starts_and_serves(
    test_host: TestHost, testinfra_host: Host, tmp_path: Path
) -> None:
    """A unit copied in, daemon-reload, start: active, listening, answering HTTP."""
    port = free_port()
    env_file = tmp_path / "standin-http.env"
    env_file.write_text(f"STANDIN_PORT={port}\n")
    copy_to(test_host, env_file, "/etc/standin-http.env")
    copy_to(test_host, STANDIN_UNIT, "/etc/systemd/system/standin-http.service")
    try:
        started = ssh(test_host, "systemctl daemon-reload && systemctl start standin-http.service")
        assert started.returncode == 0, started.stderr
        active = ssh(test_host, "systemctl is-active standin-http.service")
        assert active.stdout.strip() == "active", ssh(
            test_host, "journalctl -u standin-http.service --no-pager"
        ).stdout
        assert testinfra_host.service("standin-http.service").is_running
        socket = testinfra_host.socket(f"tcp://127.0.0.1:{port}")
        assert _wait(lambda: socket.is_listening, 10.0)
        # Same network namespace: the service in the container answers this machine.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            assert response.status == 200
        main_pid = ssh(test_host, "systemctl show -P MainPID standin-http.service")
        assert int(main_pid.stdout) > 0
    finally:
        ssh(
            test_host,
            "systemctl stop standin-http.service; "
            "rm -f /etc/systemd/system/standin-http.service /etc/standin-http.env; "
            "systemctl daemon-reload",
        )
    assert not testinfra_host.socket(f"tcp://127.0.0.1:{port}").is_listening


def test_systemd_analyze_verify_is_silent_on_the_standin_unit(test_host: TestHost) -> None:
    """``systemd-analyze verify`` inside the container prints nothing for a good unit."""
    copy_to(test_host, STANDIN_UNIT, "/tmp/verify-good/standin-http.service")
    result = ssh(test_host, "systemd-analyze verify /tmp/verify-good/standin-http.service")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_systemd_analyze_verify_reports_an_unknown_setting(
    test_host: TestHost, tmp_path: Path
) -> None:
    """The same check speaks up for a bad unit, so the silent case above means something."""
    broken = tmp_path / "standin-http.service"
    broken.write_text(
        STANDIN_UNIT.read_text().replace("[Service]\n", "[Service]\nNoSuchSetting=yes\n")
    )
    copy_to(test_host, broken, "/tmp/verify-bad/standin-http.service")
    result = ssh(test_host, "systemd-analyze verify /tmp/verify-bad/standin-http.service")
    assert "NoSuchSetting" in result.stdout + result.stderr


def test_stop_ends_the_container_and_removes_its_root(tmp_path: Path) -> None:
    """After stop, nspawn and the container's init are gone, and so is the per-run root."""
    host = boot_test_host(tmp_path)
    init_pid = int((host.state_dir / "init.pid").read_text())
    try:
        assert pid_alive(host.pid) and pid_alive(init_pid)
        assert (host.state_dir / "root" / "etc" / "os-release").exists()
        assert ssh(host, "true").returncode == 0
    finally:
        stop_test_host(host)
    assert not pid_alive(host.pid)
    assert not pid_alive(init_pid)
    assert not (host.state_dir / "root").exists()
    assert ssh(host, "true", timeout=30).returncode != 0


def test_container_stops_when_its_owner_dies(tmp_path: Path) -> None:
    """If the process that booted it dies without stopping it, the container goes too."""
    owner = subprocess.Popen(["sleep", "600"])
    host = boot_test_host(tmp_path, owner_pid=owner.pid)
    init_pid = int((host.state_dir / "init.pid").read_text())
    try:
        assert pid_alive(host.pid) and pid_alive(init_pid)
        owner.kill()
        owner.wait()
        assert _wait(lambda: not pid_alive(host.pid) and not pid_alive(init_pid), 30.0)
        assert _wait(lambda: not (host.state_dir / "root").exists(), 10.0)
    finally:
        owner.kill()
        stop_test_host(host)
