"""catalogs/sglang/<pin>.devices.json: captured from the real SGLang (its re-capture and broken
files: tests/test_catalog_companions.py), read by the GPU rules; the probes answered from a
capability the way SGLang does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.sglang.devices import load_devices, parse_devices

ROOT = Path(__file__).resolve().parent.parent
PINS = ("0.5.9", "0.5.23")


def _devices(pin: str):  # type: ignore[no-untyped-def]
    found = load_devices(ROOT / "catalogs" / "sglang" / f"{pin}.json")
    assert found is not None
    return found


@pytest.mark.parametrize("pin", PINS)
def test_committed_files_load_with_what_the_rules_read(pin: str) -> None:
    dev = _devices(pin)
    assert {"is_sm90_supported", "is_sm100_supported", "is_sm120_supported", "is_blackwell_supported",
            "is_hopper_with_cuda_12_3"} <= set(dev.probes)
    assert dev.min_capability("awq") == 75 and dev.min_capability("fp8") == 80 and dev.min_capability("mxfp8") == 100
    assert dev.registry_refusal("fa3", False, (12, 0)) == ("FlashAttention v3 Backend requires SM>=80 and SM<=90. "
                                                           "Please use `--attention-backend flashinfer`.")
    assert dev.registry_refusal("fa3", False, (9, 0)) is None and dev.registry_refusal("fa3", True, (8, 0))
    assert dev.registry_refusal("flashinfer", False, (12, 0)) is None


def test_the_pins_differ_where_sglang_changed() -> None:
    """modelopt_fp4 needed SM100 in 0.5.9 and SM80 in 0.5.23 (its W4A16 Marlin path)."""
    assert _devices("0.5.9").min_capability("modelopt_fp4") == 100
    assert _devices("0.5.23").min_capability("modelopt_fp4") == 80
    assert "is_sm100_or_sm110_supported" not in _devices("0.5.9").probes


@pytest.mark.parametrize(("pin", "cap", "mha", "mla", "hybrid"), [
    ("0.5.9", (9, 0), "fa3", "fa3", "fa3"), ("0.5.9", (10, 0), "trtllm_mha", "trtllm_mla", "triton"),
    ("0.5.9", (12, 0), "flashinfer", "triton", "flashinfer"), ("0.5.9", (8, 0), "flashinfer", "triton", "flashinfer"),
    ("0.5.23", (9, 0), "fa3", "fa3", "fa3"), ("0.5.23", (10, 3), "trtllm_mha", "trtllm_mla", "triton"),
    ("0.5.23", (12, 0), "flashinfer", "triton", "flashinfer")])
def test_the_pins_own_attention_backend_picks(pin: str, cap: tuple[int, int], mha: str, mla: str,
                                              hybrid: str) -> None:
    """What SGLang's prepare_server_args picked, captured per capability (server_args.py's comment:
    fa3 on Hopper, trtllm on SM100/SM103, else flashinfer for MHA and triton for MLA; a hybrid
    linear-attention model takes triton, not trtllm_mha, on SM100)."""
    picks = _devices(pin).picks(cap)
    assert picks["LlamaForCausalLM"]["attention_backend"] == mha
    assert picks["DeepseekV3ForCausalLM"]["attention_backend"] == mla
    assert picks["Qwen3NextForCausalLM"]["attention_backend"] == hybrid


@pytest.mark.parametrize("pin", PINS)
def test_every_pick_passes_the_pins_own_registry(pin: str) -> None:
    """Each automatic choice on each captured capability is one the pin's attention registry lets
    through for that model kind (an SGLang that picked what it then refuses, the class of
    sglang#12178's default FA3 on an RTX PRO 6000, would show here on the next capture)."""
    dev = _devices(pin)
    kinds = {"LlamaForCausalLM": False, "DeepseekV3ForCausalLM": True, "Qwen3NextForCausalLM": False}
    checked = 0
    for cap in ((7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)):
        for arch, pick in dev.picks(cap).items():
            assert "refused" not in pick, (pin, cap, arch, pick)
            assert dev.registry_refusal(str(pick["attention_backend"]), kinds[arch], cap) is None, (pin, cap, arch)
            checked += 1
    assert checked == 33


def test_a_file_captured_before_the_picks_has_none() -> None:
    data = json.loads((ROOT / "catalogs" / "sglang" / "0.5.9.devices.json").read_text())
    del data["auto_choices"]
    assert parse_devices(data).picks((12, 0)) == {}


@pytest.mark.parametrize(("cap", "cuda", "sm90", "sm100", "sm120", "blackwell"), [
    ((9, 0), "12.8", True, False, False, False), ((10, 0), "12.8", False, True, False, True),
    ((12, 0), "12.8", False, False, True, True), ((12, 1), "13.0", False, False, True, True),
    ((12, 0), "12.6", False, False, False, False),  # a torch built before Blackwell: every probe says no
    ((9, 0), "12.1", False, False, False, False), ((12, 0), None, False, False, True, True)])
def test_probes_from_facts(cap: tuple[int, int], cuda: str | None, sm90: bool, sm100: bool, sm120: bool,
                           blackwell: bool) -> None:
    dev = _devices("0.5.23")
    assert [dev.probe(n, cap, cuda) for n in ("is_sm90_supported", "is_sm100_supported", "is_sm120_supported",
                                              "is_blackwell_supported")] == [sm90, sm100, sm120, blackwell]


def test_another_format_is_refused() -> None:
    # the reader and the capture's check (broken files: tests/test_catalog_companions.py)
    with pytest.raises(ValueError):
        parse_devices(json.loads('{"format": 2}'))
