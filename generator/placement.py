"""Place every service of a host on GPUs, NUMA nodes and ports, and check it fits.

Rules (each a diagnostic with a stable code): never a GPU that is not in the inventory,
is passed through to a VM, or belongs to another service; a tensor-parallel group stays
inside one NUMA node whenever a node has enough free GPUs (crossing then needs
``allow_cross_numa``); one port per service; no path under a retired volume; weights
under the host's model root; weights plus KV cache fit the GPUs' memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .errors import Diagnostics
from .resolve import Gpu, Host, Model, ServiceSpec

# SGLang picks mem_fraction_static itself when unset; for the fit check we assume the
# common value on large GPUs. The manifest's own value always wins.
DEFAULT_MEM_FRACTION = 0.85
THIN_KV_GB_PER_GPU = 4.0


@dataclass(frozen=True)
class Placement:
    """Where one service runs: its GPUs (PCI bus order) and the NUMA nodes they sit on."""

    service: ServiceSpec
    model: Model
    gpus: tuple[Gpu, ...]
    numa_nodes: tuple[int, ...]
    cpus: str | None  # the NUMA CPU list when the GPUs share one node

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


def _choose(free: list[Gpu], count: int, allow_cross: bool) -> tuple[Gpu, ...] | None:
    """Best fit inside one NUMA node (the fullest node that still fits), else across nodes."""
    by_node: dict[int, list[Gpu]] = {}
    for gpu in free:
        by_node.setdefault(gpu.numa_node, []).append(gpu)
    fitting = [(len(g), node) for node, g in by_node.items() if len(g) >= count]
    if fitting:
        _, node = min(fitting)
        return tuple(sorted(by_node[node], key=lambda g: g.index)[:count])
    if len(free) < count:
        return None
    # No single node can hold the group: take whole nodes first, most free GPUs first.
    order = sorted(by_node.items(), key=lambda item: (-len(item[1]), item[0]))
    picked = [g for _, gs in order for g in sorted(gs, key=lambda g: g.index)][:count]
    return tuple(picked)


def _under(path: str, root: str) -> bool:
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
    # Any other string an operator wrote (free-form flags, environment) may name a path too.
    others = [(text, owner.pos(key, name))
              for owner, key, items in ((model, "args", model.args), (svc, "args", svc.args),
                                        (model, "env", model.env), (svc, "env", svc.env))
              for name, value in items for text in _strings(value)]
    for text, pos in checkpoints + others:
        retired = next((r for r in host.retired if _under(text, r)), None)
        if retired is not None:
            diags.error(pos, "P008", f"'{text}' is on the retired volume {retired} of host "
                        f"'{host.name}' (service '{svc.name}')", f"move it under {host.model_root}")
        elif (text, pos) in checkpoints and not _under(text, host.model_root):
            diags.error(pos, "P009", f"'{text}' is not under the model root {host.model_root} "
                        f"of host '{host.name}' (service '{svc.name}')")


def _check_memory(host: Host, placement: Placement, diags: Diagnostics) -> None:
    """Weights must fit the static memory pool; warn when little is left for the KV cache."""
    model = placement.model
    gpus = placement.gpus
    if not gpus:
        return
    fraction = model.mem_fraction_static if model.mem_fraction_static is not None else DEFAULT_MEM_FRACTION
    if not 0 < fraction < 1:
        return  # the rules pass reports the out-of-range value itself
    pool = sum(g.memory_gb for g in gpus) * fraction
    kv = pool - model.weights.size_gb
    where = placement.service.pos("model")
    text = (f"{model.weights.size_gb:g} GB of weights on {len(gpus)} GPU(s) "
            f"x {min(g.memory_gb for g in gpus):g} GB at mem_fraction_static {fraction:g}")
    if kv <= 0:
        diags.error(where, "P010", f"model '{model.name}' does not fit: {text} leaves no room "
                    f"({pool:.1f} GB static pool)", "use more GPUs or a smaller checkpoint")
    elif kv / len(gpus) < THIN_KV_GB_PER_GPU:
        diags.warning(where, "P011", f"thin KV cache for '{model.name}': {text} leaves "
                      f"{kv:.1f} GB ({kv / len(gpus):.1f} GB per GPU)")


def place_host(host: Host, models: dict[str, Model], diags: Diagnostics) -> tuple[Placement, ...]:
    """Place all services of a host; services with explicit GPUs first, then the others."""
    check_pci_numbering(host, diags)
    vm_of = dict(host.vm_gpus)
    owner: dict[int, str] = {}
    placed: dict[str, Placement] = {}
    ports: dict[int, ServiceSpec] = {}
    cpus_of = dict(host.numa)

    for svc in host.services:
        if svc.port in ports and ports[svc.port].name != svc.name:
            diags.error(svc.pos("port"), "P007", f"port {svc.port} is already used by service "
                        f"'{ports[svc.port].name}' on host '{host.name}'")
        ports.setdefault(svc.port, svc)

    explicit = [s for s in host.services if s.gpus is not None]
    automatic = [s for s in host.services if s.gpus is None]
    for svc in explicit + automatic:
        model = models.get(svc.model)
        if model is None:
            continue  # reported by resolve (R002)
        _check_paths(host, svc, model, diags)
        free = [g for g in host.gpus if g.index not in vm_of and g.index not in owner]
        if svc.gpus is not None:
            chosen: list[Gpu] = []
            for i, index in enumerate(svc.gpus):
                gpu = host.gpu(index)
                pos = svc.pos("gpus", i)
                if gpu is None:
                    known = ", ".join(str(g.index) for g in host.gpus)
                    diags.error(pos, "P001", f"GPU {index} is not in the inventory of host "
                                f"'{host.name}' (GPUs: {known})")
                elif index in vm_of:
                    diags.error(pos, "P002", f"GPU {index} is passed through to VM '{vm_of[index]}' "
                                f"and cannot serve '{svc.name}'")
                elif index in owner:
                    diags.error(pos, "P003", f"GPU {index} is already used by service '{owner[index]}'")
                elif gpu in chosen:
                    diags.error(pos, "P003", f"GPU {index} is listed twice")
                else:
                    chosen.append(gpu)
            if len(svc.gpus) != model.gpu_count:
                diags.error(svc.pos("gpus"), "P004", f"service '{svc.name}' lists {len(svc.gpus)} GPU(s), "
                            f"but model '{model.name}' needs {model.gpu_count} "
                            f"(tp {model.tp} x pp {model.pp}"
                            + ("" if model.dp_attention or model.dp == 1 else f" x dp {model.dp}") + ")")
            nodes = sorted({g.numa_node for g in chosen})
            if len(nodes) > 1 and not svc.allow_cross_numa:
                counts: dict[int, int] = {}
                for g in free:
                    counts[g.numa_node] = counts.get(g.numa_node, 0) + 1
                if any(c >= model.gpu_count for c in counts.values()):
                    diags.error(svc.pos("gpus"), "P005", f"GPUs {', '.join(str(g.index) for g in chosen)} "
                                f"span NUMA nodes {', '.join(map(str, nodes))}, but one node has "
                                f"{model.gpu_count} free GPUs",
                                "pick GPUs of one node, or set allow_cross_numa: true")
            gpus = tuple(chosen)
        else:
            picked = _choose(free, model.gpu_count, svc.allow_cross_numa)
            if picked is None:
                diags.error(svc.pos("model"), "P006", f"service '{svc.name}' needs {model.gpu_count} GPU(s), "
                            f"but host '{host.name}' has only {len(free)} free "
                            f"({len(vm_of)} passed through to VMs, {len(owner)} used by other services)")
                continue
            gpus = picked
            nodes = sorted({g.numa_node for g in gpus})
            if len(nodes) > 1 and not svc.allow_cross_numa:
                diags.error(svc.pos("model"), "P005", f"service '{svc.name}' needs {model.gpu_count} GPUs; "
                            f"no NUMA node has that many free, so they span nodes "
                            f"{', '.join(map(str, nodes))}", "set allow_cross_numa: true to accept that")
        for g in gpus:
            owner[g.index] = svc.name
        nodes = sorted({g.numa_node for g in gpus})
        placement = Placement(service=svc, model=model, gpus=pci_order(gpus),
                              numa_nodes=tuple(nodes),
                              cpus=cpus_of.get(nodes[0]) if len(nodes) == 1 else None)
        _check_memory(host, placement, diags)
        placed[svc.name] = placement
    # Inventory order, not placement order: output must not depend on which were explicit.
    return tuple(placed[s.name] for s in host.services if s.name in placed)
