"""Resolve validated documents into frozen dataclasses: models, hosts and their services.

Everything downstream (placement, flags, rules, render) works on these types only; the
YAML documents stay attached (not compared) so later passes can still point at the
line and column where a value was written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import Diagnostics, Position
from generator.load.exposure import check_listeners
from generator.load.names import ansible_group, host_group_problem, service_collisions
from generator.load.manifests import Document, DocPath
from generator.load.schema import suggest


@dataclass(frozen=True)
class Sourced:
    """Base for resolved objects that remember their document for positions."""

    doc: Document = field(compare=False, repr=False)
    base: DocPath = field(compare=False, repr=False)

    def pos(self, *path: Any, key: bool = False) -> Position:
        """Where ``path`` (relative to this object) was written."""
        return self.doc.pos(self.base + tuple(path), key=key)

    def dropped(self, *path: Any) -> bool:
        """True when the value at ``path`` was invalid and left out (generator/load/taint.py)."""
        return self.base + tuple(path) in self.doc.dropped

    @property
    def tainted(self) -> bool:
        """True when any value of this object's document was invalid and left out: never render it."""
        return bool(self.doc.dropped)


@dataclass(frozen=True)
class Weights:
    """A model checkpoint on disk."""

    path: str
    size_gb: float  # 0.0 when neither the manifest nor a snapshot says it (M010 then)
    format: str = "safetensors"
    shards: int | None = None
    params_b: float | None = None
    active_params_b: float | None = None
    quantization: str | None = None
    # Where size_gb, shards and params_b come from: "manifest" (typed by hand) or "snapshot"
    # (catalogs/models/<model>.json, generator/checkpoint/attach.py).
    source: str = "manifest"


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding settings, in SGLang's terms."""

    algorithm: str
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model_path: str | None = None


@dataclass(frozen=True)
class Multinode:
    """One model served by several hosts: their names in node-rank order, and the init port."""

    hosts: tuple[str, ...]
    port: int


