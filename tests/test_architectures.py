"""catalogs/sglang/<pin>.architectures.json: captured from the real SGLang, re-captured
byte-identical (marker sglang), and read by the rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.sglang.architectures import load_architectures, snapshot_architectures_python
from generator.sglang.catalog import CatalogFormatError, known_pins
from sglang_env import sglang_python

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


def test_companion_file_is_no_pin() -> None:
    assert not any(p.endswith(".architectures") for p in known_pins(ROOT))


@pytest.mark.parametrize("text", ['{"format": 1}', "[]"])  # a list was an AttributeError: exit 4
def test_a_broken_file_is_a_catalog_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "0.5.9.architectures.json").write_text(text)
    with pytest.raises(CatalogFormatError, match="re-capture it"):
        load_architectures(tmp_path / "0.5.9.json")
    assert load_architectures(tmp_path / "0.5.23.json") is None


@pytest.mark.sglang
@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_recapture_is_byte_identical(pin: str) -> None:
    text = snapshot_architectures_python(sglang_python(pin))  # stamped like the committed file
    assert text == (ROOT / "catalogs" / "sglang" / f"{pin}.architectures.json").read_bytes()


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_committed_files_name_no_install_path(pin: str) -> None:
    # an import error quoting the venv's own path made the file depend on the cache key it was captured in
    text = (ROOT / "catalogs" / "sglang" / f"{pin}.architectures.json").read_text()
    assert text.count("site-packages") == text.count("<sys.prefix>/lib/python3.11/site-packages")
