"""The planned services of a host: what rendering turns into files, decided and checked.

The pipeline (generator/pipeline/host.py) places, joins clusters, builds and checks each
argv and the environment, and defers NUMA binding; the result is a :class:`PlannedHost`,
and :mod:`generator.emit.render` only templates it.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.load.resolve import Host
from generator.plan.argv import ServiceArgv
from generator.plan.memory_check import MemoryOutcome
from generator.plan.placement import Placement
from generator.sglang.catalog import Catalog


@dataclass(frozen=True)
class PlannedService:
    """One service, ready to render: where it runs, how it is launched, its environment."""

    placement: Placement
    argv: ServiceArgv
    environment: tuple[tuple[str, str], ...]
    memory: MemoryOutcome | None = None  # what SGLang will size for it (None: not checked)


@dataclass(frozen=True)
class PlannedHost:
    """A host whose every service passed every check, with the catalog they were checked against."""

    host: Host
    catalog: Catalog
    services: tuple[PlannedService, ...]


def service_environment(p: Placement) -> tuple[tuple[str, str], ...]:
    """The service's environment: GPU selection first, then the model's, then the service's."""
    merged: dict[str, str] = {
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "CUDA_VISIBLE_DEVICES": p.cuda_visible_devices,
    }
    if p.cluster is not None:  # the NIC the nodes of a multi-node deployment talk over
        merged["NCCL_SOCKET_IFNAME"] = p.cluster.interface
        merged["GLOO_SOCKET_IFNAME"] = p.cluster.interface
    for name, value in p.model.env + p.service.env:
        merged[name] = value
    return tuple(merged.items())
