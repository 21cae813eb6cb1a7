"""STAND-IN for torch's CUDA part only (no GPU, no CUDA here): what gen's sandbox probe calls.

Not torch. It exists so the probe's CUDA branch (generator/live/onhost_sandbox.py:
``cuda``) runs in a real process with a real environment. It models only how CUDA
enumerates devices:

* the machine's GPUs are the stand-in table ``GEN_STANDIN_GPUS`` (comma-separated PCI
  bus ids, in PCI order: CUDA's order under ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, which
  gen's units set);
* ``CUDA_VISIBLE_DEVICES`` selects and orders them as CUDA does: unset means all, an
  empty value none, and the list stops at the first entry that is not a valid index;
* ``GEN_STANDIN_TORCH_NO_PCI=1`` models a torch whose device properties lack the
  ``pci_*`` fields (the probe then asks the CUDA driver, which is absent here).

What the wheel was built for (``torch.version.cuda``, and the architectures
``torch._C._cuda_getArchFlags()`` lists, as ``gen host snapshot`` reads them) comes from
``/etc/standin-torch/build.json`` (``{"cuda": "12.8", "arch": "sm_90 sm_120"}``; the
tests write it), or ``$GEN_STANDIN_TORCH_BUILD``; without it this is a CPU-only build.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

__version__ = "0.0-standin"
STANDIN = True


@dataclass(frozen=True)
class _Props:
    """The part of torch's _CudaDeviceProperties the probe reads."""

    name: str
    pci_domain_id: int
    pci_bus_id: int
    pci_device_id: int


@dataclass(frozen=True)
class _PropsWithoutPci:
    """Device properties of a torch build without the pci_* fields."""

    name: str


def _table() -> list[str]:
    raw = os.environ.get("GEN_STANDIN_GPUS", "")
    return [b.strip() for b in raw.split(",") if b.strip()]


def _visible() -> list[str]:
    """The bus ids CUDA would expose, in CUDA's ordinal order."""
    table = _table()
    raw = os.environ.get("CUDA_VISIBLE_DEVICES")
    if raw is None:
        return table
    out: list[str] = []
    for word in raw.split(","):
        word = word.strip()
        if not word.isdigit() or int(word) >= len(table) or table[int(word)] in out:
            break  # CUDA ignores the rest of the list after an invalid entry
        out.append(table[int(word)])
    return out


class _Cuda:
    """torch.cuda, stand-in: init, is_available, device_count, get_device_properties."""

    def is_available(self) -> bool:
        return bool(_visible())

    def init(self) -> None:
        if not _visible():
            raise RuntimeError("No CUDA GPUs are available (stand-in: no visible device)")

    def device_count(self) -> int:
        return len(_visible())

    def get_device_properties(self, index: int) -> _Props | _PropsWithoutPci:
        visible = _visible()
        if not 0 <= index < len(visible):
            raise AssertionError("Invalid device id")  # what torch raises
        if os.environ.get("GEN_STANDIN_TORCH_NO_PCI") == "1":
            return _PropsWithoutPci("stand-in GPU")
        domain, bus, rest = visible[index].split(":")
        return _Props("stand-in GPU", int(domain, 16), int(bus, 16), int(rest.split(".")[0], 16))


cuda = _Cuda()


def _build() -> dict:
    path = Path(os.environ.get("GEN_STANDIN_TORCH_BUILD", "/etc/standin-torch/build.json"))
    return json.loads(path.read_text()) if path.exists() else {"cuda": None, "arch": None}


class _Version:
    """torch.version, stand-in: the CUDA the wheel was built with."""

    @property
    def cuda(self) -> str | None:
        return _build()["cuda"]


class _C:
    """torch._C, stand-in: only the build's arch flags (absent, like a CPU-only wheel's, without CUDA)."""

    def __getattr__(self, name: str) -> object:
        if name == "_cuda_getArchFlags" and _build()["cuda"]:
            return lambda: _build()["arch"]
        raise AttributeError(name)


version = _Version()
_C = _C()  # type: ignore[misc]
