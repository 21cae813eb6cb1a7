"""Put the fixture deployment on a booted test host: stand-ins, fake model, rendered files.

Everything goes over SSH as a tar stream (``tar -x -C /`` on the host), the way an
operator's deploy would copy the rendered tree. The stand-ins (named so) replace what
this machine cannot have: SGLang with a GPU (``standin_sglang_server.py`` as
``sglang.launch_server`` in a stand-in venv), ``nvidia-smi`` (its machine file written from
the inventory's GPUs and facts), torch's CUDA build facts, and model weights.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from generator.live.plan import HostPlan, host_plan
from generator.pipeline.fleet import run

from .host import TestHost
from .standins.provision import (DRAFT_DIR, GPUS_CSV, MODEL_DIR, PYTHON_MINOR, VENV, dist_info, model_files,
                                 setup_script, standin_files, tar_stream)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURE = HERE / "fixtures" / "repo"
STANDINS = HERE / "standins"
HOST = "live-test"
ALIAS = "gen-live-test"  # the fixture inventory's address: an alias in the test ssh config
FIXTURE_PORT_LINE = "    port: 30000\n"
FAULT = "/etc/standin-sglang/fault"
SERVER_INFO = "/etc/standin-sglang/server_info.json"  # the stand-in's /get_server_info figures
PIN = "0.5.9"  # the fixture inventory's sglang.pin: the stand-in parses with its catalog
RETIRED_FILE = "/data/old-weights.bin"
MACHINE = "/etc/standin-nvidia-smi/machine.json"  # what the stand-in nvidia-smi reads first (gpus.csv otherwise)
TORCH_BUILD = "/etc/standin-torch/build.json"


def fixture_repo(dest: Path, port: int) -> Path:
    """A deployment repo: the fixture's hosts/ and models/, the real templates/ and catalogs/."""
    for part in ("hosts", "models"):
        shutil.copytree(FIXTURE / part, dest / part)
    for part in ("templates", "catalogs"):
        shutil.copytree(ROOT / part, dest / part)
    inventory = dest / "hosts" / f"{HOST}.yaml"
    text = inventory.read_text()
    assert FIXTURE_PORT_LINE in text, "the fixture inventory's port line moved"
    inventory.write_text(text.replace(FIXTURE_PORT_LINE, f"    port: {port}\n"))
    return dest


def render_plan(root: Path) -> tuple[HostPlan, dict[str, tuple[bytes, int]]]:
    """Render the fixture host in memory: its plan and its files (absolute path -> bytes, mode)."""
    result = run(root, [HOST])
    assert result.ok, "\n".join(str(d) for d in result.diagnostics)
    render = result.renders[0]
    return host_plan(render), {f.path: (f.text.encode(), f.mode) for f in host_plan(render).files}


def write_ssh_config(test_host: TestHost, path: Path) -> Path:
    """An operator-style ssh config: the inventory's address as an alias for the container."""
    path.write_text(
        f"Host {ALIAS}\n    HostName 127.0.0.1\n    Port {test_host.port}\n"
        f"    IdentityFile {test_host.key}\n    IdentitiesOnly yes\n"
        "    StrictHostKeyChecking no\n    UserKnownHostsFile /dev/null\n    LogLevel ERROR\n")
    return path


