"""Hardware facts: the host still has the GPUs, NUMA layout, driver, torch and links its inventory records.

The host is read the way ``gen host snapshot`` reads it (:func:`generator.live.facts.capture`),
and only what the inventory records is compared: a GPU's ``memory_mib``, ``compute_cap``,
``model`` and ``numa_node`` (a swapped GPU), the NUMA CPU lists, and the ``facts:``
section (a new driver, another CUDA or torch, a changed link matrix). A GPU the host does
not show is the ``gpus-visible`` check's. Each failure names what the host says against
what the inventory says; the fix is to capture again (``gen host snapshot``) and review
the diff.
"""

from __future__ import annotations

from generator.live.context import HostContext
from generator.live.facts import FactsError, LiveFacts, capture, testinfra_runner
from generator.live.inventory_update import model_names_gpu
from generator.live.plan import HostPlan
from generator.live.results import HOST_WIDE, CheckResult, result


def _fix(plan: HostPlan) -> str:
    return f"capture again with `gen host snapshot {plan.name}` and review the diff"


def _gpu_drift(plan: HostPlan, live: LiveFacts) -> list[str]:
    vm = {index for index, _, _ in plan.vm_gpus}
    out: list[str] = []
    for gpu in plan.gpus:
        seen = live.gpu(gpu.pci_bus_id)
        if gpu.index in vm or seen is None:
            continue
        if gpu.memory_mib is not None and seen.memory_mib != gpu.memory_mib:
            out.append(f"GPU {gpu.index}: {seen.memory_mib} MiB, the inventory says {gpu.memory_mib}")
        if gpu.compute_cap is not None and seen.compute_cap != gpu.compute_cap:
            out.append(f"GPU {gpu.index}: compute capability {seen.compute_cap}, the inventory says {gpu.compute_cap}")
        if gpu.model and not model_names_gpu(gpu.model, seen.name):
            out.append(f"GPU {gpu.index}: nvidia-smi names it '{seen.name}', the inventory '{gpu.model}'")
    for gpu in plan.gpus:
        node = live.numa_node(gpu.pci_bus_id)
        if node is not None and node != gpu.numa_node:
            out.append(f"GPU {gpu.index}: on NUMA node {node}, the inventory says {gpu.numa_node}")
    return out


def _facts_results(plan: HostPlan, live: LiveFacts) -> list[CheckResult]:
    facts = plan.facts
    out: list[CheckResult] = []
    if facts.driver_version is not None:
        ok = live.driver_version == facts.driver_version
        out.append(result(ok, plan.name, HOST_WIDE, "driver", f"NVIDIA driver {live.driver_version}"
                          + ("" if ok else f", the inventory records {facts.driver_version}; {_fix(plan)}")))
    if facts.cuda_version is not None:
        ok = live.cuda_version == facts.cuda_version
        out.append(result(ok, plan.name, HOST_WIDE, "cuda-driver", f"the driver supports CUDA {live.cuda_version}"
                          + ("" if ok else f", the inventory records {facts.cuda_version}; {_fix(plan)}")))
    if facts.torch_known:
        now = (live.torch_cuda, live.torch_arch_list)
        ok = live.torch_error is None and now == (facts.torch_cuda, facts.torch_arch_list)
        said = (f"torch of {plan.python} cannot be read: {live.torch_error}" if live.torch_error else
                f"torch of {plan.python}: CUDA {live.torch_cuda}, {' '.join(live.torch_arch_list or ()) or 'no arch'}")
        out.append(result(ok, plan.name, HOST_WIDE, "torch", said + ("" if ok else
                          f"; the inventory records CUDA {facts.torch_cuda}, "
                          f"{' '.join(facts.torch_arch_list or ()) or 'no arch'}; {_fix(plan)}")))
    if facts.topology is not None:
        bus_of = {g.index: g.pci_bus_id for g in plan.gpus}
        topo = facts.topology
        changed = [f"GPUs {a}-{b}: {live.links.get(bus_of[a], {}).get(bus_of[b], 'not seen')}, "
                   f"the inventory says {topo.link(a, b)}"
                   for a in topo.gpus for b in topo.gpus if a < b
                   and live.links.get(bus_of[a], {}).get(bus_of[b]) != topo.link(a, b)]
        out.append(result(not changed, plan.name, HOST_WIDE, "topology",
                          f"GPU links as recorded ({len(topo.gpus)} GPUs)" if not changed else
                          f"{len(changed)} GPU link(s) changed; {_fix(plan)}", "\n".join(changed)))
    return out


def run(ctx: HostContext) -> list[CheckResult]:
    """The GPU facts, NUMA CPU lists and facts section against the host (nothing when none is recorded)."""
    plan = ctx.plan
    records = (any(g.memory_mib is not None or g.compute_cap is not None for g in plan.gpus)
               or plan.facts != type(plan.facts)())
    if not records:
        return []
    vm_buses = [bus for _, bus, _ in plan.vm_gpus]
    try:
        live = capture(testinfra_runner(ctx.host), plan.python if plan.facts.torch_known else None, vm_buses)
    except FactsError as exc:
        return [result(False, plan.name, HOST_WIDE, "gpu-facts", f"the GPU facts cannot be read: {exc}")]
    drift = _gpu_drift(plan, live)
    results = [result(not drift, plan.name, HOST_WIDE, "gpu-facts",
                      f"{len(live.gpus)} GPU(s) as the inventory records them" if not drift else
                      f"{len(drift)} GPU fact(s) differ; {_fix(plan)}", "\n".join(drift))]
    numa = dict(plan.numa)
    if live.numa_cpus:
        moved = [f"node {n}: CPUs {live.numa_cpus.get(n, 'absent')}, the inventory says {cpus}"
                 for n, cpus in numa.items() if live.numa_cpus.get(n) != cpus]
        moved += [f"node {n}: CPUs {cpus}, not in the inventory" for n, cpus in live.numa_cpus.items() if n not in numa]
        results.append(result(not moved, plan.name, HOST_WIDE, "numa",
                              f"{len(numa)} NUMA node(s) as recorded" if not moved else
                              f"the NUMA layout differs; {_fix(plan)}", "\n".join(moved)))
    return results + _facts_results(plan, live)
