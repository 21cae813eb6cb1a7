"""A two-container multi-node fleet for the rollout tests: boot, provision, repo, ansible.

Each container runs in its own network namespace (:mod:`netns`) with the device cgroup
enforced (``test-host boot --device-cgroup``), so both ranks serve the same port and
DevicePolicy= is real. The NVIDIA device nodes are character devices with NVIDIA's
majors (195 for nvidia0/nvidiactl, 511 for nvidia-uvm) and no driver behind them, and a
STAND-IN ``/proc/devices`` (a copy with ``195 nvidia-frontend`` and ``511 nvidia-uvm``
added, bind-mounted in the container only) lets systemd resolve ``char-nvidia*`` as it
would on a GPU host. Both are in place before any unit starts (systemd resolves
``char-*`` names at unit start).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ansible.parsing.dataloader import DataLoader

from generator.emit.ansible.digest import tree_digest

from .deploy import FIXTURE, PIN, VENV, push, sh
from .standins.provision import NVIDIA_MAJOR, UVM_MAJOR, gpu_nodes_script, setup_script, standin_files
from .host import TestHost
from .netns import Link

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MODEL = "standin-mn"
SINGLE_MODEL = "standin-llama-eagle3"
HOSTS = ("mn-a", "mn-b")
DIST_PORT = 50123
STANDIN_PROC_DEVICES = "/run/standin-proc-devices"
PER_SERVICE_NODES = 3  # nvidiactl, nvidia-uvm and the one placed GPU's node


@dataclass(frozen=True)
class Fleet:
    """Both ranks' containers, their link, the deployment repo and the service port."""

    hosts: dict[str, TestHost]
    link: Link
    repo: Path
    port: int
    ssh_config: Path


def majors_free_here() -> list[str]:
    """The NVIDIA majors that a real driver holds on this machine (must be none: ENXIO is the proof)."""
    text = Path("/proc/devices").read_text()
    char = text.split("Block devices:")[0]
    return [ln for ln in char.splitlines() if ln.strip().split(" ")[0] in (str(NVIDIA_MAJOR), str(UVM_MAJOR))]


def make_nodes(host: TestHost) -> None:
    """Character devices with NVIDIA's majors (no driver behind them: an allowed open is ENXIO)."""
    sh(host, gpu_nodes_script())


def provision(host: TestHost) -> None:
    """Stand-ins, service user, device nodes and the stand-in /proc/devices."""
    push(host, standin_files(PIN, PIN, "0, 00000000:01:00.0\n1, 00000000:21:00.0\n"))
    make_nodes(host)
    sh(host, f"{setup_script()};"
             # STAND-IN for the NVIDIA driver's /proc/devices entries (container mount namespace only).
             f" awk '{{print}} /^Character devices:/{{print \"{NVIDIA_MAJOR} nvidia-frontend\";"
             f" print \"{UVM_MAJOR} nvidia-uvm\"}}' /proc/devices > {STANDIN_PROC_DEVICES};"
             f" mount --bind {STANDIN_PROC_DEVICES} /proc/devices")


def ssh_config(fleet_hosts: dict[str, TestHost], path: Path) -> Path:
    """One ssh config: each inventory address (``<host>.test``) as an alias through its netns."""
    blocks = []
    for name, host in fleet_hosts.items():
        text = host.ssh_config.read_text()
        blocks.append(text.replace(f"Host {host.name}\n", f"Host {name}.test\n", 1))
    path.write_text("".join(blocks))
    return path


def _model_yaml() -> str:
    return (f"name: {MODEL}\ndescription: fake model served by two stand-in ranks (rollout tests)\n"
            "weights:\n  path: /shared/models/standin-llama\n  format: safetensors\n  size_gb: 1\n  shards: 2\n"
            "served_model_name: standin-mn\nparallel:\n  tp: 2\n"
            f"multinode:\n  hosts: [{HOSTS[0]}, {HOSTS[1]}]\n  port: {DIST_PORT}\n")


def host_yaml(name: str, host: TestHost, address: str, port: int, idle: bool) -> str:
    """One rank's inventory; IDLE adds a single-node ``enabled: false`` service."""
    idle_svc = (f"  - name: idle\n    model: {SINGLE_MODEL}\n    port: {port + 1}\n    gpus: [1]\n"
                "    enabled: false\n") if idle else ""
    return (f"name: {name}\ndescription: rollout live-test rank {name} (stand-in SGLang)\n"
            f"address: {name}.test\nssh:\n  user: root\n  port: {host.port}\n"
            "gpus:\n"
            '  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, numa_node: 0, model: stand-in GPU}\n'
            '  - {index: 1, pci_bus_id: "00000000:21:00.0", memory_gb: 96, numa_node: 0, model: stand-in GPU}\n'
            'numa:\n  - {node: 0, cpus: "0-1"}\n'
            f"network:\n  address: {address}\n  interface: eth-standin\n"
            "storage:\n  model_root: /shared/models\n"
            f'sglang:\n  pin: "{PIN}"\n  python: {VENV}/bin/python\n  user: sglang\n'
            f"services:\n  - name: mn\n    model: {MODEL}\n    port: {port}\n    listen: 0.0.0.0\n    gpus: [0]\n"
            f"    timeout_start_min: 1\n{idle_svc}")


