"""A host's GPU facts read live: nvidia-smi, the link matrix, NUMA from sysfs, the host SGLang's torch.

:func:`capture` runs a handful of read-only commands through any ``run(command) -> (rc,
stdout, stderr)`` (a testinfra host's, over the one ssh connection of
:func:`generator.live.target.shared_connection`), and the parsers turn their text into
:class:`LiveFacts`. ``gen host snapshot`` writes them into the inventory
(:mod:`generator.live.inventory_update`) and ``gen verify`` compares them with it
(:mod:`generator.live.checks.facts`), so both read the host the same way:

* ``nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,compute_cap,driver_version
  --format=csv,noheader,nounits``: one line per GPU the driver sees;
* ``nvidia-smi topo -m``: the link matrix (its ``GPUi`` rows and columns; NIC columns and
  the affinity columns are skipped);
* ``nvidia-smi`` (no arguments): the ``CUDA Version`` of its header, the newest CUDA the
  driver supports;
* sysfs: ``/sys/devices/system/node/node*/cpulist`` and each GPU's
  ``/sys/bus/pci/devices/<bus>/numa_node`` (-1 where the firmware gives none);
* the host SGLang Python: ``torch.version.cuda`` and the architectures its kernels are
  built for, from ``torch._C._cuda_getArchFlags()`` (what ``torch.cuda.get_arch_list()``
  returns, read without initializing CUDA).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from generator.errors import GenError
from generator.load import json_text
from generator.load.schema import ARCH_RE, CPULIST_RE, CUDA_VERSION_RE, DRIVER_RE, GPU_INDEX, NUMA_NODE
from generator.load.values import bad_char

QUERY_FIELDS = ("index", "name", "pci.bus_id", "memory.total", "compute_cap", "driver_version")
QUERY = f"nvidia-smi --query-gpu={','.join(QUERY_FIELDS)} --format=csv,noheader,nounits"
TOPOLOGY = "nvidia-smi topo -m"
SUMMARY = "nvidia-smi"
NODE_GLOB = "/sys/devices/system/node/node[0-9]*/cpulist"
# No CUDA initialization: the build's arch flags, not torch.cuda.get_arch_list() (which asks the driver).
TORCH_PROBE = ("import json, torch; f = getattr(torch._C, '_cuda_getArchFlags', None); "
               "c = torch.version.cuda; print(json.dumps({'cuda': c, 'arch': ((f() or '').split() if f and c else [])}))")

Runner = Callable[[str], tuple[int, str, str]]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CUDA = re.compile(r"CUDA Version:\s*([0-9]{1,4}\.[0-9]{1,4})\b")
_CAP = re.compile(r"^[1-9][0-9]?\.[0-9]$")
_PCI = re.compile(r"^([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")
_LINK = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|NV[1-9][0-9]?)$")


class FactsError(GenError, OSError):
    """The host's tools answered what gen cannot read (no driver, an unknown format): exit 3."""


# What the host prints is data from outside, checked before it becomes a fact (and so before it
# reaches hosts/NAME.yaml): numbers are ASCII digits within the inventory's bounds (int() of
# '²' or of 5,000 digits raised ValueError, exit 4), texts are printable and short, versions
# and lists have the inventory's own form. One reply is at most REPLY_MOST characters.
REPLY_MOST = 4 * 1024 * 1024
TEXT_MOST = 256  # a GPU's name, as nvidia-smi prints it (~50 characters)
ARCH_MOST = 64  # architectures one torch build lists (~10)
_DIGITS = re.compile(r"-?[0-9]{1,9}")
# the inventory's bounds (load/schema.py) for what the host numbers
_INDEX = (cast(int, GPU_INDEX["min"]), cast(int, GPU_INDEX["max"]))
_NODE = (NUMA_NODE["min"], NUMA_NODE["max"])


def _number(text: str, what: str, low: int, high: int) -> int:
    """``text`` as an integer from ``low`` to ``high`` (ASCII digits only), else FactsError naming ``what``."""
    word = text.strip()
    if not _DIGITS.fullmatch(word) or not low <= int(word) <= high:
        raise FactsError(f"{what} is {_shown(word)}: not a number from {low} to {high}")
    return int(word)


