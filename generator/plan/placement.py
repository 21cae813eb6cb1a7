"""Place every service of a host on GPUs, NUMA nodes and ports, and check it fits.

Rules (each a diagnostic with a stable code): never a GPU that is not in the inventory,
is passed through to a VM, or belongs to another service; a tensor-parallel group stays
inside one NUMA node whenever a node has enough free GPUs (crossing then needs
``allow_cross_numa``); with the host's link matrix (``facts.topology``) a group gets the
best-joined GPUs, and one that crosses the CPU interconnect while better-joined free GPUs
exist is warned about (P040); one port per service; no path under a retired volume; weights
under the host's model root. Whether the weights and a KV cache fit is
:mod:`generator.plan.memory_check`'s, after the flags are built (SGLang's own sizing).

CPU and memory binding: a service whose GPUs share one NUMA node runs with that node's
CPUs and memory (systemd's CPUAffinity=/NUMAPolicy=bind, in the unit). When the service
passes SGLang's own ``--numa-node`` (one node per GPU; SGLang binds each GPU's scheduler
process itself), gen leaves the binding to SGLang and emits none: a unit-wide mask would
only narrow SGLang's per-process choice, and 0.5.23 fails to bind a process whose allowed
CPUs miss the requested node. Each ``--numa-node`` entry must name its GPU's node (P013).
SGLang 0.5.23's automatic binding (SGLANG_AUTO_NUMA_BIND) picks each GPU's own node, a
subset of the unit's mask, so the two agree.

A multi-node model (``multinode`` in its manifest) takes ``tp x pp / nnodes`` GPUs on each
of its hosts (``Model.gpus_per_node``) and holds that share of the weights; the node's
rank and rendezvous address are set afterwards by :mod:`generator.plan.cluster`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from generator.errors import Diagnostics, Position
from generator.load.resolve import Gpu, Host, Model, ServiceSpec, Topology
from generator.plan.topology import CROSS_SOCKET, best_group, link_rank, worst_link


@dataclass(frozen=True)
class ClusterNode:
    """This service's part in a multi-node deployment (set by :mod:`generator.plan.cluster`)."""

    nnodes: int
    rank: int
    dist_init_addr: str  # rank 0's network.address:multinode.port ([v6]:port)
    interface: str  # this host's network.interface: NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME
    peers: tuple[str, ...]  # the inventories this node's render read (rank 0's address)


@dataclass(frozen=True)
class Placement:
    """Where one service runs: its GPUs (PCI bus order) and the NUMA nodes they sit on."""

    service: ServiceSpec
    model: Model
    gpus: tuple[Gpu, ...]
    numa_nodes: tuple[int, ...]
    cpus: str | None  # the NUMA CPU list when the GPUs share one node
    cluster: ClusterNode | None = None  # None: a single-node service

    @property
    def cuda_visible_devices(self) -> str:
        """``CUDA_VISIBLE_DEVICES`` value; valid with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``."""
        return ",".join(str(g.index) for g in self.gpus)


def _pci_key(gpu: Gpu) -> tuple[int, ...]:
    domain, bus, rest = gpu.pci_bus_id.split(":")
    dev, fn = rest.split(".")
    return (int(domain, 16), int(bus, 16), int(dev, 16), int(fn, 16))


def pci_order(gpus: Iterable[Gpu]) -> tuple[Gpu, ...]:
    """GPUs sorted the way CUDA numbers them under ``CUDA_DEVICE_ORDER=PCI_BUS_ID``."""
    return tuple(sorted(gpus, key=_pci_key))


def check_pci_numbering(host: Host, diags: Diagnostics) -> None:
    """With PCI_BUS_ID order, CUDA index i is the i-th GPU by bus id: the inventory must agree."""
    for i, gpu in enumerate(pci_order(host.gpus)):
        if gpu.index != i:
            pos = next(k for k, g in enumerate(host.gpus) if g is gpu)
            diags.error(host.pos("gpus", pos, "index"), "P012",
                        f"GPU with PCI bus id {gpu.pci_bus_id} is CUDA device {i} in PCI bus order, "
                        f"but the inventory calls it {gpu.index}")
            return


