"""The GPU a service runs on, as the GPU rules see it: capability, memory, the host's torch, the pin's checks.

:func:`gpu_facts` builds :class:`GpuFacts` from a service's placed GPUs (their
``compute_cap``, as the inventory records it), the host's ``facts:`` (the torch of its SGLang
Python) and the pin's ``<pin>.devices.json``; None when the capability is not known, and the
GPU rules then stay silent (one info line names the command that captures the facts).

SGLang reads the capability of CUDA device 0, the first of the service's GPUs; a group of
different GPUs is reported by the rules that read it (``mixed``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator.load.resolve import Gpu, HostFacts
from generator.sglang.devices import Devices, load_devices

_ARCH = re.compile(r"^(sm|compute)_([0-9]+)([a-z]?)$")


@dataclass(frozen=True)
class GpuFacts:
    """What the GPU rules know of one service's GPUs and the host's torch."""

    capability: tuple[int, int]  # of CUDA device 0 (the first placed GPU, PCI order)
    compute_cap: str  # as the inventory writes it, "12.0"
    model: str  # the inventory's GPU name ("" when not written)
    memory_mib: float
    mixed: bool  # the service's GPUs differ in capability
    torch_known: bool  # the inventory records the host torch (facts.torch_cuda)
    torch_cuda: str | None  # its torch.version.cuda (None with torch_known: a torch without CUDA)
    torch_arch_list: tuple[str, ...] | None
    # The pin's device checks (None: not captured for this pin). Left out of equality and the
    # hash: it follows from the pin's catalog, which rules/kept.py keys its answers on already.
    devices: Devices | None = field(default=None, compare=False, repr=False)

    @property
    def sm(self) -> int:
        """The capability as SGLang's ``get_device_sm()`` writes it: 120 for 12.0."""
        return self.capability[0] * 10 + self.capability[1]

    def kernel_image(self) -> str | None:
        """The entry of the host torch's arch list that runs on this GPU (:func:`kernel_image`), None when none does."""
        return kernel_image(self.torch_arch_list or (), self.capability)

    def probe(self, name: str) -> bool:
        """SGLang's capability probe ``name`` (``is_sm100_supported`` ...) on this GPU and torch."""
        return self.devices is not None and self.devices.probe(name, self.capability, self.torch_cuda)


def kernel_image(arch_list: Sequence[str], capability: tuple[int, int]) -> str | None:
    """The entry of a torch's arch list that runs on a GPU of ``capability``, or None ("no kernel image").

    A cubin ``sm_XY`` runs on GPUs of major X and minor >= Y (``sm_80`` on an 8.6); an
    arch-specific one (``sm_90a``, ``sm_100a``) only on exactly XY; PTX ``compute_XY`` is
    compiled by the driver for any GPU of capability >= XY.
    """
    major, minor = capability
    runs: list[tuple[bool, int, str]] = []  # (a cubin, its arch, entry): the nearest cubin is named
    for entry in arch_list:
        m = _ARCH.fullmatch(entry)
        if not m:
            continue
        kind, digits, suffix = m.groups()
        arch_major, arch_minor = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and arch_major == major and (arch_minor == minor if suffix else arch_minor <= minor):
            runs.append((True, int(digits), entry))
        elif kind == "compute" and (arch_major, arch_minor) <= (major, minor) and not suffix:
            runs.append((False, int(digits), entry))
    return max(runs)[2] if runs else None


def gpu_facts(gpus: Sequence[Gpu], facts: HostFacts, catalog_file: Path | None) -> GpuFacts | None:
    """The GPU facts of a service placed on ``gpus`` (PCI order); None when a capability is unknown."""
    if not gpus or any(g.capability is None for g in gpus):
        return None
    first = gpus[0]
    capability = first.capability
    assert capability is not None and first.compute_cap is not None
    devices = load_devices(catalog_file) if catalog_file is not None else None
    return GpuFacts(capability=capability, compute_cap=first.compute_cap, model=first.model,
                    memory_mib=first.memory_total_mib, mixed=len({g.capability for g in gpus}) > 1,
                    torch_known=facts.torch_known, torch_cuda=facts.torch_cuda,
                    torch_arch_list=facts.torch_arch_list, devices=devices)