def write_repo(fleet: Fleet, rank0_address: str | None = None) -> None:
    """(Re)write both inventories; RANK0_ADDRESS overrides rank 0's network address."""
    for i, name in enumerate(HOSTS):
        address = rank0_address if (i == 0 and rank0_address) else fleet.link.addresses[i]
        (fleet.repo / "hosts" / f"{name}.yaml").write_text(
            host_yaml(name, fleet.hosts[name], address, fleet.port, idle=i == 0))


def make_repo(base: Path) -> Path:
    """The deployment repo: the multi-node model, the fixture's single-node model, templates, catalogs."""
    repo = base / "repo"
    shutil.copytree(FIXTURE / "models", repo / "models")
    (repo / "models" / f"{MODEL}.yaml").write_text(_model_yaml())
    for part in ("templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    (repo / "hosts").mkdir()
    return repo


def gen(repo: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """The real `gen` command line; with OK a non-zero exit fails the test."""
    proc = subprocess.run([str(BIN / "gen"), *args, "--root", str(repo)], capture_output=True, text=True,
                          check=False, timeout=300)
    assert not ok or proc.returncode == 0, f"gen {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc


def playbook(fleet: Fleet, *args: str) -> subprocess.CompletedProcess[str]:
    """ansible-playbook on the generated files, reaching the containers through their netns."""
    home = fleet.repo / ".ansible-home"
    env = os.environ | {
        "LC_ALL": "C.UTF-8", "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
        "ANSIBLE_HOST_KEY_CHECKING": "False",
        # One ssh connection per host for the whole run (each new one goes through nsenter and
        # the relay); stop_masters() ends them by their control sockets.
        "ANSIBLE_SSH_ARGS": f"-F {fleet.ssh_config} -o ControlMaster=auto -o ControlPersist=120s "
                            f"-o ControlPath={control_path(fleet)}",
        "ANSIBLE_PIPELINING": "True",
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3", "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "False", "ANSIBLE_FORCE_COLOR": "0",
    }
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(fleet.repo / "ansible" / "inventory.yml"),
                           str(fleet.repo / "ansible" / "site.yml"), *args],
                          capture_output=True, text=True, env=env, check=False, timeout=900)


def control_path(fleet: Fleet) -> str:
    """The ssh control socket pattern of this fleet's Ansible runs (short: sockets have a path limit)."""
    return f"/tmp/gen-cm-{fleet.port}-%C"


def stop_masters(fleet: Fleet) -> None:
    """End the ssh control masters the Ansible runs left (by their sockets); safe to repeat."""
    for name in fleet.hosts:
        subprocess.run(["ssh", "-F", str(fleet.ssh_config), "-o", f"ControlPath={control_path(fleet)}",
                        "-O", "exit", f"{name}.test"], capture_output=True, timeout=30, check=False)


def recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP counters per host."""
    return {host: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", rest)}
            for host, rest in re.findall(r"^(\S+)\s+:\s+(ok=.*)$", output, re.MULTILINE)}


def state(host: TestHost, unit: str) -> dict[str, str]:
    """A few systemctl properties of UNIT."""
    out = sh(host, f"systemctl show -p ActiveState,SubState,UnitFileState,InvocationID,NRestarts {unit}").stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def healthy(host: TestHost, port: int) -> bool:
    """True when 127.0.0.1:PORT/health answers 200 inside HOST's own network namespace."""
    probe = sh(host, f"python3 -c \"import urllib.request; print(urllib.request.urlopen("
                     f"'http://127.0.0.1:{port}/health', timeout=5).status)\"", check=False)
    return probe.stdout.strip() == "200"


def live_files(fleet: Fleet) -> dict[str, str]:
    """sha256, mode and owner of every gen file of the group service on both hosts."""
    out = {}
    for name, host in fleet.hosts.items():
        for path in ("/etc/systemd/system/sglang-mn.service", "/etc/sglang/mn.env"):
            out[f"{name}:{path}"] = sh(host, f"sha256sum {path} | cut -d' ' -f1; stat -c '%a %U %G' {path}").stdout
    return out


def accept_hand_edit(repo: Path, host: str) -> None:
    """Record HOST's hand-edited output/ tree as current in ansible/inventory.yml.

    A test's stand-in for a unit gen would never render (an unknown flag, a setting this
    systemd lacks): the playbook's first task refuses an output/ that changed since
    `gen ansible`, and `gen ansible` refuses an output/ that is not the render, so the
    test writes the new tree's digest where gen ansible records it.
    """
    inventory = repo / "ansible" / "inventory.yml"
    hosts = DataLoader().load(inventory.read_text())["all"]["children"]["sglang_hosts"]["hosts"]
    old = str(hosts[host]["gen_digest"])
    text = inventory.read_text()
    assert text.count(f'"{old}"') >= 1
    new = tree_digest(str(repo / "output" / host))
    inventory.write_text(text.replace(f'gen_digest: !unsafe "{old}"\n', f'gen_digest: !unsafe "{new}"\n'))