def _choose(free: list[Gpu], count: int, topo: Topology | None) -> tuple[Gpu, ...] | None:
    """Best fit inside one NUMA node (the fullest node that still fits), else across nodes.

    With a link matrix, the best-joined GPUs of that node (or of all free GPUs, when the
    group must cross nodes) rather than the lowest indexes (:mod:`generator.plan.topology`).
    """
    by_node: dict[int, list[Gpu]] = {}
    for gpu in free:
        by_node.setdefault(gpu.numa_node, []).append(gpu)
    fitting = [(len(g), node) for node, g in by_node.items() if len(g) >= count]
    if fitting:
        _, node = min(fitting)
        if topo is not None:
            return best_group(by_node[node], count, topo)
        return tuple(sorted(by_node[node], key=lambda g: g.index)[:count])
    if len(free) < count:
        return None
    if topo is not None:
        return best_group(free, count, topo)
    # No single node can hold the group: take whole nodes first, most free GPUs first.
    order = sorted(by_node.items(), key=lambda item: (-len(item[1]), item[0]))
    picked = [g for _, gs in order for g in sorted(gs, key=lambda g: g.index)][:count]
    return tuple(picked)


MAX_SEARCH_SERVICES = 12  # beyond this many automatic services, no exhaustive search


def plan_nodes(free_by_node: dict[int, int], needs: Sequence[int]) -> list[int | None]:
    """A NUMA node for each need (None: must cross nodes), keeping as many inside one node as possible.

    An exhaustive search (with pruning), so a greedy order never strands a group that
    another order could have kept local. Among the best plans the first found wins, and
    nodes are tried fullest-that-fits first: the same choice best fit makes.
    """
    best: list[int | None] = [None] * len(needs)
    best_score = -1
    caps = dict(free_by_node)
    chosen: list[int | None] = []

    def search(i: int, score: int) -> None:
        nonlocal best, best_score
        if score + (len(needs) - i) <= best_score:
            return  # even keeping every remaining group local cannot beat the best plan
        if i == len(needs):
            best, best_score = list(chosen), score
            return
        for node in sorted((n for n, c in caps.items() if c >= needs[i]), key=lambda n: (caps[n], n)):
            caps[node] -= needs[i]
            chosen.append(node)
            search(i + 1, score + 1)
            chosen.pop()
            caps[node] += needs[i]
        chosen.append(None)
        search(i + 1, score)
        chosen.pop()

    if len(needs) <= MAX_SEARCH_SERVICES:
        search(0, 0)
    return best


def _reserve_local(free: list[Gpu], needs: list[tuple[str, int]], topo: Topology | None) -> dict[str, tuple[Gpu, ...]]:
    """GPUs for each automatic service that the plan keeps inside one node (lowest indexes first,
    or with a link matrix the best-joined of the node's free GPUs, in service order)."""
    by_node: dict[int, list[Gpu]] = {}
    for gpu in sorted(free, key=lambda g: g.index):
        by_node.setdefault(gpu.numa_node, []).append(gpu)
    plan = plan_nodes({n: len(gs) for n, gs in by_node.items()}, [n for _, n in needs])
    out: dict[str, tuple[Gpu, ...]] = {}
    for (name, count), node in zip(needs, plan, strict=True):
        if node is not None:
            group = best_group(by_node[node], count, topo) if topo is not None else None
            out[name] = group or tuple(by_node[node][:count])
            by_node[node] = [g for g in by_node[node] if g not in out[name]]
    return out


def _check_links(host: Host, svc: ServiceSpec, gpus: Sequence[Gpu], free: Sequence[Gpu], pos: Position,
                 diags: Diagnostics) -> None:
    """P040: the group crosses the CPU interconnect (SYS) while free GPUs are better joined."""
    topo = host.facts.topology
    if topo is None or len(gpus) < 2 or any(topo.link(a.index, b.index) is None for a in gpus for b in gpus):
        return  # no matrix, or one that does not cover these GPUs: nothing known to compare
    if worst_link(gpus, topo) != CROSS_SOCKET:
        return
    better = best_group(free, len(gpus), topo)
    best = worst_link(better, topo) if better else None
    if better is None or best is None or link_rank(best) >= link_rank(CROSS_SOCKET):
        return
    names = ", ".join(str(g.index) for g in better)
    diags.warning(pos, "P040", f"the GPUs of service '{svc.name}' ({', '.join(str(g.index) for g in gpus)}) "
                  f"cross the CPU interconnect (SYS in the link matrix), but free GPUs {names} are joined by "
                  f"{best} at worst", f"place it on GPUs {names}" + ("" if svc.gpus is None else
                                                                     f": gpus: [{names}]"))


