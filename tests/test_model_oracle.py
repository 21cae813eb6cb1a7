"""The checkpoint facts gen reads (generator/checkpoint/facts.py) against the pinned SGLang's own
code on the same config.json (tests/model_oracle_runner.py), marker sglang.

Each case is a real config.json shape (the example snapshots' published configs, and their
variants) with a TP layout; SGLang decides whether it starts as far as CPU allows (ServerArgs,
ModelConfig, the attention and FP8 layers' shape checks with a stand-in TP group), and gen's
facts must predict the same: the query heads, KV heads (divided or replicated) and vision heads
per attention-TP rank, the FP8 block divisibility per rank, and the derived context length.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from generator.checkpoint.facts import CheckpointFacts
from generator.sglang.architectures import load_architectures
from sglang_env import sglang_python

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "model_oracle_runner.py"
pytestmark = pytest.mark.sglang

DEEPSEEK = json.loads((ROOT / "catalogs/models/deepseek-v3-bf16.json").read_text())["checkpoint"]["config"]
DEEPSEEK_FP8 = {**DEEPSEEK, "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                                    "quant_method": "fp8", "weight_block_size": [128, 128]}}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
         "num_attention_heads": 16, "num_key_value_heads": 8, "num_hidden_layers": 2, "vocab_size": 1000,
         "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}
YARN = {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
YARN_ORIG = {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}}


def _tp(argv: list[str]) -> tuple[int, int, bool]:
    tp = int(argv[argv.index("--tp") + 1]) if "--tp" in argv else 1
    dp = int(argv[argv.index("--dp") + 1]) if "--dp" in argv else 1
    return tp, dp, "--enable-dp-attention" in argv


def gen_predicts(pin: str, config: dict[str, Any], argv: list[str], env: dict[str, str]) -> bool:
    """Whether gen's facts say SGLang starts (the checks the model rules make)."""
    facts = CheckpointFacts({"config": config})
    archs = load_architectures(ROOT / "catalogs" / "sglang" / f"{pin}.json")
    assert archs is not None and archs.transformers_version
    rope = int(archs.transformers_version.split(".")[0]) < 5
    tp, dp, dp_attn = _tp(argv)
    attn_tp = tp // dp if dp_attn else tp
    heads, kv = facts.attention_heads, facts.kv_heads
    if heads and heads % attn_tp:
        return False
    if kv and not facts.uses_mla and (kv % attn_tp if kv >= attn_tp else attn_tp % kv):
        return False
    if facts.vision_heads and facts.vision_heads % attn_tp:
        return False
    block = facts.weight_block_size
    if block and tp > 1:
        for size in (facts.int_of("intermediate_size"), facts.int_of("moe_intermediate_size")):
            if size and ((size // tp) % block[0] or (size // tp) % block[1]):
                return False
    if "--context-length" in argv:
        wanted = int(argv[argv.index("--context-length") + 1])
        if wanted > facts.context_limit(rope) and env.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN") not in ("1", "true"):
            return False
    return True


CASES: list[tuple[str, dict[str, Any], list[str], dict[str, str]]] = [
    ("deepseek-bf16-tp16", DEEPSEEK, ["--tp", "16"], {}),
    ("deepseek-bf16-tp6", DEEPSEEK, ["--tp", "6"], {}),  # 128 heads: refused
    ("deepseek-bf16-tp32-heads-ok", DEEPSEEK, ["--tp", "32"], {}),
    ("deepseek-fp8-tp32", DEEPSEEK_FP8, ["--tp", "32"], {}),  # 18432/32 = 576 (sglang#3345)
    ("deepseek-fp8-tp16", DEEPSEEK_FP8, ["--tp", "16"], {}),
    ("deepseek-fp8-tp8", DEEPSEEK_FP8, ["--tp", "8"], {}),
    ("deepseek-fp8-tp64", DEEPSEEK_FP8, ["--tp", "64"], {}),  # moe 2048/64 = 32
    ("deepseek-context-over", DEEPSEEK, ["--tp", "8", "--context-length", "200000"], {}),
    ("deepseek-context-at-limit", DEEPSEEK, ["--tp", "8", "--context-length", "163840"], {}),
    ("llama-tp3", LLAMA, ["--tp", "3"], {}),
    ("llama-tp4", LLAMA, ["--tp", "4"], {}),
    ("llama-tp16-replicated-kv", LLAMA, ["--tp", "16"], {}),
    ("llama-tp32", LLAMA, ["--tp", "32"], {}),
    ("llama-kv-6-tp4", {**LLAMA, "hidden_size": 192, "num_attention_heads": 12, "num_key_value_heads": 6},
     ["--tp", "4"], {}),  # 12 heads split 4 ways, 6 KV heads neither divide nor replicate by 4
    ("llama-kv-3-tp12", {**LLAMA, "hidden_size": 192, "num_attention_heads": 12, "num_key_value_heads": 3},
     ["--tp", "12"], {}),  # replicated 4 times
    ("llama-kv-5-tp10", {**LLAMA, "hidden_size": 320, "num_attention_heads": 20, "num_key_value_heads": 5},
     ["--tp", "10"], {}),
    ("llama-dp-attention-attn-tp2", LLAMA, ["--tp", "8", "--dp", "4", "--enable-dp-attention"], {}),
    ("llama-context-over", LLAMA, ["--context-length", "16384"], {}),
    ("llama-context-over-allowed", LLAMA, ["--context-length", "16384"],
     {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}),
    ("llama-yarn-factor", YARN, ["--context-length", "32768"], {}),  # 0.5.9 x4; 0.5.23's Transformers 5 not
    ("llama-yarn-factor-over", YARN, ["--context-length", "32769"], {}),
    ("llama-yarn-original", YARN_ORIG, ["--context-length", "16384"], {}),
    ("llama-no-length-key", {k: v for k, v in LLAMA.items() if k != "max_position_embeddings"},
     ["--context-length", "4096"], {}),
]


def _sglang(pin: str) -> dict[str, dict[str, Any]]:
    cases = [{"id": i, "config": c, "argv": a, "env": e} for i, c, a, e in CASES]
    done = subprocess.run([sglang_python(pin), str(RUNNER)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return {r["id"]: r for r in json.loads(done.stdout)}


@pytest.fixture(scope="module", params=["0.5.9", "0.5.23"])
def sglang_says(request: pytest.FixtureRequest) -> tuple[str, dict[str, dict[str, Any]]]:
    return request.param, _sglang(request.param)


def test_gen_predicts_what_sglang_decides(sglang_says: tuple[str, dict[str, dict[str, Any]]]) -> None:
    pin, results = sglang_says
    wrong = []
    for case_id, config, argv, env in CASES:
        real = results[case_id]
        if gen_predicts(pin, config, argv, env) != real["ok"]:
            wrong.append(f"{pin} {case_id}: gen {'accepts' if not real['ok'] else 'refuses'}, SGLang "
                         f"{'accepts' if real['ok'] else 'refuses at ' + str(real['stage']) + ': ' + str(real['error'])}")
    assert not wrong, "\n".join(wrong)
    refused = sum(not r["ok"] for r in results.values())
    assert 0 < refused < len(CASES)  # the corpus has both sides


def test_every_refusal_is_the_check_it_is_about(sglang_says: tuple[str, dict[str, dict[str, Any]]]) -> None:
    _, results = sglang_says
    assert "576 is not divisible by" in results["deepseek-fp8-tp32"]["error"]
    assert "128 is not divisible by 6" in results["deepseek-bf16-tp6"]["error"]
    assert "16 is not divisible by 3" in results["llama-tp3"]["error"]
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" in results["llama-context-over"]["error"]
    assert results["llama-tp16-replicated-kv"]["ok"] and results["llama-context-over-allowed"]["ok"]