def push(test_host: TestHost, files: dict[str, tuple[bytes, int]]) -> None:
    """Copy FILES (absolute path -> content, mode) to the host over ssh as one tar stream."""
    proc = subprocess.run(["ssh", "-F", str(test_host.ssh_config), test_host.name,
                           "tar -x --no-same-owner -C /"], input=tar_stream(files), capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()


def gpus_csv(plan: HostPlan) -> str:
    """nvidia-smi's answer on a host whose VM GPUs are passed through: the host's GPUs only."""
    return "".join(f"{i}, {bus}\n" for i, (_, bus) in enumerate(sorted(plan.host_gpus, key=lambda g: g[1])))


def standin_torch(venv: str = VENV) -> dict[str, tuple[bytes, int]]:
    """The stand-in torch in VENV, for the facts `gen host snapshot` and `gen verify` read
    (not with the sandbox probe's tests: an importable torch makes that probe initialize CUDA)."""
    site = f"{venv}/lib/python{PYTHON_MINOR}/site-packages"
    return {f"{site}/torch/__init__.py": ((STANDINS / "standin_torch" / "torch" / "__init__.py").read_bytes(), 0o644)}


STANDIN_DRIVER, STANDIN_CUDA = "580.95.05", "13.0"  # what the stand-in reports when the inventory records none


def machine(plan: HostPlan) -> dict[str, object]:
    """The stand-in nvidia-smi's machine: the inventory's GPUs the host keeps (VM GPUs are not
    the host driver's), in PCI order, with the figures and links the inventory records."""
    vm = {index for index, _, _ in plan.vm_gpus}
    kept = sorted((g for g in plan.gpus if g.index not in vm), key=lambda g: g.pci_bus_id)
    topo = plan.facts.topology
    cpus = dict(plan.numa)
    return {
        "driver_version": plan.facts.driver_version or STANDIN_DRIVER,
        "cuda_version": plan.facts.cuda_version or STANDIN_CUDA,
        "gpus": [{"pci_bus_id": g.pci_bus_id, "name": f"NVIDIA {g.model or 'stand-in GPU'}",
                  "memory_mib": g.memory_mib or int(g.memory_gb * 1024), "compute_cap": g.compute_cap or "12.0",
                  "cpu_affinity": cpus.get(g.numa_node, "N/A"), "numa_affinity": str(g.numa_node)} for g in kept],
        "links": [[(topo.link(a.index, b.index) if topo else None) or ("X" if a is b else "NODE") for b in kept]
                  for a in kept],
    }


def hardware_files(plan: HostPlan, torch: dict[str, object] | None = None,
                   **changes: object) -> dict[str, tuple[bytes, int]]:
    """The stand-in machine file of PLAN (with CHANGES to its keys) and the stand-in torch's build
    facts (the inventory's, or TORCH)."""
    data = machine(plan) | changes
    build = torch or {"cuda": plan.facts.torch_cuda, "arch": " ".join(plan.facts.torch_arch_list or ())}
    return {MACHINE: (json.dumps(data, indent=1).encode(), 0o644),
            TORCH_BUILD: (json.dumps(build).encode(), 0o644)}


STANDIN_SYSFS = "/run/standin-sysfs"  # bind-mounted over sysfs, in the container's mount namespace only


def standin_sysfs(test_host: TestHost, numa: dict[int, str], gpu_numa: dict[str, int]) -> None:
    """STAND-IN sysfs for a machine with NUMA nodes and GPUs this one lacks: node cpulists over
    /sys/devices/system/node and each GPU's numa_node over /sys/bus/pci/devices (bind mounts
    inside the container; the real sysfs comes back on the next call's umount)."""
    def sysfs_name(bus: str) -> str:
        domain, rest = bus.split(":", 1)
        return f"{int(domain, 16):04x}:{rest.lower()}"

    lines = [f"umount -q /sys/devices/system/node /sys/bus/pci/devices 2>/dev/null; rm -rf {STANDIN_SYSFS}"]
    for node, cpus in numa.items():
        lines.append(f"mkdir -p {STANDIN_SYSFS}/node/node{node} && echo {cpus} > {STANDIN_SYSFS}/node/node{node}/cpulist")
    for bus, node in gpu_numa.items():
        folder = f"{STANDIN_SYSFS}/pci/{sysfs_name(bus)}"
        lines.append(f"mkdir -p {folder} && echo {node} > {folder}/numa_node")
    lines.append(f"mkdir -p {STANDIN_SYSFS}/node {STANDIN_SYSFS}/pci"
                 f" && mount --bind {STANDIN_SYSFS}/node /sys/devices/system/node"
                 f" && mount --bind {STANDIN_SYSFS}/pci /sys/bus/pci/devices")
    sh(test_host, "; ".join(lines[:1]) + "; " + " && ".join(lines[1:]))


def plan_sysfs(test_host: TestHost, plan: HostPlan) -> None:
    """The stand-in sysfs of PLAN's inventory: its NUMA nodes and each GPU's node."""
    standin_sysfs(test_host, dict(plan.numa), {g.pci_bus_id: g.numa_node for g in plan.gpus})


def sh(test_host: TestHost, script: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a shell script as root on the host; with CHECK, a failure fails the test."""
    proc = subprocess.run(["ssh", "-F", str(test_host.ssh_config), test_host.name, script],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if check:
        assert proc.returncode == 0, f"{script}\n{proc.stdout}{proc.stderr}"
    return proc


def stop_units(test_host: TestHost, plan: HostPlan) -> None:
    """Stop and disable PLAN's units and clear their failed state: a module fixture's teardown."""
    units = " ".join(s.unit for s in plan.services)
    sh(test_host, f"systemctl disable --now {units}; systemctl reset-failed {units}", check=False)


def provision(test_host: TestHost, plan: HostPlan) -> None:
    """Once per host: service user, stand-ins, fake model, a retired /data with a file in it."""
    minor = sh(test_host, "python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'").stdout.strip()
    assert minor == PYTHON_MINOR, f"test image python is {minor}, the stand-in venv layout says {PYTHON_MINOR}"
    push(test_host, standin_files(PIN, plan.sglang_version, gpus_csv(plan)) | hardware_files(plan) | standin_torch())
    sh(test_host, f"{setup_script()}; head -c 4096 /dev/zero > {RETIRED_FILE}")


def server_info(plan: HostPlan, **changes: float) -> dict[str, tuple[bytes, int]]:
    """What the stand-in answers on /get_server_info: gen's own prediction, as a healthy start
    would report it, with CHANGES (a field: mem_fraction_static, weight, max_total_num_tokens)."""
    want = plan.services[0].memory
    assert want is not None, "the fixture service was not sized"
    info: dict[str, object] = {"mem_fraction_static": changes.get("mem_fraction_static", want.mem_fraction_static),
                               "internal_states": [{"memory_usage": {
                                   "weight": round(changes.get("weight", want.weights_gib), 2)}}]}
    if "max_total_num_tokens" in changes:
        info["max_total_num_tokens"] = int(changes["max_total_num_tokens"])
    return {SERVER_INFO: (json.dumps(info).encode(), 0o644)}


def deploy(test_host: TestHost, plan: HostPlan, files: dict[str, tuple[bytes, int]]) -> None:
    """Reset every drift, copy the rendered files, daemon-reload, enable and (re)start the units.

    ``reset-failed`` first: every test restarts the units, and StartLimitBurst=3 would
    otherwise refuse the fourth start within 30 minutes.
    """
    push(test_host, files | dist_info(plan.sglang_version) | {GPUS_CSV: (gpus_csv(plan).encode(), 0o644)}
         | server_info(plan) | hardware_files(plan))
    plan_sysfs(test_host, plan)
    units = " ".join(s.unit for s in plan.services)
    sh(test_host, f"rm -f {FAULT} /etc/sglang/*.secret.env /etc/sglang/secrets/*.env; rm -rf /etc/systemd/system/sglang-*.service.d;"
                  f" find {VENV}/lib -maxdepth 3 -name 'sglang-*.dist-info' ! -name 'sglang-{plan.sglang_version}.dist-info'"
                  " -exec rm -rf {} +; systemctl daemon-reload")
    push(test_host, standin_model_files())
    started = sh(test_host, f"systemctl enable -q {units} && systemctl reset-failed {units};"
                            f" systemctl restart {units}", check=False)
    if started.returncode != 0:
        journal = sh(test_host, f"systemctl status --no-pager -l {units}; journalctl -b --no-pager "
                                + " ".join(f"-u {s.unit}" for s in plan.services), check=False)
        raise AssertionError(f"start failed: {started.stderr}\n{journal.stdout}")


# The fake model folders alone (restored after a shard is removed).
standin_model_files = model_files
