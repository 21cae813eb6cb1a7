"""``gen host snapshot`` over real SSH against the systemd test host, on the example llm-two inventory.

The container stands in for llm-two: a STAND-IN nvidia-smi answers with the four RTX PRO 6000
GPUs the host keeps (GPUs 4-7 are a VM's), a STAND-IN sysfs gives two NUMA nodes and each
GPU's node, and the inventory's own ``sglang.python`` path holds a venv with the STAND-IN
torch (CUDA 12.8, sm_75..sm_120). The example inventory is used as committed, only its
``address`` pointed at the container's ssh alias.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.errors import Diagnostics
from generator.load.manifests import load_text
from generator.load.resolve import host_from_doc

from .deploy import ALIAS, MACHINE, PYTHON_MINOR, STANDINS, TORCH_BUILD, push, sh, standin_sysfs, standin_torch, \
    write_ssh_config
from .host import TestHost

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[2]
HOST = "llm-two"
VENV = "/root/sglang-main/.venv"  # the example inventory's sglang.python is VENV/bin/python
NAME = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
KEPT = ("00000000:01:00.0", "00000000:21:00.0", "00000000:41:00.0", "00000000:61:00.0")
VM = ("00000000:81:00.0", "00000000:A1:00.0", "00000000:C1:00.0", "00000000:E1:00.0")
TORCH = {"cuda": "12.8", "arch": "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120"}


def llm_two_machine(**changes: object) -> dict[str, object]:
    """What nvidia-smi shows on llm-two: the four kept GPUs, one socket, a root port each (NODE)."""
    gpus = [{"pci_bus_id": b, "name": NAME, "memory_mib": 97887, "compute_cap": "12.0",
             "cpu_affinity": "0-31,64-95", "numa_affinity": "0"} for b in KEPT]
    return {"driver_version": "580.95.05", "cuda_version": "13.0", "gpus": gpus,
            "links": [["X" if a == b else "NODE" for b in KEPT] for a in KEPT]} | changes


@dataclass(frozen=True)
class Standin:
    """The container set up as llm-two, and an ssh config that reaches it by the inventory's alias."""

    test_host: TestHost
    ssh_config: Path


@pytest.fixture(scope="module")
def standin(test_host: TestHost, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standin]:
    """Stand-in nvidia-smi, torch venv and sysfs for llm-two; the sysfs mounts are undone at the end."""
    tmp = tmp_path_factory.mktemp("host-snapshot")
    push(test_host, {"/usr/local/bin/nvidia-smi": ((STANDINS / "standin_nvidia_smi.py").read_bytes(), 0o755),
                     f"{VENV}/pyvenv.cfg": (b"home = /usr/bin\ninclude-system-site-packages = false\n", 0o644),
                     TORCH_BUILD: (json.dumps(TORCH).encode(), 0o644)} | standin_torch(VENV))
    sh(test_host, f"mkdir -p {VENV}/bin {VENV}/lib/python{PYTHON_MINOR}/site-packages; "
                  f"ln -sfn /usr/bin/python3 {VENV}/bin/python")
    standin_sysfs(test_host, {0: "0-31,64-95", 1: "32-63,96-127"},
                  {b: 0 for b in KEPT} | {b: 1 for b in VM})
    try:
        yield Standin(test_host, write_ssh_config(test_host, tmp / "ssh_config"))
    finally:
        sh(test_host, "umount -q /sys/devices/system/node /sys/bus/pci/devices", check=False)


@pytest.fixture
def repo(standin: Standin, tmp_path: Path) -> Path:
    """A copy of the example repository whose llm-two is reached at the container; the stand-in reset."""
    for part in ("hosts", "models", "catalogs", "templates", "output", "schemas", "docs"):
        shutil.copytree(ROOT / part, tmp_path / part)
    inventory = tmp_path / "hosts" / f"{HOST}.yaml"
    text = inventory.read_text()
    assert "address: llm-two.lan\n" in text
    inventory.write_text(text.replace("address: llm-two.lan\n", f"address: {ALIAS}\n"))
    push(standin.test_host, {MACHINE: (json.dumps(llm_two_machine()).encode(), 0o644)})
    return tmp_path


def snapshot(standin: Standin, root: Path, *extra: str) -> tuple[int, str, str]:
    """``gen host snapshot llm-two`` as an operator runs it: (exit code, stdout, stderr)."""
    res = CliRunner().invoke(main, ["host", "snapshot", HOST, "--root", str(root), "--ssh-config",
                                    str(standin.ssh_config), *extra])
    return res.exit_code, res.stdout, res.stderr


