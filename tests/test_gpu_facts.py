"""The GPU facts of an inventory: memory_mib or memory_gb (agreeing), compute_cap as nvidia-smi prints it."""

from __future__ import annotations

from pathlib import Path

import pytest
from repo_builder import host_yaml, write_repo

from generator.errors import Diagnostics
from generator.load.resolve import MEMORY_AGREEMENT, Gpu
from generator.load.sources import load_sources


def _load(tmp_path: Path, gpu_fields: str) -> tuple[tuple[Gpu, ...], list[str]]:
    """One host whose single GPU carries ``gpu_fields`` (flow-mapping text) instead of memory_gb."""
    text = host_yaml(gpus_per_node=(1,)).replace("memory_gb: 96", gpu_fields)
    write_repo(tmp_path, {"h": text}, {})
    diags = Diagnostics()
    sources = load_sources(tmp_path, diags)
    gpus = sources.hosts["h"].gpus if "h" in sources.hosts else ()
    return gpus, [f"{d.code}: {d.message}" for d in diags.sorted()]


def test_measured_facts_resolve_and_memory_gb_follows_memory_mib(tmp_path: Path) -> None:
    gpus, errors = _load(tmp_path, 'memory_mib: 97887, compute_cap: "12.0"')
    assert errors == []
    [gpu] = gpus
    assert (gpu.memory_mib, gpu.compute_cap, gpu.capability) == (97887, "12.0", (12, 0))
    assert gpu.memory_gb == pytest.approx(97887 / 1024)  # GiB, what placement reads
    assert gpu.memory_total_mib == 97887


def test_hand_typed_memory_gb_alone_is_kept_and_capability_unknown(tmp_path: Path) -> None:
    gpus, errors = _load(tmp_path, "memory_gb: 96")
    assert errors == []
    [gpu] = gpus
    assert (gpu.memory_gb, gpu.memory_mib, gpu.compute_cap, gpu.capability) == (96.0, None, None, None)
    assert gpu.memory_total_mib == 96 * 1024


@pytest.mark.parametrize(("gb", "mib", "agree"), [
    (96, 97887, True),  # RTX PRO 6000: data sheet 96 GB, memory.total 97887 MiB (95.6 GiB)
    (102.6, 97887, True),  # the same card read in decimal GB
    (141, 143771, True),  # H200
    (48, 46068, True),  # L40S with ECC on: 44.99 GiB
    (80, 143771, False),  # an H100's figure typed for an H200
    (96, 32607, False),  # a 5090 (32 GB) in place of an RTX PRO 6000
])
def test_memory_gb_and_memory_mib_must_agree(tmp_path: Path, gb: float, mib: int, agree: bool) -> None:
    _, errors = _load(tmp_path, f"memory_gb: {gb}, memory_mib: {mib}")
    assert (errors == []) is agree, errors
    if not agree:
        assert [e.split(":")[0] for e in errors] == ["R041"]


def test_the_tolerance_edge(tmp_path: Path) -> None:
    gib = 100.0
    inside = gib * (1 + MEMORY_AGREEMENT) - 0.01
    outside = gib * (1 + MEMORY_AGREEMENT) + 0.01
    assert _load(tmp_path, f"memory_gb: {inside}, memory_mib: 102400")[1] == []
    assert _load(tmp_path, f"memory_gb: {outside}, memory_mib: 102400")[1][0].startswith("R041")


def test_a_gpu_without_memory_is_refused(tmp_path: Path) -> None:
    _, errors = _load(tmp_path, 'compute_cap: "9.0"')
    assert errors == ["R040: GPU 0 gives neither memory_mib nor memory_gb"]


@pytest.mark.parametrize("cap", ["12.0", "9.0", "10.3", "8.6"])
def test_compute_caps_as_nvidia_smi_prints_them(tmp_path: Path, cap: str) -> None:
    gpus, errors = _load(tmp_path, f'memory_gb: 96, compute_cap: "{cap}"')
    assert errors == [] and gpus[0].capability == tuple(int(x) for x in cap.split("."))