def _text(text: str, what: str, pattern: str | None = None) -> str:
    """``text`` when it is printable, at most TEXT_MOST characters and (given) matches ``pattern``."""
    word = text.strip()
    bad = bad_char(word)
    if bad is not None or len(word) > TEXT_MOST or (pattern is not None and not re.fullmatch(pattern, word)):
        why = (f"holds {bad[1]}" if bad is not None else f"is longer than {TEXT_MOST} characters"
               if len(word) > TEXT_MOST else "is empty" if not word else "is not of the form the inventory takes")
        raise FactsError(f"{what} {why}: {_shown(word)}; gen writes no such value into the inventory")
    return word


def _shown(text: str) -> str:
    """A host's text for a message: escaped by repr, cut at 80 characters."""
    return repr(text) if len(text) <= 80 else f"{text[:80]!r}... ({len(text)} characters)"


@dataclass(frozen=True)
class LiveGpu:
    """One GPU as nvidia-smi lists it."""

    index: int  # nvidia-smi's own index (PCI bus order of the GPUs the driver sees)
    name: str
    pci_bus_id: str  # as the inventory writes it: upper case, 8-digit domain
    memory_mib: int | None
    compute_cap: str | None


@dataclass(frozen=True)
class LiveFacts:
    """Everything one capture read from a host."""

    gpus: tuple[LiveGpu, ...]
    driver_version: str | None
    cuda_version: str | None
    links: dict[str, dict[str, str]]  # bus id -> bus id -> link, between visible GPUs
    numa_cpus: dict[int, str]  # NUMA node -> CPU list (empty: sysfs lists no node)
    gpu_numa: dict[str, int]  # bus id -> NUMA node (-1: the firmware gives none)
    torch_cuda: str | None
    torch_arch_list: tuple[str, ...] | None  # None: the torch probe failed (see torch_error)
    torch_error: str | None = None

    def gpu(self, bus: str) -> LiveGpu | None:
        """The visible GPU at this PCI bus id, if any."""
        return next((g for g in self.gpus if g.pci_bus_id == bus), None)

    def numa_node(self, bus: str) -> int | None:
        """The GPU's NUMA node; on a host with one node a firmware's -1 means that node; None if unknown."""
        node = self.gpu_numa.get(bus)
        if node is not None and node < 0 and len(self.numa_cpus) == 1:
            return next(iter(self.numa_cpus))
        return node if node is not None and node >= 0 else None


def normalize_bus(text: str) -> str:
    """A PCI bus id as the inventory writes it: ``00000000:01:00.0`` (upper case, 8-digit domain)."""
    m = _PCI.fullmatch(text.strip())
    if not m:
        raise FactsError(f"not a PCI bus id: {text.strip()!r}")
    domain, bus, dev, fn = m.groups()
    return f"{int(domain, 16):08X}:{bus.upper()}:{dev.upper()}.{fn}"


def sysfs_bus(bus: str) -> str:
    """The sysfs name of a PCI device: ``0000:01:00.0`` (lower case, 4-digit domain)."""
    domain, rest = bus.split(":", 1)
    return f"{int(domain, 16):04x}:{rest.lower()}"


def _unknown(value: str) -> bool:
    return value.strip() in ("", "[N/A]", "N/A", "[Not Supported]")


