"""GPUs: the inventory's GPUs are visible at their PCI bus ids, VM GPUs are not.

Read with ``nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader``. With
``CUDA_DEVICE_ORDER=PCI_BUS_ID`` CUDA numbers the *visible* GPUs by bus id, so each
service's ``CUDA_VISIBLE_DEVICES`` is also checked to select the GPUs it was placed on.
"""

from __future__ import annotations

from generator.live.context import HostContext
from generator.live.results import HOST_WIDE, CheckResult, result

QUERY = "nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader"


def _bus(text: str) -> str:
    """Normalize a PCI bus id the way the inventory loader does (upper case, no 0x)."""
    return text.strip().upper().replace("0X", "")


def _pci_key(bus: str) -> tuple[int, ...]:
    domain, b, rest = bus.split(":")
    dev, fn = rest.split(".")
    return (int(domain, 16), int(b, 16), int(dev, 16), int(fn, 16))


def run(ctx: HostContext) -> list[CheckResult]:
    """Visible, absent, and per-service CUDA selection results."""
    p = ctx.plan
    out = ctx.host.run(QUERY)
    if out.rc != 0:
        return [result(False, p.name, HOST_WIDE, "gpus-visible", f"nvidia-smi failed (exit {out.rc})",
                       (out.stdout + out.stderr).strip())]
    visible: dict[str, str] = {}
    for line in out.stdout.splitlines():
        if "," in line:
            index, bus = line.split(",", 1)
            visible[_bus(bus)] = index.strip()
    missing = [f"GPU {i} ({bus})" for i, bus in p.host_gpus if bus not in visible]
    results = [result(not missing, p.name, HOST_WIDE, "gpus-visible",
                      f"all {len(p.host_gpus)} host GPU(s) visible" if not missing else
                      f"{len(missing)} inventory GPU(s) not visible: {', '.join(missing)}", out.stdout.strip())]
    leaked = [f"GPU {i} ({bus}, given to {vm})" for i, bus, vm in p.vm_gpus if bus in visible]
    results.append(result(not leaked, p.name, HOST_WIDE, "vm-gpus-absent",
                          f"none of the {len(p.vm_gpus)} VM GPU(s) is visible" if not leaked else
                          f"VM GPU(s) visible on the host: {', '.join(leaked)}", out.stdout.strip()))
    ordered = sorted(visible, key=_pci_key)
    for svc in p.services:
        indexes = [int(i) for i in svc.cuda_visible_devices.split(",") if i]
        selected = [ordered[i] if i < len(ordered) else f"no CUDA device {i}" for i in indexes]
        ok = tuple(selected) == svc.gpu_bus_ids
        results.append(result(ok, p.name, svc.name, "gpu-selection",
                              f"CUDA_VISIBLE_DEVICES={svc.cuda_visible_devices} selects {', '.join(selected)}"
                              + ("" if ok else f", placed on {', '.join(svc.gpu_bus_ids)}")))
    return results
