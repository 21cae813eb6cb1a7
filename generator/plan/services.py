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


# What each variable of gen_environment is for, and where the operator changes it instead.
GEN_VARIABLES: dict[str, str] = {
    "CUDA_DEVICE_ORDER": "the order gen's GPU indices are in (PCI bus order)",
    "CUDA_VISIBLE_DEVICES": "the GPUs gen placed the service on; choose them with the service's `gpus:`",
    "NCCL_SOCKET_IFNAME": "the multi-node interface; set it as the host's `network.interface`",
    "GLOO_SOCKET_IFNAME": "the multi-node interface; set it as the host's `network.interface`",
}


def gen_environment(p: Placement) -> dict[str, str]:
    """The variables gen itself writes into the service's environment file: the GPUs it
    placed the service on, and the NIC of a multi-node deployment. ``env:`` cannot set them
    (generator/emit/owned_env.py)."""
    merged: dict[str, str] = {
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "CUDA_VISIBLE_DEVICES": p.cuda_visible_devices,
    }
    if p.cluster is not None:  # the NIC the nodes of a multi-node deployment talk over
        merged["NCCL_SOCKET_IFNAME"] = p.cluster.interface
        merged["GLOO_SOCKET_IFNAME"] = p.cluster.interface
    return merged


def service_environment(p: Placement) -> tuple[tuple[str, str], ...]:
    """The service's environment: gen's own variables first, then the model's, then the service's."""
    merged = gen_environment(p)
    for name, value in p.model.env + p.service.env:
        merged[name] = value
    return tuple(merged.items())