def _under(path: str, root: str) -> bool:
    # Free-form strings (args, env) are not normalized by the schema: '..' must not walk out.
    if path.startswith("/"):
        path = "/" + posixpath.normpath(path).lstrip("/")
    return root == "/" or path == root or path.startswith(root + "/")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _check_paths(host: Host, svc: ServiceSpec, model: Model, diags: Diagnostics) -> None:
    """Retired volumes are never read; checkpoints live under the model root."""
    checkpoints: list[tuple[str, Any]] = [(model.weights.path, model.pos("weights", "path"))]
    if model.speculative and model.speculative.draft_model_path:
        checkpoints.append((model.speculative.draft_model_path,
                            model.pos("speculative", "draft_model_path")))
    for text, pos in checkpoints:
        retired = _retired(host, text)
        if retired is not None:
            _on_retired(diags, pos, text, retired, host, svc)
        elif not _under(text, host.model_root):
            diags.error(pos, "P009", f"'{text}' is not under the model root {host.model_root} "
                        f"of host '{host.name}' (service '{svc.name}')")
    # Any other string an operator wrote (free-form flags, environment) may name a path too;
    # its position is looked up only for a finding (most strings are none).
    for owner, key, items in ((model, "args", model.args), (svc, "args", svc.args),
                              (model, "env", model.env), (svc, "env", svc.env)):
        for name, value in items:
            for text in _strings(value):
                retired = _retired(host, text)
                if retired is not None:
                    _on_retired(diags, owner.pos(key, name), text, retired, host, svc)


def _retired(host: Host, text: str) -> str | None:
    """The retired volume of ``host`` that ``text`` lies on, if any."""
    return next((r for r in host.retired if _under(text, r)), None)


def _on_retired(diags: Diagnostics, pos: Any, text: str, retired: str, host: Host, svc: ServiceSpec) -> None:
    diags.error(pos, "P008", f"'{text}' is on the retired volume {retired} of host "
                f"'{host.name}' (service '{svc.name}')", f"move it under {host.model_root}")


@dataclass
class _Ledger:
    """Which GPUs of a host are spoken for while its services are placed one by one."""

    host: Host
    vm_of: dict[int, str]  # GPU index -> the VM it is passed through to
    owner: dict[int, str] = field(default_factory=dict)  # GPU index -> the service using it
    reserved: dict[str, tuple[Gpu, ...]] | None = None  # the NUMA plan of automatic services
    listed: dict[int, str] = field(default_factory=dict)  # GPU index -> the service whose list names it

    def free(self) -> list[Gpu]:
        """GPUs neither passed through to a VM nor used by a service placed so far."""
        return [g for g in self.host.gpus if g.index not in self.vm_of and g.index not in self.owner]

    def open_to(self, svc: ServiceSpec) -> list[Gpu]:
        """Free GPUs no other service claims (by its list, or the NUMA plan): what ``svc`` could have."""
        planned = {g.index for name, gs in (self.reserved or {}).items() if name != svc.name for g in gs}
        return [g for g in self.free() if self.listed.get(g.index, svc.name) == svc.name and g.index not in planned]


def free_port(host: Host, near: int, taken: Iterable[int] = ()) -> int | None:
    """The port to suggest for a collision at ``near``: the first one above it (else below it,
    down to 1024) that no service of ``host`` listens on and that is not in ``taken``."""
    used = {s.port for s in host.services} | set(taken)
    above = range(near + 1, 65536)
    below = range(near - 1, 1023, -1)
    return next((p for r in (above, below) for p in r if p not in used), None)


def port_hint(host: Host, near: int, taken: Iterable[int] = ()) -> str | None:
    """``write `port: N``` for a port collision at ``near`` (:func:`free_port`), None when no port is free."""
    port = free_port(host, near, taken)
    return None if port is None else f"write `port: {port}`: no service of host '{host.name}' uses it"


def _check_ports(host: Host, models: dict[str, Model], diags: Diagnostics) -> None:
    """One port per service (P007), each collision with a free port to take instead."""
    # The multi-node init ports of the host's models are taken too (P026 reports a service on one).
    init_ports = {m.multinode.port for s in host.services if (m := models.get(s.model)) and m.multinode}
    ports: dict[int, ServiceSpec] = {}
    for svc in host.services:
        if svc.port in ports and ports[svc.port].name != svc.name:
            diags.error(svc.pos("port"), "P007", f"port {svc.port} is already used by service "
                        f"'{ports[svc.port].name}' on host '{host.name}'", port_hint(host, svc.port, init_ports))
        ports.setdefault(svc.port, svc)


