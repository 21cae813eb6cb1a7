"""Boot, reach and stop a real systemd test host (scripts/test-host) from Python.

No pytest import here: the helpers are plain functions so that scripts and other test
suites can use them too. A booted host is reachable three ways:

* ``ssh(host, cmd)`` / ``copy_to(host, local, remote)`` from this module;
* ``testinfra.get_host(host.testinfra_url, ssh_config=str(host.ssh_config))``;
* ``pytest --hosts=<host.testinfra_url> --ssh-config=<host.ssh_config>``.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import socket
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "test-host"
# Boot needs well under a second once the rootfs is cached; the first run builds it.
BOOT_TIMEOUT_S = 900.0
SSH_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class TestHost:
    """A booted container: its ssh alias is ``name`` inside ``ssh_config``."""

    __test__ = False  # a data class, not a pytest test class

    name: str
    port: int
    ssh_config: Path
    key: Path
    state_dir: Path
    pid: int

    @property
    def testinfra_url(self) -> str:
        """Return the testinfra host spec, ``ssh://<alias>``."""
        return f"ssh://{self.name}"


def free_port() -> int:
    """Ask the kernel for a free TCP port on 127.0.0.1 (shared with the container)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pid_alive(pid: int) -> bool:
    """Tell whether PID exists and is not a zombie (a zombie has already ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _write_ssh_config(path: Path, alias: str, port: int, key: Path, proxy: str | None = None) -> None:
    """Write an ssh_config whose ``Host alias`` reaches root in the container (via PROXY if given)."""
    path.write_text(
        f"Host {alias}\n"
        + (f"    ProxyCommand {proxy}\n" if proxy else "") +
        "    HostName 127.0.0.1\n"
        f"    Port {port}\n"
        "    User root\n"
        f"    IdentityFile {key}\n"
        "    IdentitiesOnly yes\n"
        # Every container is new, with host keys from a shared image: never record them.
        "    StrictHostKeyChecking no\n"
        "    UserKnownHostsFile /dev/null\n"
        "    BatchMode yes\n"
        "    LogLevel ERROR\n"
        "    ConnectTimeout 10\n"
    )


def boot_test_host(
    tmp_dir: Path,
    name: str | None = None,
    owner_pid: int | None = None,
    binds: Sequence[str] = (),
    device_cgroup: bool = False,
    netns: Path | None = None,
) -> TestHost:
    """Boot a container under TMP_DIR (key, ssh_config, state) and return it running.

    The container stops by itself when OWNER_PID (default: this process) dies, so a
    crashed test run cannot leave it behind; call ``stop_test_host`` in any case.
    BINDS are ``SRC[:DST]`` folders of this machine mounted read-only inside
    (``scripts/test-host boot --bind-ro``), e.g. a real SGLang venv. DEVICE_CGROUP:
    DevicePolicy= is enforced inside (``--device-cgroup``); NETNS: the container runs in
    that network namespace and ssh reaches it through a ProxyCommand relay.
    """
    tmp_dir.mkdir(parents=True, exist_ok=True)
    name = name or f"gen-test-{os.getpid()}-{secrets.token_hex(3)}"
    key = tmp_dir / "id_ed25519"
    if not key.exists():
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
            check=True,
            stdin=subprocess.DEVNULL,
        )
    state_dir = tmp_dir / "state"
    result = subprocess.run(
        [
            str(SCRIPT),
            "boot",
            name,
            "--key",
            f"{key}.pub",
            "--identity",
            str(key),
            "--state-dir",
            str(state_dir),
            "--owner-pid",
            str(owner_pid if owner_pid is not None else os.getpid()),
            *(f"--bind-ro={spec}" for spec in binds),
            *(["--device-cgroup"] if device_cgroup else []),
            *([f"--netns={netns}"] if netns is not None else []),
        ],
        capture_output=True,
        text=True,
        timeout=BOOT_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        raise RuntimeError(f"test-host boot failed ({result.returncode}):\n{result.stderr}")
    info = json.loads(result.stdout)
    ssh_config = tmp_dir / "ssh_config"
    proxy = None
    if netns is not None:
        from .netns import proxy_command  # only the multi-node tests need namespaces

        proxy = proxy_command(netns)
    _write_ssh_config(ssh_config, name, int(info["port"]), key, proxy)
    return TestHost(
        name=name,
        port=int(info["port"]),
        ssh_config=ssh_config,
        key=key,
        state_dir=Path(info["state_dir"]),
        pid=int(info["nspawn_pid"]),
    )


def stop_test_host(host: TestHost) -> None:
    """Stop HOST by its recorded PID and remove its per-run root (safe to repeat)."""
    result = subprocess.run(
        [str(SCRIPT), "stop", "--state-dir", str(host.state_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        raise RuntimeError(f"test-host stop failed ({result.returncode}):\n{result.stderr}")


def ssh(
    host: TestHost, cmd: str | Sequence[str], timeout: float = SSH_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Run CMD as root on HOST (a string goes to the remote shell as is); never raises."""
    remote = cmd if isinstance(cmd, str) else shlex.join(cmd)
    return subprocess.run(
        ["ssh", "-F", str(host.ssh_config), host.name, remote],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def copy_to(host: TestHost, local: Path, remote: str) -> None:
    """Copy the file LOCAL to path REMOTE on HOST, creating the remote folder."""
    parent = os.path.dirname(remote) or "."
    made = ssh(host, ["mkdir", "-p", parent])
    if made.returncode != 0:
        raise RuntimeError(f"mkdir {parent} on {host.name} failed: {made.stderr}")
    subprocess.run(
        ["scp", "-q", "-F", str(host.ssh_config), str(local), f"{host.name}:{remote}"],
        check=True,
        capture_output=True,
        timeout=SSH_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
