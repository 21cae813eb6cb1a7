"""Build small deployment repositories in a temp folder for tests (plain files, real loader)."""

from __future__ import annotations

from pathlib import Path

GPU_LINE = '  - {{index: {i}, pci_bus_id: "00000000:{bus:02X}:00.0", memory_gb: {mem}, numa_node: {node}}}\n'


def host_yaml(name: str = "h", gpus_per_node: tuple[int, ...] = (4, 4), mem: int = 96,
              vm: tuple[int, ...] = (), services: str = "", pin: str = "0.5.9",
              retired: tuple[str, ...] = ("/data",)) -> str:
    """A host inventory: GPUs numbered in PCI order across NUMA nodes."""
    text = f"name: {name}\naddress: {name}.test\ngpus:\n"
    i = 0
    for node, count in enumerate(gpus_per_node):
        for _ in range(count):
            text += GPU_LINE.format(i=i, bus=1 + 0x10 * i, mem=mem, node=node)
            i += 1
    text += "numa:\n" + "".join(f'  - {{node: {n}, cpus: "{n * 8}-{n * 8 + 7}"}}\n'
                                for n in range(len(gpus_per_node)))
    if vm:
        text += f"vm_passthrough:\n  - {{vm: vm1, gpus: [{', '.join(map(str, vm))}]}}\n"
    text += f"storage:\n  model_root: /shared/models\n  retired: [{', '.join(retired)}]\n"
    text += f'sglang: {{pin: "{pin}", python: /opt/sglang/bin/python}}\n'
    if services:
        text += "services:\n" + services
    return text


def model_yaml(name: str = "m", tp: int = 1, size_gb: float = 10, extra: str = "") -> str:
    """A model manifest with the given TP size and weights size."""
    return (f"name: {name}\nweights: {{path: /shared/models/{name}, size_gb: {size_gb}}}\n"
            f"parallel: {{tp: {tp}}}\n" + extra)


def write_repo(root: Path, hosts: dict[str, str], models: dict[str, str]) -> Path:
    """Write hosts/<name>.yaml and models/<name>.yaml under root; returns root."""
    for folder, files in (("hosts", hosts), ("models", models)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (root / folder / f"{name}.yaml").write_text(text)
    return root