def _check_gpu_count(svc: ServiceSpec, model: Model, diags: Diagnostics) -> None:
    """An explicit GPU list holds exactly the GPUs one node of the model needs (P004)."""
    assert svc.gpus is not None
    if len(svc.gpus) != model.gpus_per_node:
        diags.error(svc.pos("gpus"), "P004", f"service '{svc.name}' lists {len(svc.gpus)} GPU(s), "
                    f"but model '{model.name}' needs {model.gpus_per_node} "
                    f"(tp {model.tp} x pp {model.pp}"
                    + ("" if model.dp_attention or model.dp == 1 else f" x dp {model.dp}")
                    + (f" over {model.nnodes} nodes" if model.nnodes > 1 else "") + ")")


def _gpus_hint(ledger: _Ledger, svc: ServiceSpec, model: Model) -> str:
    """The fix for a GPU a service cannot have: a whole list it can (free, listed by no other
    service; best fit, as automatic placement picks), else what is free and what letting gen
    place it needs."""
    host = ledger.host
    claimed = {i for s in host.services if s.gpus is not None and s.name != svc.name for i in s.gpus}
    open_gpus = [g for g in ledger.free() if g.index not in claimed]
    need = model.gpus_per_node
    pick = _choose(open_gpus, need, host.facts.topology)
    if pick is not None:
        nodes = sorted({g.numa_node for g in pick})
        where = f"NUMA node {nodes[0]}" if len(nodes) == 1 else f"NUMA nodes {', '.join(map(str, nodes))}"
        return (f"write `gpus: [{', '.join(str(g.index) for g in pick)}]`: free on host '{host.name}' "
                f"({where})")
    free = ", ".join(str(g.index) for g in open_gpus) or "none"
    return (f"host '{host.name}' has {len(open_gpus)} GPU(s) free ({free}) and model '{model.name}' needs "
            f"{need}: free GPUs from another service or a VM first")


def _take_explicit(ledger: _Ledger, svc: ServiceSpec, model: Model, diags: Diagnostics) -> tuple[Gpu, ...]:
    """The GPUs a service lists, each checked (P001-P004), and P005 when a node would do."""
    assert svc.gpus is not None
    host, vm_of, owner = ledger.host, ledger.vm_of, ledger.owner
    free = ledger.free()
    chosen: list[Gpu] = []
    for i, index in enumerate(svc.gpus):
        gpu = host.gpu(index)
        if gpu is None:
            known = ", ".join(str(g.index) for g in host.gpus)
            diags.error(svc.pos("gpus", i), "P001", f"GPU {index} is not in the inventory of host "
                        f"'{host.name}' (GPUs: {known})", _gpus_hint(ledger, svc, model))
        elif index in vm_of:
            diags.error(svc.pos("gpus", i), "P002", f"GPU {index} is passed through to VM '{vm_of[index]}' "
                        f"and cannot serve '{svc.name}'", _gpus_hint(ledger, svc, model))
        elif index in owner:
            diags.error(svc.pos("gpus", i), "P003", f"GPU {index} is already used by service '{owner[index]}'",
                        _gpus_hint(ledger, svc, model))
        elif gpu in chosen:
            diags.error(svc.pos("gpus", i), "P003", f"GPU {index} is listed twice", _gpus_hint(ledger, svc, model))
        else:
            chosen.append(gpu)
    _check_gpu_count(svc, model, diags)
    if len(chosen) == len(svc.gpus):
        _check_links(host, svc, chosen, ledger.open_to(svc), svc.pos("gpus"), diags)
    nodes = sorted({g.numa_node for g in chosen})
    if len(nodes) > 1 and not svc.allow_cross_numa:
        counts: dict[int, int] = {}
        for g in free:
            counts[g.numa_node] = counts.get(g.numa_node, 0) + 1
        if any(c >= model.gpus_per_node for c in counts.values()):
            diags.error(svc.pos("gpus"), "P005", f"GPUs {', '.join(str(g.index) for g in chosen)} "
                        f"span NUMA nodes {', '.join(map(str, nodes))}, but one node has "
                        f"{model.gpus_per_node} free GPUs",
                        "pick GPUs of one node, or set allow_cross_numa: true")
    return tuple(chosen)


