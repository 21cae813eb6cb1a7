"""gen's memory mirror against SGLang's own code in the pinned venvs (marker ``sglang``).

``tests/memory_probe.py`` runs in each pin's real SGLang: ``prepare_server_args`` with the
GPU capacity patched in (what nvidia-smi would report), the ModelConfig it builds from a
real config.json, and the pin's KV cell-size function. The same inputs go through
generator/plan/memory_defaults.py, model_shape.py and memory.py; every field must agree.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from sglang_env import sglang_python

from generator.plan.memory import Flags, cell_size, dsa_kv_cache_dtype
from generator.plan.memory_defaults import DefaultInputs, resolve_defaults
from generator.plan.model_shape import model_shape

pytestmark = pytest.mark.sglang

PINS = ("0.5.9", "0.5.23")
PROBE = Path(__file__).parent / "memory_probe.py"
CONFIGS = json.loads((Path(__file__).parent / "data" / "memory_configs.json").read_text())
MODELS = sorted(k for k in CONFIGS if not k.startswith("_"))
# nvidia-smi memory.total of real parts, MiB: RTX 4090, L40S, H100 SXM, RTX PRO 6000, H200, B200.
GPUS = (24564, 46068, 81559, 97887, 143771, 183359)
FLAG_SETS: tuple[dict[str, Any], ...] = (
    {"tp": 1},
    {"tp": 2},
    {"tp": 4},
    {"tp": 8},
    {"tp": 4, "chunked_prefill_size": 4096, "cuda_graph_max_bs": 96},
    {"tp": 8, "dp": 8, "dp_attention": True},
    {"tp": 4, "dp": 2, "dp_attention": True, "cuda_graph_max_bs": 128},
    {"tp": 8, "max_running_requests": 64},
    {"tp": 4, "disable_cuda_graph": True},
    {"tp": 2, "speculative_algorithm": "NGRAM"},
)
ARGV = {"tp": "--tp", "dp": "--dp", "chunked_prefill_size": "--chunked-prefill-size",
        "cuda_graph_max_bs": "--cuda-graph-max-bs", "max_running_requests": "--max-running-requests",
        "speculative_algorithm": "--speculative-algorithm", "kv_cache_dtype": "--kv-cache-dtype"}
SWITCHES = {"dp_attention": "--enable-dp-attention", "disable_cuda_graph": "--disable-cuda-graph"}


def _argv(flags: dict[str, Any], pin: str) -> list[str]:
    words = ["--trust-remote-code"]
    for key, value in flags.items():
        if key in SWITCHES:
            words.append(SWITCHES[key])
        elif key == "cuda_graph_max_bs" and pin != "0.5.9":
            words += ["--cuda-graph-max-bs-decode", str(value)]  # 0.5.23 splits it by phase
        else:
            words += [ARGV[key], str(value)]
    return words


def _cases() -> list[dict[str, Any]]:
    """Every model with two flag sets on two GPUs, and every flag set on every GPU with one model each."""
    cases = []
    for i, model in enumerate(MODELS):
        for flags in (FLAG_SETS[i % len(FLAG_SETS)], FLAG_SETS[(i + 3) % len(FLAG_SETS)]):
            for mib in (GPUS[i % len(GPUS)], GPUS[(i + 2) % len(GPUS)]):
                cases.append({"model": model, "flags": flags, "mib": mib})
    for (f, flags), mib in itertools.product(enumerate(FLAG_SETS), GPUS):
        cases.append({"model": MODELS[f % len(MODELS)], "flags": flags, "mib": mib})
    return cases


CASES = _cases()
# SGLang's own cell-size function refuses this published config on 0.5.9: transformers
# 4.57.1's MistralConfig carries head_dim=None, ModelConfig takes v_head_dim from it before
# head_dim is filled in, and get_cell_size_per_token adds int + None (sglang#7788's failure).
# The real 0.5.9 server fails the same way at KV sizing; gen's mirror sizes it as 0.5.23 does.
SGLANG_CELL_REFUSES = {("0.5.9", "mistralai/Mistral-7B-Instruct-v0.3")}


def _for_sglang(config: dict[str, Any]) -> dict[str, Any]:
    """The config SGLang is given on CPU: MXFP4's quantization method is registered on CUDA only
    ("Unknown quantization method: mxfp4" otherwise); it changes weights, not the KV shape or defaults."""
    quant = config.get("quantization_config") or {}
    if quant.get("quant_method") == "mxfp4":
        return {k: v for k, v in config.items() if k != "quantization_config"}
    return config


@lru_cache(maxsize=None)
def _answers(pin: str) -> tuple[dict[str, Any], ...]:
    payload = []
    for case in CASES:
        config, flags = CONFIGS[case["model"]], case["flags"]
        shape = model_shape(config, pin)
        attn_tp = Flags(tp=flags.get("tp", 1), dp=flags.get("dp", 1), dp_attention=flags.get("dp_attention", False)).attn_tp
        payload.append({"config": _for_sglang(config), "argv": _argv(flags, pin), "mib": case["mib"], "attn_tp": attn_tp,
                        "num_layers": shape.num_layers})
    proc = subprocess.run([sglang_python(pin), str(PROBE)], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=1800, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return tuple(json.loads(proc.stdout.split("=== memory probe ===", 1)[1]))


def _ids() -> list[str]:
    return [f"{c['model'].split('/')[-1]}-{c['mib']}-" + "-".join(f"{k}{v}" for k, v in c["flags"].items())
            for c in CASES]


@pytest.mark.parametrize("pin", PINS)
@pytest.mark.parametrize("index", range(len(CASES)), ids=_ids())
def test_defaults_match_sglang(pin: str, index: int) -> None:
    """mem_fraction_static, chunked_prefill_size and the CUDA graph batch size SGLang resolves."""
    case, answer = CASES[index], _answers(pin)[index]
    assert "error" not in answer, answer.get("error")
    flags, shape = case["flags"], model_shape(CONFIGS[case["model"]], pin)
    mine = resolve_defaults(pin, DefaultInputs(
        gpu_memory_mib=case["mib"], flags=Flags(
            tp=flags.get("tp", 1), dp=flags.get("dp", 1), dp_attention=flags.get("dp_attention", False),
            chunked_prefill_size=flags.get("chunked_prefill_size"), cuda_graph_max_bs=flags.get("cuda_graph_max_bs"),
            disable_cuda_graph=flags.get("disable_cuda_graph", False),
            speculative_algorithm=flags.get("speculative_algorithm"),
            max_running_requests=flags.get("max_running_requests")),
        mla=shape.mla, multimodal=shape.multimodal, vision_layers=shape.vision_layers,
        vision_hidden=shape.vision_hidden))
    server = answer["server"]
    assert mine.mem_fraction_static == pytest.approx(server["mem_fraction_static"], abs=1e-9)
    assert mine.chunked_prefill_size == server["chunked_prefill_size"]
    if not flags.get("speculative_algorithm"):  # speculative decoding re-caps the graph size later
        assert mine.cuda_graph_max_bs == server["cuda_graph_max_bs"]


@pytest.mark.parametrize("pin", PINS)
@pytest.mark.parametrize("model", MODELS)
def test_model_shape_matches_sglang(pin: str, model: str) -> None:
    """What ModelConfig derives from the real config.json: heads, head dims, MLA ranks, context, layers."""
    index = next(i for i, c in enumerate(CASES) if c["model"] == model)
    answer = _answers(pin)[index]
    assert "error" not in answer, answer.get("error")
    sglang, mine = answer["model"], model_shape(CONFIGS[model], pin)
    assert mine.mla == sglang["mla"]
    assert mine.num_kv_heads == sglang["num_kv_heads"]
    assert mine.num_layers == sglang["num_hidden_layers"]
    assert mine.context_len == sglang["context_len"]
    assert mine.nextn_layers == sglang["num_nextn_predict_layers"]
    if mine.mla:
        assert (mine.kv_lora_rank, mine.qk_rope_head_dim) == (sglang["kv_lora_rank"], sglang["qk_rope_head_dim"])
        assert mine.index_head_dim == sglang["index_head_dim"]
    elif (pin, model) in SGLANG_CELL_REFUSES:  # SGLang's v_head_dim is the None it then adds
        assert (mine.head_dim, sglang["v_head_dim"]) == (sglang["head_dim"], None)
    else:
        assert (mine.head_dim, mine.v_head_dim) == (sglang["head_dim"], sglang["v_head_dim"])
    assert (mine.swa_layers is not None) == sglang["is_hybrid_swa"]
    if mine.swa_layers is not None:
        assert list(mine.swa_layers) == sglang["swa_attention_layer_ids"]
        assert list(mine.swa_full_layers or ()) == sglang["full_attention_layer_ids"]


def _cell_cases() -> list[tuple[str, int]]:
    """(pin, case) pairs whose pool the pin sizes with the cell function the probe calls.

    0.5.23 sizes hybrid sliding-window models in HybridSWAPoolConfigurator instead, whose
    split is tested with the logs (tests/test_memory_logs.py).
    """
    return [(pin, i) for pin in PINS for i, c in enumerate(CASES)
            if pin == "0.5.9" or model_shape(CONFIGS[c["model"]], pin).swa_layers is None]


@pytest.mark.parametrize(("pin", "index"), _cell_cases())
def test_cell_size_matches_sglang(pin: str, index: int) -> None:
    """KV bytes per token per rank: the pin's own sizing function on the same ModelConfig."""
    case, answer = CASES[index], _answers(pin)[index]
    assert "error" not in answer, answer.get("error")
    if (pin, case["model"]) in SGLANG_CELL_REFUSES:
        assert "TypeError" in answer.get("cell_error", ""), answer
        return
    assert "cell_error" not in answer, answer.get("cell_error")
    flags = case["flags"]
    shape = model_shape(CONFIGS[case["model"]], pin)
    mine = cell_size(pin, shape, Flags(tp=flags.get("tp", 1), dp=flags.get("dp", 1),
                                       dp_attention=flags.get("dp_attention", False)), shape.num_layers)
    assert mine == answer["cell"]


