"""generator/plan/model_shape.py: the readers of config.json that SGLang's ModelConfig has, case by case.

tests/test_memory.py runs them on whole real configs; these cases pin down branches the
real configs there do not reach (each was a surviving mutant of bench/mutation.py, plan/,
seed 18). The expected values follow SGLang's own code, named in each test.
"""

from __future__ import annotations

import pytest

from generator.plan.model_shape import _num_kv_heads, _swa_layers, context_length, model_dtype


@pytest.mark.parametrize(("rope", "length"), [
    ({"rope_type": "yarn", "factor": 4.0}, 131072),  # the factor extends the window
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}, 32768),
    ({"rope_type": "llama3", "factor": 8.0}, 32768),  # llama3 scaling does not extend it
    (None, 32768),
])
def test_context_length_times_the_rope_factor(rope: dict[str, object] | None, length: int) -> None:
    """``get_context_length`` (sglang/srt/utils/hf_transformers/common.py, 0.5.23)."""
    assert context_length({"max_position_embeddings": 32768, "rope_scaling": rope}) == length


@pytest.mark.parametrize(("found", "dtype"), [("half", "float16"), ("bf16", "bfloat16"), ("fp16", "float16"),
                                               ("bfloat16", "bfloat16"), ("float32", "float16")])
def test_the_configs_dtype_spellings(found: str, dtype: str) -> None:
    """``_get_and_verify_dtype`` with --dtype auto: the config's dtype by name, float32 served as float16."""
    config = {"model_type": "llama", "torch_dtype": found}
    assert model_dtype(config, config, None) == dtype


def test_new_falcon_reads_its_kv_heads_despite_multi_query() -> None:
    """``get_total_num_kv_heads``: multi_query means one KV head, except on falcon's new decoder."""
    new = {"model_type": "falcon", "new_decoder_architecture": True, "multi_query": True,
           "num_kv_heads": 8, "num_attention_heads": 128}
    assert _num_kv_heads(new, new) == 8
    old = dict(new, new_decoder_architecture=False)
    assert _num_kv_heads(old, old) == 1


def test_mimo_splits_its_layers_by_the_hybrid_pattern() -> None:
    """``get_hybrid_layer_ids`` for MiMoV2Flash: 1 is a sliding-window layer, 0 a full-attention one."""
    text = {"hybrid_layer_pattern": [0, 1, 1, 1, 0, 1]}
    assert _swa_layers("MiMoV2FlashForCausalLM", text, 6) == ((1, 2, 3, 5), (0, 4))