def _take_automatic(ledger: _Ledger, svc: ServiceSpec, model: Model, automatic: Sequence[ServiceSpec],
                    models: dict[str, Model], diags: Diagnostics) -> tuple[Gpu, ...] | None:
    """GPUs for a service without a list: the NUMA plan's, else best fit; None when too few (P006)."""
    free = ledger.free()
    topo = ledger.host.facts.topology
    if ledger.reserved is None:  # first automatic service: plan all of them at once
        ledger.reserved = _reserve_local(free, [(s.name, models[s.model].gpus_per_node)
                                                for s in automatic if s.model in models], topo)
    taken = {g.index for name, gs in ledger.reserved.items() if name != svc.name for g in gs}
    picked = ledger.reserved.get(svc.name) or _choose([g for g in free if g.index not in taken],
                                                      model.gpus_per_node, topo)
    if picked is None:
        diags.error(svc.pos("model"), "P006", f"service '{svc.name}' needs {model.gpus_per_node} GPU(s), "
                    f"but host '{ledger.host.name}' has only {len(free)} free "
                    f"({len(ledger.vm_of)} passed through to VMs, {len(ledger.owner)} used by other services)")
        return None
    _check_links(ledger.host, svc, picked, ledger.open_to(svc), svc.pos("model"), diags)
    nodes = sorted({g.numa_node for g in picked})
    if len(nodes) > 1 and not svc.allow_cross_numa:
        diags.error(svc.pos("model"), "P005", f"service '{svc.name}' needs {model.gpus_per_node} GPUs; "
                    f"no NUMA node has that many free, so they span nodes "
                    f"{', '.join(map(str, nodes))}", "set allow_cross_numa: true to accept that")
    return picked


def place_host(host: Host, models: dict[str, Model], diags: Diagnostics) -> tuple[Placement, ...]:
    """Place all services of a host; services with explicit GPUs first, then the others."""
    check_pci_numbering(host, diags)
    _check_ports(host, models, diags)
    ledger = _Ledger(host, dict(host.vm_gpus))
    cpus_of = dict(host.numa)
    placed: dict[str, Placement] = {}
    explicit = [s for s in host.services if s.gpus is not None]
    automatic = [s for s in host.services if s.gpus is None]
    for svc in reversed(explicit):  # the first service listing a GPU keeps it (P003 for the others)
        ledger.listed.update({index: svc.name for index in svc.gpus or ()})
    for svc in explicit + automatic:
        model = models.get(svc.model)
        if model is None:
            continue  # reported by resolve (R002)
        _check_paths(host, svc, model, diags)
        if svc.gpus is not None:
            gpus = _take_explicit(ledger, svc, model, diags)
        else:
            picked = _take_automatic(ledger, svc, model, automatic, models, diags)
            if picked is None:
                continue
            gpus = picked
        for g in gpus:
            ledger.owner[g.index] = svc.name
        nodes = sorted({g.numa_node for g in gpus})
        placement = Placement(service=svc, model=model, gpus=pci_order(gpus),
                              numa_nodes=tuple(nodes),
                              cpus=cpus_of.get(nodes[0]) if len(nodes) == 1 else None)
        placed[svc.name] = placement
    # Inventory order, not placement order: output must not depend on which were explicit.
    return tuple(placed[s.name] for s in host.services if s.name in placed)


def defer_numa_to_sglang(placement: Placement, numa_nodes: Sequence[int] | None, pos: Position,
                         diags: Diagnostics) -> Placement:
    """The placement without gen's CPU/memory binding when SGLang's ``--numa-node`` is given.

    ``numa_nodes`` is the flag's value (entry i for CUDA device i of the service, i.e. the
    i-th GPU in PCI order); None when the flag is not written (gen binds as usual).
    """
    if numa_nodes is None:
        return placement
    wanted = [g.numa_node for g in placement.gpus]
    if len(numa_nodes) < len(wanted):
        diags.error(pos, "P013", f"--numa-node lists {len(numa_nodes)} node(s) for {len(wanted)} GPU(s) "
                    f"of service '{placement.service.name}'; SGLang indexes it by GPU",
                    f"write {' '.join(map(str, wanted))}")
    elif list(numa_nodes[:len(wanted)]) != wanted:
        diags.error(pos, "P013", f"--numa-node {' '.join(map(str, numa_nodes))} does not match the NUMA nodes "
                    f"of GPUs {placement.cuda_visible_devices} ({' '.join(map(str, wanted))})",
                    f"write {' '.join(map(str, wanted))}, or drop the flag and let gen bind the unit")
    return replace(placement, cpus=None)