def _changed(diff: str) -> list[str]:
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_the_first_snapshot_adds_the_facts_and_keeps_the_rest(standin: Standin, repo: Path) -> None:
    """The example already carries its GPUs' figures: only the facts section is new."""
    before = (repo / "hosts" / f"{HOST}.yaml").read_text()
    code, out, err = snapshot(standin, repo)
    assert code == 0, err
    changed = _changed(out)
    assert changed and all(ln.startswith("+") for ln in changed), out
    for line in ('+  driver_version: "580.95.05"', '+  cuda_version: "13.0"', '+  torch_cuda: "12.8"',
                 "+  torch_arch_list: [sm_75, sm_80, sm_86, sm_90, sm_100, sm_120, compute_120]",
                 "+    gpus: [0, 1, 2, 3]", "+      - [X, NODE, NODE, NODE]"):
        assert line in changed, out
    after = (repo / "hosts" / f"{HOST}.yaml").read_text()
    assert [ln for ln in after.splitlines() if not ln.startswith(("facts:", "  ", "#"))] == \
        [ln for ln in before.splitlines() if not ln.startswith(("  ", "#"))]  # every top-level key, in order
    doc = load_text(after, f"hosts/{HOST}.yaml", Diagnostics())
    assert doc is not None and host_from_doc(doc).facts.torch_arch_list[-1] == "compute_120"
    assert f"gen: updated hosts/{HOST}.yaml: 4 GPU(s) seen, driver 580.95.05" in err
    check = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert check.exit_code == 0, check.stderr  # the seed deployment stays clean with its facts


def test_a_second_snapshot_leaves_the_file_byte_for_byte(standin: Standin, repo: Path) -> None:
    """Nothing changed on the host: no diff, the file neither changed nor rewritten."""
    assert snapshot(standin, repo)[0] == 0
    path = repo / "hosts" / f"{HOST}.yaml"
    data, inode = path.read_bytes(), path.stat().st_ino
    code, out, err = snapshot(standin, repo)
    assert (code, out) == (0, "")
    assert f"gen: unchanged hosts/{HOST}.yaml" in err
    assert path.read_bytes() == data and path.stat().st_ino == inode


def test_a_swapped_gpu_changes_its_own_line(standin: Standin, repo: Path) -> None:
    """GPU 2 is now an H100: --dry-run shows it and writes nothing; then one line changes."""
    assert snapshot(standin, repo)[0] == 0
    path = repo / "hosts" / f"{HOST}.yaml"
    machine = llm_two_machine()
    machine["gpus"][2] |= {"name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "compute_cap": "9.0"}  # type: ignore[index]
    push(standin.test_host, {MACHINE: (json.dumps(machine).encode(), 0o644)})
    data = path.read_bytes()
    code, dry, err = snapshot(standin, repo, "--dry-run")
    assert code == 0 and path.read_bytes() == data and f"would update hosts/{HOST}.yaml" in err
    code, out, err = snapshot(standin, repo)
    assert code == 0 and out == dry
    assert _changed(out) == [
        '-  - {index: 2, pci_bus_id: "00000000:41:00.0", memory_gb: 96, memory_mib: 97887, compute_cap: "12.0", '
        "numa_node: 0, model: RTX PRO 6000 Blackwell}",
        '+  - {index: 2, pci_bus_id: "00000000:41:00.0", memory_mib: 81559, compute_cap: "9.0", numa_node: 0, '
        "model: NVIDIA H100 80GB HBM3}"]
    assert "gen: note: GPU 2: memory_gb 96 dropped, the host measures 81559 MiB (79.6 GiB)" in err


def test_a_host_without_a_driver_is_an_environment_failure(standin: Standin, repo: Path) -> None:
    """nvidia-smi finds no device: exit 3, the inventory untouched."""
    # Without machine.json the stand-in falls back to gpus.csv, which the deploy tests provision on
    # the same test host: set it aside for this test, so the order of the live tests does not matter.
    csv = "/etc/standin-nvidia-smi/gpus.csv"
    sh(standin.test_host, f"rm -f {MACHINE}; if [ -e {csv} ]; then mv {csv} {csv}.aside; fi")
    data = (repo / "hosts" / f"{HOST}.yaml").read_bytes()
    try:
        code, out, err = snapshot(standin, repo)
    finally:
        sh(standin.test_host, f"if [ -e {csv}.aside ]; then mv {csv}.aside {csv}; fi")
    assert code == 3 and out == ""
    assert "No devices were found" in err
    assert (repo / "hosts" / f"{HOST}.yaml").read_bytes() == data


def test_a_crlf_inventory_with_comments_keeps_its_text(standin: Standin, repo: Path) -> None:
    """An inventory saved with CRLF line ends and a heading comment above the key after numa: the
    snapshot adds the facts with CRLF, the heading stays above its key, a second run changes nothing."""
    path = repo / "hosts" / f"{HOST}.yaml"
    text = path.read_text().replace("vm_passthrough:", "# GPUs 4-7 belong to the VM\nvm_passthrough:")
    path.write_bytes(text.replace("\n", "\r\n").encode())
    code, _out, err = snapshot(standin, repo)
    assert code == 0, err
    after = path.read_bytes().decode()
    assert after.count("\n") == after.count("\r\n") and "\r\nfacts:\r\n" in after
    lines = after.split("\r\n")
    assert lines[lines.index("vm_passthrough:") - 1] == "# GPUs 4-7 belong to the VM"
    assert lines.index("facts:") < lines.index("vm_passthrough:")
    data = path.read_bytes()
    assert snapshot(standin, repo)[:2] == (0, "") and path.read_bytes() == data
