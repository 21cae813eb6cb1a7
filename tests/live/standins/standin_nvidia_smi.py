#!/usr/bin/python3
"""STAND-IN for ``nvidia-smi`` in the live tests: prints a data file's GPUs in nvidia-smi's formats.

Installed in the test container as /usr/local/bin/nvidia-smi; there is no GPU here. The
machine it describes is ``/etc/standin-nvidia-smi/machine.json``, which the tests write
(from the inventory, or a real box's figures) and edit to inject drift::

    {"driver_version": "580.95.05", "cuda_version": "13.0",
     "gpus": [{"pci_bus_id": "00000000:01:00.0", "name": "...", "memory_mib": 97887,
               "compute_cap": "12.0", "cpu_affinity": "0-31,64-95", "numa_affinity": "0"}],
     "links": [["X", "NODE"], ["NODE", "X"]]}

GPUs are listed (and ``links`` given) in PCI bus order, nvidia-smi's numbering. It answers three calls,
each in the layout the real tool prints (copied from real captures, see below):

* ``--query-gpu=F1,F2,... --format=csv[,noheader][,nounits]`` for the fields index, name,
  pci.bus_id, memory.total, compute_cap, driver_version: "0, NVIDIA H200,
  00000000:19:00.0, 143771 MiB, 9.0, 580.65.06", with the header line "index, name,
  pci.bus_id, memory.total [MiB], compute_cap, driver_version" unless noheader;
* ``topo -m``: the tab-separated matrix (cells " X ", "NV18", "NODE", ...), then the CPU
  Affinity, NUMA Affinity and GPU NUMA ID columns and the legend, as in the 8x H200
  ``check_env`` of https://github.com/sgl-project/sglang/issues/15359 and the 8x PCIe
  dual-socket box of https://github.com/NVIDIA/go-gpuallocator/issues/17;
* no arguments: the summary table whose header line carries "Driver Version" and
  "CUDA Version", as in https://github.com/sgl-project/sglang/issues/3196 (8x H200).

Anything else exits 2. Without the machine file, ``/etc/standin-nvidia-smi/gpus.csv`` (lines
``index, bus id``, what tests/live/standins/provision.py writes for the tests and
``scripts/test-host boot --standin`` that need only the GPUs' bus ids) describes the GPUs,
with the stand-in's default figures. No data file is "No devices were found", exit 6, as the
real tool does without a driver.
"""

import importlib.util
import json
import sys
from pathlib import Path

MACHINE = Path("/etc/standin-nvidia-smi/machine.json")
GPUS_CSV = Path("/etc/standin-nvidia-smi/gpus.csv")
FIELDS = ("index", "name", "pci.bus_id", "memory.total", "compute_cap", "driver_version")
# The legend nvidia-smi prints after ``topo -m``: the real capture's, from
# tests/nvidia_smi_outputs.py (provision.py installs it in CAPTURES on the test host).
CAPTURES = Path("/usr/local/lib/standin-nvidia-smi/nvidia_smi_outputs.py")


def _legend() -> str:
    here = Path(__file__).resolve().parents[2] / "nvidia_smi_outputs.py"  # tests/, in a checkout
    spec = importlib.util.spec_from_file_location("nvidia_smi_outputs", CAPTURES if CAPTURES.exists() else here)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TOPO_LEGEND


def _gpus(machine: dict) -> list:
    """The GPUs in PCI bus order, nvidia-smi's numbering (the data file lists them so, links too)."""
    return machine["gpus"]


def _field(machine: dict, index: int, gpu: dict, field: str, units: bool) -> str:
    if field == "index":
        return str(index)
    if field == "name":
        return gpu["name"]
    if field == "pci.bus_id":
        return gpu["pci_bus_id"]
    if field == "memory.total":
        return f"{gpu['memory_mib']} MiB" if units else str(gpu["memory_mib"])
    if field == "compute_cap":
        return gpu["compute_cap"]
    return machine["driver_version"]


def query(machine: dict, fields: list, options: list) -> str:
    """``--query-gpu``: one CSV line per GPU (and the header unless noheader)."""
    units = "nounits" not in options
    lines = []
    if "noheader" not in options:
        lines.append(", ".join(f + (" [MiB]" if f == "memory.total" and units else "") for f in fields))
    for index, gpu in enumerate(_gpus(machine)):
        lines.append(", ".join(_field(machine, index, gpu, f, units) for f in fields))
    return "\n".join(lines) + "\n"


def topology(machine: dict) -> str:
    """``topo -m``: the link matrix between GPUs with the affinity columns and the legend."""
    gpus = _gpus(machine)
    head = "\t" + "\t".join(f"GPU{i}" for i in range(len(gpus))) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [head]
    for i, gpu in enumerate(gpus):
        cells = [" X " if c == "X" else c for c in machine["links"][i]]
        rows.append(f"GPU{i}\t" + "\t".join(cells) + f"\t{gpu.get('cpu_affinity', 'N/A')}"
                    f"\t{gpu.get('numa_affinity', 'N/A')}\t\tN/A")
    return "\n".join(rows) + "\n" + _legend()


def summary(machine: dict) -> str:
    """No arguments: the summary table (its header and one block per GPU)."""
    bar = "+-----------------------------------------------------------------------------------------+"
    out = ["Mon Dec  1 12:00:00 2026", bar,
           f"| NVIDIA-SMI {machine['driver_version']:<22}Driver Version: {machine['driver_version']:<15}"
           f"CUDA Version: {machine['cuda_version']:<9}|",
           "|-----------------------------------------+------------------------+----------------------+"]
    for index, gpu in enumerate(_gpus(machine)):
        out.append(f"| {index:>3}  {gpu['name'][:29]:<29}  On  |   {gpu['pci_bus_id']} Off |"
                   "                    0 |")
        out.append(f"| N/A   30C    P0             75W /  600W |       1MiB / {gpu['memory_mib']:>6}MiB |"
                   "      0%      Default |")
    out.append(bar)
    return "\n".join(out) + "\n"


def csv_machine(text: str) -> dict:
    """The machine of a gpus.csv (``index, bus id`` lines, PCI order): the GPUs, default figures."""
    buses = [line.split(",")[1].strip() for line in text.splitlines() if line.strip()]
    return {"driver_version": "580.95.05", "cuda_version": "13.0",
            "gpus": [{"pci_bus_id": b, "name": "NVIDIA stand-in GPU", "memory_mib": 98304, "compute_cap": "12.0"}
                     for b in buses],
            "links": [["X" if a == b else "NODE" for b in buses] for a in buses]}


def main(argv: list) -> int:
    """Answer one nvidia-smi call from the stand-in machine."""
    if MACHINE.exists():
        machine = json.loads(MACHINE.read_text())
    elif GPUS_CSV.exists():
        machine = csv_machine(GPUS_CSV.read_text())
    else:
        print("No devices were found")
        return 6
    if not argv:
        sys.stdout.write(summary(machine))
        return 0
    if argv == ["topo", "-m"]:
        sys.stdout.write(topology(machine))
        return 0
    if len(argv) == 2 and argv[0].startswith("--query-gpu=") and argv[1].startswith("--format=csv"):
        fields = argv[0].split("=", 1)[1].split(",")
        options = argv[1].split("=", 1)[1].split(",")[1:]
        if all(f in FIELDS for f in fields) and set(options) <= {"noheader", "nounits"}:
            sys.stdout.write(query(machine, fields, options))
            return 0
    print(f"stand-in nvidia-smi: {' '.join(argv)} is not supported", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