# DeepSeek's DSA models at --kv-cache-dtype auto, by compute capability: SGLang's own pick.
DSA_MODELS = sorted(m for m in MODELS if model_shape(CONFIGS[m], "0.5.9").index_head_dim is not None)
CAPABILITIES = ((8, 0), (9, 0), (10, 0), (12, 0))


@lru_cache(maxsize=None)
def _dtype_answers(pin: str) -> tuple[dict[str, Any], ...]:
    payload = [{"config": _for_sglang(CONFIGS[m]), "argv": _argv({"tp": 8}, pin), "mib": 183359, "capability": cap}
               for m in DSA_MODELS for cap in CAPABILITIES]
    proc = subprocess.run([sglang_python(pin), str(PROBE)], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=1800, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return tuple(json.loads(proc.stdout.split("=== memory probe ===", 1)[1]))


@pytest.mark.parametrize("pin", PINS)
def test_dsa_kv_cache_dtype_at_auto_matches_sglang(pin: str) -> None:
    """gen's ``dsa_kv_cache_dtype`` is the dtype the pin's model-specific adjustments choose."""
    assert DSA_MODELS
    answers = _dtype_answers(pin)
    for (model, cap), answer in zip(itertools.product(DSA_MODELS, CAPABILITIES), answers):
        assert "error" not in answer, (model, cap, answer.get("error"))
        config = CONFIGS[model]
        mine = dsa_kv_cache_dtype(pin, config, model_shape(config, pin), Flags(tp=8), cap)
        assert mine == answer["server"]["kv_cache_dtype"], (model, cap)