@pytest.mark.parametrize(("cap", "code"), [("sm_120", "S009"), ("12", "S009"), ("120", "S009"), ("12.0.1", "S009"),
                                           ("12.0", None)])
def test_compute_cap_spellings(tmp_path: Path, cap: str, code: str | None) -> None:
    _, errors = _load(tmp_path, f'memory_gb: 96, compute_cap: "{cap}"')
    assert [e.split(":")[0] for e in errors] == ([code] if code else [])


def test_an_unquoted_compute_cap_is_refused_with_the_fix(tmp_path: Path) -> None:
    diags = Diagnostics()
    text = host_yaml(gpus_per_node=(1,)).replace("memory_gb: 96", "memory_gb: 96, compute_cap: 12.0")
    write_repo(tmp_path, {"h": text}, {})
    load_sources(tmp_path, diags)
    [d] = diags.items
    assert (d.code, d.hint) == ("S002", "write it in quotes")


def _topology(tmp_path: Path, gpus: str, links: str) -> list[str]:
    text = host_yaml(gpus_per_node=(2,)) + f"facts:\n  topology:\n    gpus: {gpus}\n    links: {links}\n"
    write_repo(tmp_path, {"h": text}, {})
    diags = Diagnostics()
    load_sources(tmp_path, diags)
    return [f"{d.code}: {d.message}" for d in diags.sorted()]


@pytest.mark.parametrize(("gpus", "links", "expected"), [
    ("[0, 1]", "[[X, NV18], [NV18, X]]", []),
    ("[0, 1]", "[[X, SYS], [NODE, X]]", []),  # as captured: a matrix need not be symmetric
    ("[0, 2]", "[[X, NODE], [NODE, X]]", ["R042: facts.topology: GPU 2 is not in the inventory"]),
    ("[0, 0]", "[[X, NODE], [NODE, X]]", ["R042: facts.topology: a GPU appears twice in facts.topology.gpus"]),
    ("[0, 1]", "[[X, NODE]]", ["R042: facts.topology: links must be 2 rows of 2 (one per GPU of facts.topology.gpus)"]),
    ("[0, 1]", "[[NODE, NODE], [NODE, X]]", ["R042: facts.topology: GPU 0's own cell is not X"]),
    ("[0, 1]", "[[X, X], [X, X]]", ["R042: facts.topology: GPUs 0 and 1 are joined by X (itself)"]),
    ("[0, 1]", "[[X, NVLINK], [NODE, X]]",
     ["S009: value 'NVLINK' at 'facts.topology.links[0][1]' is not a link of `nvidia-smi topo -m` "
      "(X, NV<n>, PIX, PXB, PHB, NODE or SYS)"]),
])
def test_the_link_matrix_is_checked(tmp_path: Path, gpus: str, links: str, expected: list[str]) -> None:
    assert _topology(tmp_path, gpus, links) == expected


def test_facts_resolve(tmp_path: Path) -> None:
    text = host_yaml(gpus_per_node=(2,)) + (
        'facts:\n  driver_version: "580.95.05"\n  cuda_version: "13.0"\n  torch_cuda: null\n'
        "  torch_arch_list: []\n  topology: {gpus: [1, 0], links: [[X, PIX], [PIX, X]]}\n")
    write_repo(tmp_path, {"h": text}, {})
    diags = Diagnostics()
    facts = load_sources(tmp_path, diags).hosts["h"].facts
    assert diags.items == []
    assert (facts.driver_version, facts.cuda_version, facts.torch_cuda, facts.torch_known, facts.torch_arch_list) == (
        "580.95.05", "13.0", None, True, ())
    assert facts.topology is not None and facts.topology.link(0, 1) == "PIX" and facts.topology.link(0, 7) is None
