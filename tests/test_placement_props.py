"""Property tests for placement on random topologies (hypothesis).

Random hosts (1-3 NUMA nodes, 0-6 GPUs each, some passed through to a VM) with random
services (TP 1-8, some with explicit GPU lists, which may be wrong on purpose) go
through the real loader and ``place_host``. Whatever gets placed must never share a GPU,
never use a VM's GPU or one outside the inventory, and the automatic services must be
NUMA-local in as many cases as a brute-force search over all assignments finds possible.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from repo_builder import model_yaml, write_repo

from generator.errors import Diagnostics
from generator.plan.placement import Placement, place_host, plan_nodes
from generator.load.resolve import Host
from generator.load.sources import load_sources

TPS = (1, 2, 4, 8)
MODELS = {f"m{tp}": model_yaml(f"m{tp}", tp=tp, size_gb=1) for tp in TPS}


@st.composite
def topologies(draw: st.DrawFn) -> tuple[str, int]:
    """A host inventory text with services, and its GPU count."""
    per_node = draw(st.lists(st.integers(0, 6), min_size=1, max_size=3).filter(lambda c: sum(c) > 0))
    total = sum(per_node)
    vm = draw(st.sets(st.integers(0, total - 1), max_size=total))
    lines = []
    for i in range(draw(st.integers(1, 5))):
        tp = draw(st.sampled_from(TPS))
        extra = ""
        if draw(st.booleans()) and draw(st.booleans()):  # a quarter of services name their GPUs
            gpus = draw(st.lists(st.integers(0, total), min_size=1, max_size=tp, unique=True))
            extra += f", gpus: [{', '.join(map(str, gpus))}]"
        if draw(st.booleans()):
            extra += ", allow_cross_numa: true"
        lines.append(f"  - {{name: s{i}, model: m{tp}, port: {30000 + i}{extra}}}\n")
    text = f"name: h\naddress: h.test\ngpus:\n"
    index = 0
    for node, count in enumerate(per_node):
        for _ in range(count):
            text += f'  - {{index: {index}, pci_bus_id: "00000000:{1 + index:02X}:00.0", memory_gb: 80, numa_node: {node}}}\n'
            index += 1
    text += "numa:\n" + "".join(f'  - {{node: {n}, cpus: "{n}"}}\n' for n in range(len(per_node)))
    if vm:
        text += f"vm_passthrough:\n  - {{vm: vm1, gpus: [{', '.join(map(str, sorted(vm)))}]}}\n"
    text += 'storage: {model_root: /shared/models}\nsglang: {pin: "0.5.9", python: /opt/sglang/bin/python}\n'
    return text + "services:\n" + "".join(lines), total


def _place(host_text: str) -> tuple[Host, tuple[Placement, ...]]:
    with tempfile.TemporaryDirectory() as folder:
        write_repo(Path(folder), {"h": host_text}, MODELS)
        diags = Diagnostics()
        sources = load_sources(Path(folder), diags)
        host = sources.hosts["h"]
        return host, place_host(host, sources.models, diags)


def _brute_force_local(free_by_node: dict[int, int], needs: list[int]) -> int:
    """The most groups that can sit inside one node each, trying every assignment."""
    best = 0
    options = list(free_by_node) + [None]
    for assignment in itertools.product(options, repeat=len(needs)):
        used: dict[int, int] = {}
        for node, need in zip(assignment, needs):
            if node is not None:
                used[node] = used.get(node, 0) + need
        if all(used[n] <= free_by_node[n] for n in used):
            best = max(best, sum(a is not None for a in assignment))
    return best


PROPS = settings(max_examples=examples(60))


@PROPS
@given(topologies())
def test_no_overlap_no_vm_gpu_no_unknown_gpu(topology: tuple[str, int]) -> None:
    host, placed = _place(topology[0])
    vm = {i for i, _ in host.vm_gpus}
    inventory = {g.index for g in host.gpus}
    seen: set[int] = set()
    for p in placed:
        indexes = [g.index for g in p.gpus]
        assert len(indexes) == len(set(indexes)), p.service.name
        assert not set(indexes) & seen, f"{p.service.name} shares a GPU"
        assert not set(indexes) & vm, f"{p.service.name} uses a VM's GPU"
        assert set(indexes) <= inventory
        seen |= set(indexes)
        assert p.numa_nodes == tuple(sorted({g.numa_node for g in p.gpus}))
        assert [g.pci_bus_id for g in p.gpus] == sorted(g.pci_bus_id for g in p.gpus)


@PROPS
@given(topologies())
def test_automatic_services_are_numa_local_whenever_possible(topology: tuple[str, int]) -> None:
    host, placed = _place(topology[0])
    vm = {i for i, _ in host.vm_gpus}
    explicit = {s.name for s in host.services if s.gpus is not None}
    taken = {g.index for p in placed if p.service.name in explicit for g in p.gpus}
    free_by_node: dict[int, int] = {}
    for g in host.gpus:
        if g.index not in vm and g.index not in taken:
            free_by_node[g.numa_node] = free_by_node.get(g.numa_node, 0) + 1
    needs = [int(s.model[1:]) for s in host.services if s.gpus is None]
    automatic = [p for p in placed if p.service.name not in explicit]
    local = sum(len(p.numa_nodes) == 1 for p in automatic)
    assert local == _brute_force_local(free_by_node, needs)


@settings(max_examples=examples(300))
@given(st.dictionaries(st.integers(0, 3), st.integers(0, 8), min_size=1),
       st.lists(st.sampled_from(TPS), max_size=6))
def test_plan_nodes_matches_brute_force(free_by_node: dict[int, int], needs: list[int]) -> None:
    plan = plan_nodes(free_by_node, needs)
    used: dict[int, int] = {}
    for node, need in zip(plan, needs):
        if node is not None:
            used[node] = used.get(node, 0) + need
    assert all(used[n] <= free_by_node[n] for n in used)
    assert sum(n is not None for n in plan) == _brute_force_local(free_by_node, needs)
