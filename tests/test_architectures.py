"""catalogs/sglang/<pin>.architectures.json: captured from the real SGLang and read by the rules
(its re-capture and broken files: tests/test_catalog_companions.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.sglang.architectures import load_architectures

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_committed_files_load(pin: str) -> None:
    found = load_architectures(ROOT / "catalogs" / "sglang" / f"{pin}.json")
    assert found is not None
    assert {"DeepseekV3ForCausalLM", "LlamaForCausalLMEagle3", "Qwen3_5MoeForConditionalGeneration"} <= found.sglang
    assert "LlamaForCausalLM" in found.transformers and found.transformers_version
    # SGLang's Transformers fallback asks the class itself (is_backend_compatible()): the probe
    # recorded the answer per class; BLOOM's and MPT's are False, Llama's and GPT-NeoX's True.
    assert found.backend_compatible("BloomForCausalLM") is False and found.backend_compatible("MptForCausalLM") is False
    assert found.backend_compatible("LlamaForCausalLM") and found.backend_compatible("GPTNeoXForCausalLM")


def test_without_the_compatibility_capture_gen_does_not_guess(tmp_path: Path) -> None:
    (tmp_path / "0.5.9.architectures.json").write_text(
        '{"format": 1, "registry": {}, "static": {}, "transformers": {"version": "4", "classes": ["BloomForCausalLM"]}}')
    found = load_architectures(tmp_path / "0.5.9.json")
    assert found is not None and found.backend_compatible("BloomForCausalLM") is None


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_committed_files_name_no_install_path(pin: str) -> None:
    # an import error quoting the venv's own path made the file depend on the cache key it was captured in
    text = (ROOT / "catalogs" / "sglang" / f"{pin}.architectures.json").read_text()
    assert text.count("site-packages") == text.count("<sys.prefix>/lib/python3.11/site-packages")