def parse_query(text: str) -> tuple[tuple[LiveGpu, ...], str | None]:
    """The GPUs of the ``--query-gpu`` answer (csv, noheader, nounits) and the driver version."""
    gpus: list[LiveGpu] = []
    driver: str | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < len(QUERY_FIELDS):
            raise FactsError(f"nvidia-smi --query-gpu printed {line.strip()!r}: expected "
                             f"{len(QUERY_FIELDS)} fields ({', '.join(QUERY_FIELDS)})")
        index, bus, memory, cap, version = parts[0], *parts[-4:]
        name = ", ".join(parts[1:-4])  # a name never holds a comma, but never split one
        shown = _shown(line.strip())
        if not _DIGITS.fullmatch(index) or index.startswith("-"):
            raise FactsError(f"nvidia-smi --query-gpu printed {shown}: the index is not a number")
        memory = memory.removesuffix(" MiB").strip()
        if not _unknown(memory) and (not _DIGITS.fullmatch(memory) or memory.startswith("-")):
            raise FactsError(f"nvidia-smi --query-gpu printed {shown}: memory.total is not MiB")
        if not _unknown(cap) and not _CAP.fullmatch(cap):
            raise FactsError(f"nvidia-smi --query-gpu printed {shown}: compute_cap is not like 12.0")
        gpu = LiveGpu(_number(index, "the index of a GPU nvidia-smi lists", *_INDEX),
                      _text(name, f"the name of GPU {index}", r".+"), normalize_bus(bus),
                      None if _unknown(memory) else _number(memory, f"the memory of GPU {index} (MiB)", 1, 10_000_000),
                      None if _unknown(cap) else cap)
        twin = next((g for g in gpus if g.index == gpu.index or g.pci_bus_id == gpu.pci_bus_id), None)
        if twin is not None:
            raise FactsError(f"nvidia-smi --query-gpu lists GPU {gpu.index} at {gpu.pci_bus_id} and GPU {twin.index} "
                             f"at {twin.pci_bus_id}: one index or bus id twice")
        gpus.append(gpu)
        if driver is None and not _unknown(version):
            driver = _text(version, "the driver version nvidia-smi prints", DRIVER_RE)
    return tuple(sorted(gpus, key=lambda g: g.index)), driver


def parse_cuda_version(text: str) -> str | None:
    """The ``CUDA Version`` of nvidia-smi's summary header (None: not printed, e.g. "Not Found")."""
    m = _CUDA.search(text)
    return m.group(1) if m else None


def parse_topology(text: str) -> dict[int, dict[int, str]]:
    """``nvidia-smi topo -m``: nvidia-smi index -> nvidia-smi index -> link, GPUs only.

    Tabs or runs of blanks both separate the cells (issues often paste the output with
    blanks); the affinity columns after the devices are not read.
    """
    lines = [_ANSI.sub("", ln) for ln in text.splitlines()]
    header_at = next((i for i, ln in enumerate(lines) if re.match(r"^\s+GPU0\b", ln)), None)
    if header_at is None:
        raise FactsError("nvidia-smi topo -m printed no GPU0 column")
    devices = lines[header_at].split("CPU Affinity")[0].split()
    matrix: dict[int, dict[int, str]] = {}
    for line in lines[header_at + 1:]:
        words = line.split()
        if not words or words[0] == "Legend:":
            break
        if not re.fullmatch(r"GPU[0-9]+", words[0]):
            continue  # a NIC row
        cells = words[1:1 + len(devices)]
        if len(cells) < len(devices):
            raise FactsError(f"nvidia-smi topo -m row {words[0]} has {len(cells)} of {len(devices)} cells")
        row: dict[int, str] = {}
        for column, cell in zip(devices, cells, strict=True):
            if re.fullmatch(r"GPU[0-9]+", column):
                if not _LINK.fullmatch(cell):
                    raise FactsError(f"nvidia-smi topo -m: {_shown(words[0])} to {_shown(column)} is {_shown(cell)}, "
                                     "not a link of its legend")
                row[_topology_index(column)] = cell
        matrix[_topology_index(words[0])] = row
    return matrix


def _topology_index(word: str) -> int:
    return _number(word[3:], f"nvidia-smi topo -m's {_shown(word[:16])}", *_INDEX)


def parse_sysfs(text: str) -> tuple[dict[int, str], dict[str, int]]:
    """``grep -H .`` of the node cpulists and GPU numa_node files: (node -> CPUs, sysfs bus -> node)."""
    nodes: dict[int, str] = {}
    devices: dict[str, int] = {}
    for line in text.splitlines():
        path, sep, value = line.rpartition(":")
        if not sep:
            continue
        node = re.fullmatch(r"/sys/devices/system/node/node([0-9]+)/cpulist", path)
        device = re.fullmatch(r"/sys/bus/pci/devices/([0-9a-f:.]+)/numa_node", path)
        if node and value.strip():
            number = _number(node.group(1), "a NUMA node sysfs lists", *_NODE)
            nodes[number] = _text(value, f"the CPU list sysfs gives NUMA node {number}", CPULIST_RE)
        elif device and re.fullmatch(r"-?[0-9]+", value.strip()):
            devices[device.group(1)] = _number(value, f"the NUMA node sysfs gives GPU {device.group(1)}", -1, _NODE[1])
    return dict(sorted(nodes.items())), devices


