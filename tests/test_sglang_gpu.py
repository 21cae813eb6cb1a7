"""generator.sglang.gpu: a service's GPU facts, and whether a torch's arch list has a kernel image for a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from nvidia_smi_outputs import TORCH_WITHOUT_SM120

from generator.load.resolve import Gpu, HostFacts
from generator.sglang.gpu import gpu_facts, kernel_image

ROOT = Path(__file__).resolve().parent.parent
CU128 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120")  # torch 2.7+cu128's list


@pytest.mark.parametrize(("arch", "cap", "found"), [
    (CU128, (12, 0), "sm_120"), (CU128, (12, 1), "sm_120"), (CU128, (9, 0), "sm_90"), (CU128, (8, 9), "sm_86"),
    (CU128, (10, 3), "sm_100"), (CU128, (7, 0), None),
    (("sm_80", "sm_90a"), (9, 0), "sm_90a"), (("sm_80", "sm_90a"), (8, 0), "sm_80"), (("sm_100a",), (10, 3), None),
    (("sm_80", "compute_80"), (12, 0), "compute_80"), (("compute_90",), (8, 9), None), ((), (12, 0), None),
])
def test_kernel_images(arch: tuple[str, ...], cap: tuple[int, int], found: str | None) -> None:
    assert kernel_image(arch, cap) == found


def test_the_no_kernel_image_class_from_the_field() -> None:
    """torch 2.7.1+cu126 on an RTX PRO 6000 (xorbitsai/inference#3866, vllm#23781)."""
    arch = TORCH_WITHOUT_SM120.split("capabilities ", 1)[1].rstrip(".").split()
    assert arch == ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    assert kernel_image(arch, (12, 0)) is None and kernel_image(arch, (9, 0)) == "sm_90"


def _gpu(index: int, cap: str | None) -> Gpu:
    return Gpu(index, f"00000000:{index + 1:02X}:00.0", 96.0, 0, "RTX PRO 6000", 97887, cap)


def test_gpu_facts_of_a_service() -> None:
    facts = HostFacts(torch_cuda="12.8", torch_known=True, torch_arch_list=CU128)
    found = gpu_facts([_gpu(0, "12.0"), _gpu(1, "12.0")], facts, ROOT / "catalogs" / "sglang" / "0.5.9.json")
    assert found is not None
    assert (found.capability, found.sm, found.mixed, found.memory_mib) == ((12, 0), 120, False, 97887)
    assert found.probe("is_sm120_supported") and found.probe("is_blackwell_supported")
    assert not found.probe("is_sm100_supported") and not found.probe("no_such_probe")
    assert gpu_facts([_gpu(0, "12.0"), _gpu(1, "9.0")], facts, None).mixed  # type: ignore[union-attr]


def test_unknown_capability_means_no_facts() -> None:
    assert gpu_facts([_gpu(0, "12.0"), _gpu(1, None)], HostFacts(), None) is None
    assert gpu_facts([], HostFacts(), None) is None
