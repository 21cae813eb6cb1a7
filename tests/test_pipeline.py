"""catalogs/sglang/<pin>.pipeline.json: which architectures split their layers across pipeline
stages, captured from the real SGLang's source (re-captured byte-identical and checked against
the imported classes, marker sglang), and the probe's reading of source it is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.sglang.catalog import CatalogFormatError, known_pins
from generator.sglang.pipeline import PROBE, load_pipeline, snapshot_pipeline_python
from sglang_env import sglang_python

ROOT = Path(__file__).resolve().parent.parent
PINS = ("0.5.9", "0.5.23")


@pytest.mark.parametrize("pin", PINS)
def test_committed_files_load(pin: str) -> None:
    found = load_pipeline(ROOT / "catalogs" / "sglang" / f"{pin}.json")
    assert found is not None
    # LlamaForCausalLM exposes its model's start_layer/end_layer (properties): a stage's layers.
    assert found.splits_layers("LlamaForCausalLM") is True and found.supports_pp("LlamaForCausalLM") is True
    # The Llava wrapper takes pp_proxy_tensors but has no start_layer: a pool for all layers
    # (sgl-project/sglang#14254's log); 0.5.9's Mistral3 forwards through __getattr__ to it.
    for arch in ("LlavaForConditionalGeneration", "Mistral3ForConditionalGeneration"):
        assert found.splits_layers(arch) is False and found.supports_pp(arch) is True, arch
    # GPT-2 has no pipeline support at all: SGLang asserts at start with --pp-size above 1.
    assert found.supports_pp("GPT2LMHeadModel") is False
    assert found.splits_layers("NoSuchForCausalLM") is None


def test_the_pins_differ_where_their_source_does() -> None:
    """0.5.9's Qwen3-VL class has no start_layer; 0.5.23's has (its source gained the properties)."""
    old = load_pipeline(ROOT / "catalogs" / "sglang" / "0.5.9.json")
    new = load_pipeline(ROOT / "catalogs" / "sglang" / "0.5.23.json")
    assert old is not None and new is not None
    assert old.splits_layers("Qwen3VLForConditionalGeneration") is False
    assert new.splits_layers("Qwen3VLForConditionalGeneration") is True


def test_companion_file_is_no_pin() -> None:
    assert not any(p.endswith(".pipeline") for p in known_pins(ROOT))


@pytest.mark.parametrize("text", ['{"format": 1}', '{"format": 2, "architectures": {}}',
                                  '{"format": 1, "architectures": {"A": {"layers": "yes", "pp_proxy_tensors": true}}}'])
def test_a_broken_file_is_a_catalog_error(tmp_path: Path, text: str) -> None:
    (tmp_path / "0.5.9.pipeline.json").write_text(text)
    with pytest.raises(CatalogFormatError, match="re-capture it"):
        load_pipeline(tmp_path / "0.5.9.json")
    assert load_pipeline(tmp_path / "0.5.23.json") is None


FAKE_MODELS = {
    "base.py": '''
import torch.nn as nn
from sglang.srt.utils import make_layers

class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers, self.start_layer, self.end_layer = make_layers()

class Split(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Inner()

    @property
    def start_layer(self):
        return self.model.start_layer

    @property
    def end_layer(self):
        return self.model.end_layer

    def forward(self, input_ids, positions, forward_batch, pp_proxy_tensors=None):
        pass

class Plain(nn.Module):
    def forward(self, input_ids, positions, forward_batch):
        pass

EntryClass = [Split, Plain]
''',
    "child.py": '''
from sglang.srt.models.base import Split as Renamed

class Child(Renamed):
    pass

class Wrapper(nn.Module):
    def __init__(self):
        self.model = Renamed()

    def forward(self, input_ids, positions, forward_batch, pp_proxy_tensors=None):
        pass

EntryClass = [Child, Wrapper]
''',
    "forwarding.py": '''
class Forwarding:
    def __init__(self, **kwargs):
        from .base import Split
        self.inner = Split(**kwargs)

    def __getattr__(self, name):
        return getattr(self.inner, name)

class Lost:
    def __init__(self):
        self.inner = make()

    def __getattr__(self, name):
        return getattr(self.inner, name)

EntryClass = [Forwarding, Lost]
''',
}


def test_the_probe_follows_bases_imports_and_forwarding(tmp_path: Path) -> None:
    """The probe on a package of its own: a property, an inherited attribute through an aliased
    import, a wrapper holding a splitting model (not itself splitting), a __getattr__ forwarding
    to a lazily imported class, and one it cannot follow (unresolved, not guessed)."""
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for folder in (tmp_path / "sglang", tmp_path / "sglang" / "srt", models):
        (folder / "__init__.py").write_text("")
    for name, text in FAKE_MODELS.items():
        (models / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(tmp_path)}
    run = subprocess.run([sys.executable, "-"], input=PROBE.read_bytes(), capture_output=True,
                         env=env, cwd=tmp_path, timeout=60, check=True)
    doc = json.loads(run.stdout)
    assert doc["architectures"] == {
        "Split": {"layers": True, "pp_proxy_tensors": True},
        "Plain": {"layers": False, "pp_proxy_tensors": False},
        "Child": {"layers": True, "pp_proxy_tensors": True},
        "Wrapper": {"layers": False, "pp_proxy_tensors": True},
        "Forwarding": {"layers": True, "pp_proxy_tensors": True},
    }
    assert set(doc["unresolved"]) == {"Lost"}


@pytest.mark.sglang
@pytest.mark.parametrize("pin", PINS)
def test_recapture_is_byte_identical(pin: str) -> None:
    text = snapshot_pipeline_python(sglang_python(pin))  # stamped like the committed file
    assert text == (ROOT / "catalogs" / "sglang" / f"{pin}.pipeline.json").read_bytes()


@pytest.mark.sglang
@pytest.mark.parametrize(("pin", "least"), [("0.5.9", 1), ("0.5.23", 250)])
def test_the_capture_is_what_the_imported_classes_say(pin: str, least: int) -> None:
    """Every registry class the CPU venv can import (0.5.23: nearly all; 0.5.9: its models
    import sgl_kernel, so one) answers as the source reading did, by Python's own MRO and
    inspect.signature (SGLang's support_pp test)."""
    run = subprocess.run([sglang_python(pin), str(ROOT / "tests" / "pipeline_runtime_check.py"),
                          str(ROOT / "catalogs" / "sglang" / f"{pin}.pipeline.json")],
                         capture_output=True, timeout=540, check=True, cwd=ROOT)
    found = json.loads(run.stdout)
    assert found["disagree"] == []
    assert len(found["agree"]) >= least


@pytest.mark.sglang
@pytest.mark.parametrize("pin", PINS)
def test_the_stage_ranges_are_sglangs_own_split(pin: str) -> None:
    """generator.plan.memory.stage_ranges is the pin's get_pp_indices, every rank, for layer
    counts 1-128 and pipeline sizes up to 8 (without SGLANG_PP_LAYER_PARTITION)."""
    from generator.plan.memory import stage_ranges

    code = ("import json, os\nos.environ.pop('SGLANG_PP_LAYER_PARTITION', None)\n"
            "from sglang.srt.distributed.utils import get_pp_indices\n"
            "print(json.dumps({f'{n},{p}': [list(get_pp_indices(n, r, p)) for r in range(p)] "
            "for n in range(1, 129) for p in range(1, 9) if n >= p}))")
    run = subprocess.run([sglang_python(pin), "-c", code], capture_output=True, timeout=300, check=True, cwd=ROOT)
    theirs = json.loads(run.stdout.splitlines()[-1])
    assert len(theirs) > 900
    assert {key: [list(r) for r in stage_ranges(*map(int, key.split(",")))] for key in theirs} == theirs