@dataclass(frozen=True)
class Model(Sourced):
    """One model deployment manifest (models/<name>.yaml)."""

    name: str = ""
    description: str = ""
    weights: Weights = Weights("", 0.0)
    served_model_name: str | None = None
    dtype: str | None = None
    trust_remote_code: bool = False
    context_length: int | None = None
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int | None = None
    dp_attention: bool = False
    speculative: Speculative | None = None
    reasoning_parser: str | None = None
    tool_call_parser: str | None = None
    mem_fraction_static: float | None = None
    args: tuple[tuple[str, Any], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    multinode: Multinode | None = None
    rollout: tuple[tuple[str, Any], ...] = ()  # `rollout:` overrides (generator/load/rollout.py)
    # The model's checkpoint snapshot (generator.checkpoint.snapshot.ModelSnapshot), attached
    # by generator/checkpoint/attach.py; load never reads it. Read it through
    # generator.checkpoint.attach.snapshot_of, which checks its type.
    snapshot: Any = field(default=None, compare=False, repr=False)

    @property
    def gpu_count(self) -> int:
        """GPUs one replica needs: tp x pp, times dp unless DP attention shares the TP group."""
        return self.tp * self.pp * (1 if self.dp_attention else self.dp)

    @property
    def nnodes(self) -> int:
        """How many hosts one replica spans (1 unless ``multinode`` lists hosts)."""
        return len(self.multinode.hosts) if self.multinode else 1

    @property
    def gpus_per_node(self) -> int:
        """GPUs each node gives; SGLang splits tp x pp evenly over the nodes (rule X012)."""
        return max(1, self.gpu_count // self.nnodes)


# memory_gb is a data-sheet figure and memory_mib nvidia-smi's memory.total: the card's memory
# less what the driver and ECC reserve (97887 MiB for a "96 GB" RTX PRO 6000, 143771 for a
# "141 GB" H200, 46068 for a "48 GB" L40S with ECC on: 0.4-6.3% below the GB figure read as
# GiB), and a decimal-GB reading of memory.total lies 7.4% above it. Within 10% of the MiB
# figure both readings agree; a GPU of another size (80 GB typed for an H200, 96 for a 32 GB
# card) is far outside.
MEMORY_AGREEMENT = 0.10


@dataclass(frozen=True)
class Gpu:
    """One GPU of a host inventory."""

    index: int
    pci_bus_id: str
    memory_gb: float  # as written; else memory_mib / 1024 (GiB)
    numa_node: int
    model: str = ""
    memory_mib: int | None = None  # memory.total as nvidia-smi prints it (None: not given)
    compute_cap: str | None = None  # "12.0", as nvidia-smi prints it (None: not given)

    @property
    def capability(self) -> tuple[int, int] | None:
        """The compute capability as (major, minor), e.g. (12, 0); None when not given."""
        if self.compute_cap is None:
            return None
        major, minor = self.compute_cap.split(".")
        return int(major), int(minor)

    @property
    def memory_total_mib(self) -> float:
        """The GPU's memory in MiB: memory_mib when given, else memory_gb read as GiB."""
        return float(self.memory_mib) if self.memory_mib is not None else self.memory_gb * 1024


@dataclass(frozen=True)
class Topology:
    """The GPU link matrix of ``nvidia-smi topo -m``: ``links[i][j]`` joins ``gpus[i]`` and ``gpus[j]``."""

    gpus: tuple[int, ...]  # inventory indexes, in the matrix's order
    links: tuple[tuple[str, ...], ...]

    def link(self, a: int, b: int) -> str | None:
        """The link between GPUs ``a`` and ``b`` (inventory indexes); None when either is not in the matrix."""
        if a not in self.gpus or b not in self.gpus:
            return None
        i, j = self.gpus.index(a), self.gpus.index(b)
        row = self.links[i] if i < len(self.links) else ()
        return row[j] if j < len(row) else None


@dataclass(frozen=True)
class HostFacts:
    """The host's ``facts:`` as `gen host snapshot` captured them; None where not known."""

    driver_version: str | None = None
    cuda_version: str | None = None  # the newest CUDA the driver supports (nvidia-smi's header)
    torch_cuda: str | None = None  # torch.version.cuda of the host's SGLang Python
    torch_known: bool = False  # torch_cuda written (then None means a torch without CUDA)
    torch_arch_list: tuple[str, ...] | None = None  # torch.cuda.get_arch_list()
    topology: Topology | None = None


@dataclass(frozen=True)
class SglangInstall:
    """The SGLang a host runs: its pin (catalog name), interpreter and source checkout."""

    pin: str
    python: str
    source_dir: str | None = None
    commit: str | None = None
    user: str = "sglang"


@dataclass(frozen=True)
class Network:
    """How other nodes reach a host: the address of its cluster NIC and that NIC's name."""

    address: str
    interface: str


@dataclass(frozen=True)
class ServiceSpec(Sourced):
    """A service as the inventory declares it (before placement)."""

    name: str = ""
    model: str = ""
    port: int = 0
    listen: str = "127.0.0.1"
    gpus: tuple[int, ...] | None = None
    allow_cross_numa: bool = False
    enabled: bool = True
    timeout_start_min: int | None = None
    secret_env: bool = False  # the unit reads /etc/sglang/secrets/<name>.env (not rendered)
    secret_args: tuple[str, ...] = ()  # flags SGLang reads from /etc/credstore/sglang-<name>.yaml
    args: tuple[tuple[str, Any], ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    @property
    def unit(self) -> str:
        """The systemd unit name, e.g. ``sglang-qwen.service``."""
        return f"sglang-{self.name}.service"


SSH_DEFAULT_USER = "root"  # the one place these defaults live (ansible, live, snapshot)
SSH_DEFAULT_PORT = 22


@dataclass(frozen=True)
class Host(Sourced):
    """One host inventory (hosts/<name>.yaml)."""

    name: str = ""
    description: str = ""
    address: str = ""
    ssh_user: str = SSH_DEFAULT_USER
    ssh_port: int = SSH_DEFAULT_PORT
    ssh_written: tuple[str, ...] = ()  # which of "user", "port" the inventory writes
    shared_with: tuple[str, ...] = ()  # ssh.shared_with: other inventories of the same machine
    gpus: tuple[Gpu, ...] = ()
    numa: tuple[tuple[int, str], ...] = ()  # (node, cpu list)
    vm_gpus: tuple[tuple[int, str], ...] = ()  # (gpu index, vm name)
    model_root: str = ""
    retired: tuple[str, ...] = ()
    sglang: SglangInstall = SglangInstall("", "")
    services: tuple[ServiceSpec, ...] = ()
    network: Network | None = None
    facts: HostFacts = HostFacts()

    def ssh_explicit(self) -> tuple[str | None, int | None]:
        """(user, port) as the inventory writes them; None where only the default applies.

        SSH's command line beats its config, so a caller with an ssh config passes only
        these: the defaults would override a config's ``User``/``Port`` for the address.
        """
        return (self.ssh_user if "user" in self.ssh_written else None,
                self.ssh_port if "port" in self.ssh_written else None)

    def gpu(self, index: int) -> Gpu | None:
        """The inventory GPU with this index, if any."""
        return next((g for g in self.gpus if g.index == index), None)


@dataclass(frozen=True)
class Sources:
    """Every model and host of a repository, resolved; keyed by name, in name order."""

    root: Path
    models: dict[str, Model]
    hosts: dict[str, Host]


def _env(items: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
    # Numbers are written the way YAML showed them; floats keep Python's repr (1e-05 stays exact).
    return tuple((k, v if isinstance(v, str) else repr(v)) for k, v in (items or {}).items())


def model_from_doc(doc: Document) -> Model:
    """A validated model document as a Model."""
    d = doc.data
    w = d["weights"]
    par = d.get("parallel") or {}
    spec = d.get("speculative")
    parsers = d.get("parsers") or {}
    return Model(
        doc=doc, base=(),
        name=d["name"], description=d.get("description", ""),
        weights=Weights(
            path=w["path"], size_gb=float(w.get("size_gb", 0.0)),  # absent: from the snapshot, else M010
            shards=w.get("shards"), params_b=w.get("params_b"),
            active_params_b=w.get("active_params_b"), quantization=w.get("quantization"),
        ),
        served_model_name=d.get("served_model_name"), dtype=d.get("dtype"),
        trust_remote_code=bool(d.get("trust_remote_code", False)),
        context_length=d.get("context_length"),
        tp=par.get("tp", 1), pp=par.get("pp", 1), dp=par.get("dp", 1), ep=par.get("ep"),
        dp_attention=bool(par.get("dp_attention", False)),
        speculative=Speculative(
            algorithm=spec["algorithm"], num_steps=spec.get("num_steps"),
            eagle_topk=spec.get("eagle_topk"), num_draft_tokens=spec.get("num_draft_tokens"),
            draft_model_path=spec.get("draft_model_path"),
        ) if spec else None,
        reasoning_parser=parsers.get("reasoning"), tool_call_parser=parsers.get("tool_call"),
        mem_fraction_static=(d.get("memory") or {}).get("mem_fraction_static"),
        args=tuple((d.get("args") or {}).items()), env=_env(d.get("env")),
        multinode=Multinode(tuple(d["multinode"]["hosts"]), d["multinode"]["port"])
        if d.get("multinode") else None,
        rollout=tuple(sorted((d.get("rollout") or {}).items())),
    )


def _gpu(g: dict[str, Any]) -> Gpu:
    mib = g.get("memory_mib")
    # Neither given is R040, reported by check_host_refs; 0 keeps the rest of the checks going.
    gb = float(g["memory_gb"]) if "memory_gb" in g else (mib / 1024 if mib else 0.0)
    return Gpu(g["index"], g["pci_bus_id"].upper().replace("0X", ""), gb, g["numa_node"],
               g.get("model", ""), mib, g.get("compute_cap"))


def _facts(f: dict[str, Any] | None) -> HostFacts:
    if not f:
        return HostFacts()
    topo = f.get("topology")
    arch = f.get("torch_arch_list")
    return HostFacts(
        driver_version=f.get("driver_version"), cuda_version=f.get("cuda_version"),
        torch_cuda=f.get("torch_cuda"), torch_known="torch_cuda" in f,
        torch_arch_list=tuple(arch) if arch is not None else None,
        topology=Topology(tuple(topo["gpus"]), tuple(tuple(row) for row in topo["links"])) if topo else None,
    )


def host_from_doc(doc: Document) -> Host:
    """A validated host document as a Host."""
    d = doc.data
    sg = d["sglang"]
    ssh = d.get("ssh") or {}
    services = tuple(
        ServiceSpec(
            doc=doc, base=("services", i),
            name=s["name"], model=s["model"], port=s["port"],
            listen=s.get("listen", "127.0.0.1"),
            gpus=tuple(s["gpus"]) if "gpus" in s else None,
            allow_cross_numa=bool(s.get("allow_cross_numa", False)),
            enabled=bool(s.get("enabled", True)),
            timeout_start_min=s.get("timeout_start_min"),
            secret_env=bool(s.get("secret_env", False)),
            secret_args=tuple(s.get("secret_args") or ()),
            args=tuple((s.get("args") or {}).items()), env=_env(s.get("env")),
        )
        for i, s in enumerate(d.get("services") or [])
    )
    return Host(
        doc=doc, base=(),
        name=d["name"], description=d.get("description", ""), address=d["address"],
        ssh_user=ssh.get("user") or SSH_DEFAULT_USER, ssh_port=ssh.get("port") or SSH_DEFAULT_PORT,
        ssh_written=tuple(k for k in ("user", "port") if ssh.get(k)),
        shared_with=tuple(ssh.get("shared_with") or ()),
        gpus=tuple(_gpu(g) for g in d["gpus"]),
        numa=tuple((n["node"], n["cpus"]) for n in d["numa"]),
        vm_gpus=tuple((gi, vm["vm"]) for vm in d.get("vm_passthrough") or [] for gi in vm["gpus"]),
        model_root=d["storage"]["model_root"].rstrip("/") or "/",
        retired=tuple(p.rstrip("/") or "/" for p in d["storage"].get("retired") or []),
        sglang=SglangInstall(sg["pin"], sg["python"], sg.get("source_dir"), sg.get("commit"),
                             sg.get("user", "sglang")),
        services=services,
        network=Network(d["network"]["address"], d["network"]["interface"]) if d.get("network") else None,
        facts=_facts(d.get("facts")),
    )


def check_name_matches_file(doc: Document, stem: str, kind: str, diags: Diagnostics) -> None:
    """A document's ``name`` must be its file's stem: references are by file name."""
    name = doc.data.get("name")
    if isinstance(name, str) and name != stem:
        diags.error(doc.pos(("name",)), "R003",
                    f"{kind} name '{name}' does not match its file name '{stem}.yaml'")


def _check_gpu_memory(host: Host, diags: Diagnostics) -> None:
    """Each GPU gives memory_mib or memory_gb (R040); where both, they agree (R041)."""
    for i, gpu in enumerate(host.gpus):
        written = host.doc.data["gpus"][i]
        has_gb, has_mib = "memory_gb" in written, gpu.memory_mib is not None
        if not has_gb and not has_mib:
            diags.error(host.pos("gpus", i), "R040", f"GPU {gpu.index} gives neither memory_mib "
                        "nor memory_gb", "add memory_mib (`gen host snapshot` captures it) or memory_gb")
        elif has_gb and gpu.memory_mib is not None:
            gib = gpu.memory_mib / 1024
            if abs(gpu.memory_gb - gib) > MEMORY_AGREEMENT * gib:
                diags.error(host.pos("gpus", i, "memory_gb"), "R041",
                            f"GPU {gpu.index}: memory_gb {gpu.memory_gb:g} disagrees with memory_mib "
                            f"{gpu.memory_mib} ({gib:.1f} GiB; they agree within "
                            f"{MEMORY_AGREEMENT:.0%})", "drop memory_gb (memory_mib is what nvidia-smi "
                            "measured) or correct the one that is wrong")


def _check_topology(host: Host, diags: Diagnostics) -> None:
    """The link matrix is square over inventory GPUs, each once, with X on its diagonal (R042)."""
    topo = host.facts.topology
    if topo is None:
        return
    known = {g.index for g in host.gpus}
    problem = next((f"GPU {g} is not in the inventory" for g in topo.gpus if g not in known), None)
    if problem is None and len(set(topo.gpus)) != len(topo.gpus):
        problem = "a GPU appears twice in facts.topology.gpus"
    n = len(topo.gpus)
    if problem is None and (len(topo.links) != n or any(len(row) != n for row in topo.links)):
        problem = f"links must be {n} rows of {n} (one per GPU of facts.topology.gpus)"
    if problem is None:
        bad = next((topo.gpus[i] for i in range(n) if topo.links[i][i] != "X"), None)
        problem = None if bad is None else f"GPU {bad}'s own cell is not X"
        off = next(((topo.gpus[i], topo.gpus[j]) for i in range(n) for j in range(n)
                    if i != j and topo.links[i][j] == "X"), None)
        problem = problem or (None if off is None else f"GPUs {off[0]} and {off[1]} are joined by X (itself)")
    if problem is not None:
        diags.error(host.pos("facts", "topology"), "R042", f"facts.topology: {problem}",
                    "capture it again with `gen host snapshot`")


def check_host_refs(host: Host, models: dict[str, Model], broken: set[str], diags: Diagnostics) -> None:
    """Inventory-internal consistency: unique indexes, services, units and model references."""
    seen_idx: dict[int, int] = {}
    seen_pci: dict[str, int] = {}
    for i, gpu in enumerate(host.gpus):
        if gpu.index in seen_idx:
            diags.error(host.pos("gpus", i, "index"), "R004",
                        f"GPU index {gpu.index} appears twice (also gpus[{seen_idx[gpu.index]}])")
        seen_idx.setdefault(gpu.index, i)
        if gpu.pci_bus_id in seen_pci:
            diags.error(host.pos("gpus", i, "pci_bus_id"), "R004",
                        f"PCI bus id {gpu.pci_bus_id} appears twice (also gpus[{seen_pci[gpu.pci_bus_id]}])")
        seen_pci.setdefault(gpu.pci_bus_id, i)
    _check_gpu_memory(host, diags)
    _check_topology(host, diags)
    nodes = {n for n, _ in host.numa}
    for i, gpu in enumerate(host.gpus):
        if gpu.numa_node not in nodes:
            diags.error(host.pos("gpus", i, "numa_node"), "R005",
                        f"GPU {gpu.index} is on NUMA node {gpu.numa_node}, which 'numa' does not list")
    for gi, vm in host.vm_gpus:
        if gi not in seen_idx:
            diags.error(host.pos("vm_passthrough"), "R006",
                        f"VM '{vm}' is given GPU {gi}, which is not in the inventory")
    sg = host.sglang
    if sg.user != "root":
        for key, path in (("python", sg.python), ("source_dir", sg.source_dir)):
            if path and (path.startswith("/root/") or path.startswith("/home/")):
                diags.error(host.pos("sglang", key), "R008",
                            f"the service user '{sg.user}' cannot read {path}: home folders are "
                            "hidden from services (ProtectHome=)",
                            "install SGLang outside /root and /home, or set sglang.user: root")
    check_listeners(host, diags)
    names: dict[str, int] = {}
    for i, svc in enumerate(host.services):
        if svc.name in names:
            diags.error(svc.pos("name"), "R001",
                        f"service '{svc.name}' is defined twice on host '{host.name}' "
                        f"(first at line {host.services[names[svc.name]].pos('name').line})")
        names.setdefault(svc.name, i)  # the unit name is derived from it: one check covers both
        if svc.model not in models and svc.model not in broken:  # a broken one is reported already
            hint = suggest(svc.model, models)
            diags.error(svc.pos("model"), "R002", f"unknown model '{svc.model}' (no models/{svc.model}.yaml)",
                        f"did you mean '{hint}'?" if hint else None)
    # Names derived from these (files, units, inventory keys) must stay distinct (load/names.py).
    diags.items.extend(service_collisions(host.name, [(svc.name, svc.pos("name")) for svc in host.services]))
    clash = host_group_problem(host.name, {ansible_group(m.name) for m in models.values() if m.multinode})
    if clash is not None:
        diags.error(host.pos("name"), "R016", f"host {clash}: every play for that group would take this "
                    "host in too", "rename the host")


def default_timeout_start_min(model: Model) -> int:
    """Minutes systemd waits for a server to become ready.

    Loading streams the weights from disk (budgeted at 0.5 GB/s, a slow network share),
    then warms up and captures CUDA graphs (budgeted at 10 minutes).
    """
    return 10 + math.ceil(model.weights.size_gb / 0.5 / 60)
