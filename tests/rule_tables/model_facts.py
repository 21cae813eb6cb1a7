"""Rows of the model rules (M codes): each names a checkpoint config.json beside the argv.

``MODEL_ROWS``: ``(pin, argv words, environment, config.json, expected codes in rules.yaml
order)``; tests/test_rules.py evaluates them with ``Settings.model`` made from the config (the
facts a snapshot carries). Every row shape here is also run against the pinned SGLang's own
code by tests/test_model_oracle.py.
"""

from __future__ import annotations

from typing import Any

ModelRow = tuple[str, list[str], dict[str, str], dict[str, Any], list[str]]

LLAMA: dict[str, Any] = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
                         "intermediate_size": 512, "num_attention_heads": 16, "num_key_value_heads": 8,
                         "num_hidden_layers": 2, "vocab_size": 1000, "max_position_embeddings": 8192}
MLA: dict[str, Any] = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
                       "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256,
                       "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512,
                       "max_position_embeddings": 163840,
                       "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096}}
FP8 = {**MLA, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}
VL = {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
      "text_config": {"num_hidden_layers": 48, "max_position_embeddings": 262144},
      "vision_config": {"depth": 27, "hidden_size": 1152, "num_heads": 16}}
YARN = {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
ALLOW = {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}

MODEL_ROWS: list[ModelRow] = []
# 0.5.23 asserts on CPU that a hybrid (Mamba) model's default extra_buffer cache needs a GPU
# platform; no_buffer (which refuses the overlap schedule) keeps the VL rows about their heads here.
NO_BUFFER = {"0.5.9": [], "0.5.23": ["--mamba-radix-cache-strategy", "no_buffer", "--disable-overlap-schedule"]}
for pin, tp in (("0.5.9", "--tensor-parallel-size"), ("0.5.23", "--tp-size")):
    MODEL_ROWS += [
        # tp-attention-heads (M030)
        (pin, [tp, "4"], {}, LLAMA, []),
        (pin, [tp, "3"], {}, LLAMA, ["M030"]),  # 16 query heads
        (pin, [tp, "16"], {}, LLAMA, []),  # 8 KV heads replicated twice
        (pin, [tp, "32"], {}, LLAMA, ["M030"]),
        (pin, [tp, "4"], {}, {**LLAMA, "hidden_size": 192, "num_attention_heads": 12, "num_key_value_heads": 6}, ["M030"]),  # KV 6 by 4
        (pin, [tp, "12"], {}, {**LLAMA, "hidden_size": 192, "num_attention_heads": 12, "num_key_value_heads": 3}, []),
        (pin, [tp, "6", *NO_BUFFER[pin]], {}, VL, ["M030"]),  # gpustack#4769: 16 vision heads
        (pin, [tp, "4", *NO_BUFFER[pin]], {}, VL, []),
        (pin, [tp, "16"], {}, MLA, []),  # MLA: only the 128 query heads split
        (pin, [tp, "6"], {}, MLA, ["M030"]),
        # fp8-block-per-rank (M031)
        (pin, [tp, "32"], {}, FP8, ["M031"]),  # 18432 / 32 = 576 (sglang#3345)
        (pin, [tp, "16"], {}, FP8, []),
        (pin, [tp, "32"], {}, MLA, []),  # the same width in BF16
        # context-length-limit (M032)
        (pin, ["--context-length", "8192"], {}, LLAMA, []),
        (pin, ["--context-length", "8193"], {}, LLAMA, ["M032"]),
        (pin, ["--context-length", "16384"], ALLOW, LLAMA, []),
        (pin, ["--context-length", "200000"], {}, MLA, ["M032"]),  # 163840 (yarn with an original length: x1)
        (pin, ["--context-length", "163840"], {}, MLA, []),
    ]
# The rope factor: 0.5.9's Transformers 4 applies it, 0.5.23's Transformers 5 does not.
MODEL_ROWS += [("0.5.9", ["--context-length", "32768"], {}, YARN, []),
               ("0.5.23", ["--context-length", "32768"], {}, YARN, ["M032"])]