def parse_torch(rc: int, out: str, err: str) -> tuple[str | None, tuple[str, ...] | None, str | None]:
    """(torch.version.cuda, arch list, error) from the torch probe's answer."""
    if rc != 0:
        tail = (err.strip().splitlines() or [f"exit {rc}"])[-1]
        return None, None, tail
    try:
        data = json_text.loads(out.strip().splitlines()[-1])  # any nesting is no crash
        cuda, arch = data["cuda"], data["arch"]
        if (cuda is not None and not (isinstance(cuda, str) and re.fullmatch(CUDA_VERSION_RE, cuda) and len(cuda) < 16)) \
                or not isinstance(arch, list) or len(arch) > ARCH_MOST \
                or not all(isinstance(a, str) and re.fullmatch(ARCH_RE, a) for a in arch):
            raise ValueError(out)  # only what the inventory's facts can hold is a fact
    except (ValueError, KeyError, IndexError, TypeError):
        return None, None, f"the torch probe printed {_shown(out.strip())}"
    return cuda, tuple(arch), None


def capture(run: Runner, python: str | None, extra_buses: Iterable[str] = ()) -> LiveFacts:
    """Read the facts of one host through ``run``; ``extra_buses``: GPUs given to VMs (NUMA only).

    ``python`` None leaves the torch probe out (importing torch takes seconds on a real host).
    """
    run = _bounded(run)
    rc, out, err = run(QUERY)
    if rc != 0:
        raise FactsError(f"`{QUERY}` failed (exit {rc}): {(err or out).strip()[:300]}")
    gpus, driver = parse_query(out)
    links: dict[str, dict[str, str]] = {}
    if gpus:
        rc, out, err = run(TOPOLOGY)
        if rc != 0:
            raise FactsError(f"`{TOPOLOGY}` failed (exit {rc}): {(err or out).strip()[:300]}")
        bus_of = {g.index: g.pci_bus_id for g in gpus}
        for a, row in parse_topology(out).items():
            if a in bus_of:
                links[bus_of[a]] = {bus_of[b]: cell for b, cell in row.items() if b in bus_of}
        if any(len(links.get(bus, {})) != len(bus_of) for bus in bus_of.values()):
            raise FactsError(f"`{TOPOLOGY}` does not join each of the {len(bus_of)} GPU(s) "
                             "`--query-gpu` lists to every other")
    rc, out, _ = run(SUMMARY)
    cuda = parse_cuda_version(out) if rc == 0 else None
    buses = sorted({g.pci_bus_id for g in gpus} | set(extra_buses))
    files = [NODE_GLOB] + [shlex.quote(f"/sys/bus/pci/devices/{sysfs_bus(b)}/numa_node") for b in buses]
    _, out, _ = run("grep -sH . " + " ".join(files))  # grep exits 2 when one file is missing
    nodes, devices = parse_sysfs(out)
    gpu_numa = {b: devices[sysfs_bus(b)] for b in buses if sysfs_bus(b) in devices}
    torch_cuda, arch, torch_error = (parse_torch(*run(f"{shlex.quote(python)} -c {shlex.quote(TORCH_PROBE)}"))
                                     if python is not None else (None, None, "not asked"))
    return LiveFacts(gpus, driver, cuda, links, nodes, gpu_numa, torch_cuda, arch, torch_error)


def _bounded(run: Runner) -> Runner:
    """``run`` whose replies are at most REPLY_MOST characters each (FactsError past that)."""

    def bounded(command: str) -> tuple[int, str, str]:
        rc, out, err = run(command)
        if len(out) + len(err) > REPLY_MOST:
            raise FactsError(f"`{command[:60]}` printed {len(out) + len(err)} characters; gen reads at most "
                             f"{REPLY_MOST} of a host's reply")
        return rc, out, err

    return bounded


def testinfra_runner(host: object) -> Runner:
    """``run`` for :func:`capture` over a testinfra host (one ssh connection for every command)."""

    def run(command: str) -> tuple[int, str, str]:
        out = host.run(command)  # type: ignore[attr-defined]
        return out.rc, out.stdout, out.stderr

    return run
