"""What SGLang's ModelConfig derives from a checkpoint's config.json, per pin, for memory sizing.

:func:`model_shape` mirrors the parts of ``sglang/srt/configs/model_config.py`` that the KV
pool sizing reads (``_derive_model_shapes``, ``get_total_num_kv_heads``,
``_derive_hybrid_model``, ``get_context_length``, ``_get_and_verify_dtype``) and the
linear-attention state shapes of ``configs/mamba_utils.py`` and ``configs/qwen3_next.py``.
The input is the plain config.json mapping; SGLang reads the same keys through the
transformers config class, so a key transformers fills in by default (absent from the
file) is the one place a plain mirror can differ. ``tests/test_memory_oracle.py`` builds
SGLang's own ModelConfig from the same files in the pinned venvs and compares.

Architectures SGLang lists by name (MLA, hybrid sliding-window, DSA indexer) are per-pin
data below, copied from each pin's source; every other architecture takes SGLang's
generic multi-head path, as SGLang does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from generator.errors import GenError

# `_derive_model_shapes`: architectures whose KV cache is MLA latent (kv_lora_rank + rope).
_MLA_COMMON = ("DeepseekV2ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM",
               "DeepseekV3ForCausalLMNextN", "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM",
               "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "DotsVLMForCausalLM",
               "MistralLarge3ForCausalLM", "MistralLarge3ForCausalLMEagle",
               "KimiK25ForConditionalGeneration", "MiniCPM3ForCausalLM", "KimiVLForConditionalGeneration",
               "KimiLinearForCausalLM", "BailingMoeV2_5ForCausalLM")
MLA_ARCHITECTURES: dict[str, frozenset[str]] = {
    "0.5.9": frozenset(_MLA_COMMON + ("PixtralForConditionalGeneration", "BailingMoeForCausalLMNextN")),
    "0.5.23": frozenset(_MLA_COMMON + (
        "Glm4MoeLiteForCausalLMNextN", "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGeneration",
        "Glm5NextForConditionalGenerationNextN", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
        "Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN", "Eagle3DeepseekV2ForCausalLM",
        "GigaChat35ForCausalLM", "GigaChat35ForCausalLMNextN")),
}
# 0.5.23 counts Pixtral as MLA only when its text config has a latent rank.
_MLA_IF_LATENT = frozenset({"PixtralForConditionalGeneration"})

# `is_deepseek_nsa` (0.5.9) / `is_deepseek_dsa` (0.5.23): MLA with a sparse-attention indexer
# (when the config has index_topk).
DSA_ARCHITECTURES: dict[str, frozenset[str]] = {
    "0.5.9": frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
                        "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM"}),
    "0.5.23": frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
                         "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
                         "GlmMoeDsaForCausalLMNextN", "Glm5NextForConditionalGenerationNextN",
                         "Glm5NextForConditionalGeneration", "LongcatFlashForCausalLM",
                         "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN",
                         "HYV4ForCausalLM", "HYV4ForCausalLMNextN"}),
}

# `is_hybrid_swa_model`: two KV pools, full and sliding-window layers (layer ids below).
HYBRID_SWA_ARCHITECTURES: dict[str, frozenset[str]] = {
    "0.5.9": frozenset({"Llama4ForConditionalGeneration", "GptOssForCausalLM", "MiMoV2FlashForCausalLM",
                        "Step3p5ForCausalLM"}),
    "0.5.23": frozenset({"Llama4ForConditionalGeneration", "GptOssForCausalLM", "MiMoV2FlashForCausalLM",
                         "Step3p5ForCausalLM", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"}),
}

# ModelConfig's ``mm_disabled_models``: multimodal archs whose vision tower SGLang leaves off
# unless --enable-multimodal is given (no VLM adjustment of the default fraction then).
MM_DISABLED_ARCHITECTURES: dict[str, frozenset[str]] = {
    "0.5.9": frozenset({"Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration",
                        "Step3VLForConditionalGeneration"}),
    "0.5.23": frozenset({"Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration",
                         "Step3VLForConditionalGeneration", "InklingForConditionalGeneration"}),
}

# Hybrid linear-attention (GDN) models whose recurrent state is taken before the KV pool
# (`hybrid_gdn_config`: Qwen3NextConfig, Qwen3_5Config, Qwen3_5MoeConfig by model_type).
GDN_MODEL_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"})

# `get_context_length` (utils/hf_transformers_utils.py): the first key present wins.
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                       "max_position_embeddings")

# Bytes per element of the torch dtypes config.json and --dtype name.
DTYPE_BYTES = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "bf16": 2, "fp16": 2}


class ShapeError(GenError, ValueError):
    """config.json lacks a field SGLang needs for sizing (the message names it)."""


@dataclass(frozen=True)
class LinearState:
    """The recurrent state of a hybrid linear-attention model, per request and rank (mamba2 shapes)."""

    layers: int
    conv_elements: int  # per layer and rank (conv_dim / tp x (conv_kernel - 1))
    ssm_elements: int  # per layer and rank (heads / tp x head_dim x state_size)

    def bytes_per_request(self, conv_bytes: int = 2, ssm_bytes: int = 4) -> int:
        """``mamba_cache_per_req``: conv state in bf16, temporal state in fp32 unless set otherwise."""
        return (self.conv_elements * conv_bytes + self.ssm_elements * ssm_bytes) * self.layers


@dataclass(frozen=True)
class ModelShape:
    """The facts of one model that SGLang's KV pool sizing reads (see module docstring)."""

    architecture: str
    model_type: str
    mla: bool
    num_layers: int  # num_hidden_layers of the text config
    num_attention_heads: int
    num_kv_heads: int  # total, before tensor parallelism
    head_dim: int
    v_head_dim: int
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    q_lora_rank: int = 0
    index_head_dim: int | None = None  # DSA / NSA indexer
    index_kpool: int = 1
    index_shared_layers: frozenset[int] = frozenset()  # 0.5.23: DSA layers reusing the previous top-k
    full_attention_layers: tuple[int, ...] | None = None  # hybrid linear attention: layers with KV
    linear_state_config: Mapping[str, Any] | None = None  # the text config, for per-tp state shapes
    swa_layers: tuple[int, ...] | None = None  # hybrid sliding window
    swa_full_layers: tuple[int, ...] | None = None
    swa_num_kv_heads: int | None = None
    swa_head_dim: int = 0
    swa_v_head_dim: int = 0
    sliding_window: int | None = None
    context_len: int = 2048
    dtype_bytes: int = 2
    dtype: str = "bfloat16"
    kv_fp8_from_checkpoint: bool = False  # quantization_config.kv_cache_quant_algo == "FP8"
    nextn_layers: int | None = None  # num_nextn_predict_layers, as SGLang's ModelConfig reads it
    mtp_layers: int = 0  # decoder layers of the checkpoint's own MTP head (num_nextn_predict_layers or mtp_num_hidden_layers)
    multimodal: bool = False
    vision_layers: int | None = None
    vision_hidden: int | None = None
    hidden_size: int = 0
    vocab_size: int = 0
    intermediate_size: int = 0
    linear_bytes: float = 2  # bytes per parameter of the linear layers (1 for an FP8 checkpoint)

    def kv_heads_per_rank(self, attn_tp: int) -> int:
        """``get_num_kv_heads``: KV heads per attention-TP rank, replicated to one when tp > heads."""
        return max(1, self.num_kv_heads // attn_tp)

    def swa_kv_heads_per_rank(self, attn_tp: int) -> int:
        """``get_swa_num_kv_heads``."""
        heads = self.swa_num_kv_heads if self.swa_num_kv_heads is not None else self.num_kv_heads
        return max(1, heads // attn_tp)

    def linear_state(self, attn_tp: int) -> LinearState | None:
        """The GDN state per request on one rank (``Mamba2StateShape.create``), or None."""
        c = self.linear_state_config
        if c is None or self.full_attention_layers is None:
            return None
        value_dim, value_heads = int(c["linear_value_head_dim"]), int(c["linear_num_value_heads"])
        key_dim, groups = int(c["linear_key_head_dim"]), int(c["linear_num_key_heads"])
        kernel = int(c["linear_conv_kernel_dim"])
        if groups % attn_tp:
            groups += attn_tp - groups  # extra_groups_for_head_shards: groups replicated up to tp
        conv_dim = value_dim * value_heads + 2 * groups * key_dim
        if conv_dim % attn_tp or value_heads % attn_tp:
            raise ShapeError(f"linear attention dimensions ({conv_dim}, {value_heads} heads) do not divide "
                             f"by the attention TP size {attn_tp}")
        layers = self.num_layers - len(self.full_attention_layers)
        return LinearState(layers, conv_dim // attn_tp * (kernel - 1), value_heads // attn_tp * value_dim * key_dim)


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """``get_hf_text_config``: the language model's own config inside a multimodal one."""
    arch = (config.get("architectures") or [""])[0]
    if isinstance(arch, str) and arch.startswith("Llava") and arch.endswith("ForCausalLM"):
        return config
    for key in ("text_config", "llm_config", "language_config"):
        sub = config.get(key)
        if isinstance(sub, Mapping):
            return sub
    thinker = config.get("thinker_config")
    if isinstance(thinker, Mapping):
        sub = thinker.get("text_config")
        return sub if isinstance(sub, Mapping) else thinker
    return config


def _int(cfg: Mapping[str, Any], key: str) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ShapeError(f"config.json has no number '{key}' (SGLang reads it to size the KV cache)")
    return int(value)


def context_length(text: Mapping[str, Any]) -> int:
    """``get_context_length``: the first length key, times a rope factor that extends it."""
    rope = text.get("rope_scaling") or text.get("rope_parameters")
    factor: float = 1
    if isinstance(rope, Mapping) and rope:
        factor = rope.get("factor", 1) or 1
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1
    for key in CONTEXT_LENGTH_KEYS:
        value = text.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(factor * value)
    return 2048


def model_dtype(config: Mapping[str, Any], text: Mapping[str, Any], flag: str | None) -> str:
    """``_get_and_verify_dtype``: --dtype, else the config's, with float32 served as float16."""
    if flag and flag != "auto":
        return {"half": "float16", "float": "float32", "bf16": "bfloat16", "fp16": "float16"}.get(flag, flag)
    found = text.get("dtype") or text.get("torch_dtype") or config.get("dtype") or config.get("torch_dtype")
    name = found if isinstance(found, str) and found in DTYPE_BYTES else "float32"
    if name in ("float32", "float"):
        model_type = str(text.get("model_type") or config.get("model_type") or "")
        return "bfloat16" if model_type.startswith("gemma") else "float16"
    return {"half": "float16", "bf16": "bfloat16", "fp16": "float16"}.get(name, name)


def _num_kv_heads(config: Mapping[str, Any], text: Mapping[str, Any]) -> int:
    """``get_total_num_kv_heads``."""
    model_type = config.get("model_type")
    falcon_new = model_type in ("falcon", "RefinedWeb", "RefinedWebModel") and config.get("new_decoder_architecture")
    if not falcon_new and text.get("multi_query"):
        return 1
    attn = config.get("attn_config")
    if model_type in ("mpt", "dbrx") and isinstance(attn, Mapping):
        return int(attn.get("kv_n_heads", config.get("num_attention_heads")))
    for key in ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", "num_attention_groups"):
        value = text.get(key)
        if value is not None:
            return int(value)
    return _int(text, "num_attention_heads")


def _swa_layers(arch: str, text: Mapping[str, Any], layers: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``get_hybrid_layer_ids``: (sliding-window layers, full-attention layers)."""
    if arch == "Llama4ForConditionalGeneration":
        return (tuple(i for i in range(layers) if (i + 1) % 4), tuple(i for i in range(layers) if not (i + 1) % 4))
    if arch == "MiMoV2FlashForCausalLM":
        pattern = text.get("hybrid_layer_pattern") or []
        return (tuple(i for i in range(layers) if pattern[i] == 1), tuple(i for i in range(layers) if pattern[i] == 0))
    kinds = text.get("layer_types")
    if not isinstance(kinds, Sequence):
        raise ShapeError(f"config.json of {arch} has no 'layer_types' (SGLang splits its KV pool by them)")
    swa = tuple(i for i, k in enumerate(kinds) if k == "sliding_attention" and i < layers)
    full = tuple(i for i, k in enumerate(kinds) if k == "full_attention" and i < layers)
    return swa, full


def _dsa_layer_skips_topk(config: Mapping[str, Any], layer_id: int) -> bool:
    """0.5.23's ``dsa_layer_skips_topk``: a layer that reuses the previous layer's top-k has no index-K."""
    indexer_types = config.get("indexer_types")
    if indexer_types is not None:
        return 0 <= layer_id < len(indexer_types) and indexer_types[layer_id] == "shared"
    cli_factor = config.get("cli_factor") or 1
    if cli_factor > 1:
        return layer_id % cli_factor != 0
    pattern = config.get("index_topk_pattern")
    if pattern is not None:
        return layer_id < len(pattern) and pattern[layer_id] == "S"
    freq = config.get("index_topk_freq") or 1
    offset = config.get("index_skip_topk_offset")
    if offset is not None:
        return max(layer_id - offset + 1, 0) % freq != 0
    return max(layer_id - 1, 0) % freq != 0


def _gdn_full_layers(text: Mapping[str, Any], layers: int) -> tuple[int, ...]:
    """Qwen3-Next / Qwen3.5 ``full_attention_layer_ids``: every ``full_attention_interval``-th layer."""
    # SGLang's Qwen3NextConfig.layers_block_type reads the interval, not layer_types.
    interval = text.get("full_attention_interval")
    if interval is None:
        kinds = text.get("layer_types")
        if isinstance(kinds, Sequence) and len(kinds) >= layers:
            return tuple(i for i, k in enumerate(kinds[:layers]) if k == "full_attention")
    interval = _int(text, "full_attention_interval")
    return tuple(i for i in range(layers) if (i + 1) % interval == 0)


# quantization_config.quant_method -> bytes per weight of the quantized linear layers.
QUANT_BYTES = {"fp8": 1, "modelopt": 1, "w8a8_fp8": 1, "w8a8_int8": 1, "compressed-tensors": 1, "awq": 0.5,
               "gptq": 0.5, "mxfp4": 0.5, "modelopt_fp4": 0.5}


def _linear_bytes(quant: Mapping[str, Any], dtype_bytes: int) -> float:
    """Bytes per parameter of the linear layers: the checkpoint's quantization, else its dtype."""
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, Mapping) else ""
    return QUANT_BYTES.get(method, dtype_bytes)


def model_shape(config: Mapping[str, Any], pin: str, dtype_flag: str | None = None,
                disable_hybrid_swa_memory: bool = False, enable_multimodal: bool | None = None) -> ModelShape:
    """The sizing facts SGLang ``pin`` derives from ``config`` (a config.json mapping);
    ``enable_multimodal``: the service's --enable-multimodal (None: SGLang's default per arch)."""
    archs = config.get("architectures") or []
    arch = str(archs[0]) if archs else ""
    text = text_config(config)
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    layers = _int(text, "num_hidden_layers")
    heads = _int(text, "num_attention_heads") if "num_attention_heads" in text else 0
    head_dim = text.get("head_dim")
    if head_dim is None:
        head_dim = _int(text, "hidden_size") // heads if heads else 0
    v_head_dim = text.get("v_head_dim") or head_dim
    mla = any(a in MLA_ARCHITECTURES[pin] for a in archs)
    if pin != "0.5.9" and any(a in _MLA_IF_LATENT for a in archs) and text.get("kv_lora_rank") is None:
        mla = any(a in MLA_ARCHITECTURES[pin] - _MLA_IF_LATENT for a in archs)
    if "DeepseekVL2ForCausalLM" in archs and text.get("use_mla", True):
        mla = True
    dtype = model_dtype(config, text, dtype_flag)
    found = config.get("quantization_config")
    quant: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    kv_algo = quant.get("kv_cache_quant_algo")
    vision = config.get("vision_config") if isinstance(config.get("vision_config"), Mapping) else None
    if enable_multimodal is None:
        enable_multimodal = arch not in MM_DISABLED_ARCHITECTURES[pin]
    fields: dict[str, Any] = dict(
        architecture=arch, model_type=model_type, mla=mla, num_layers=layers, num_attention_heads=heads,
        num_kv_heads=_num_kv_heads(config, text), head_dim=int(head_dim), v_head_dim=int(v_head_dim),
        context_len=context_length(text), dtype=dtype, dtype_bytes=DTYPE_BYTES.get(dtype, 2),
        kv_fp8_from_checkpoint=isinstance(kv_algo, str) and kv_algo.upper() == "FP8",
        nextn_layers=text.get("num_nextn_predict_layers"), multimodal=vision is not None and enable_multimodal,
        mtp_layers=int(text.get("num_nextn_predict_layers") or text.get("mtp_num_hidden_layers") or 0),
        vision_layers=(vision or {}).get("num_hidden_layers", 24 if vision is not None else None),
        vision_hidden=(vision or {}).get("hidden_size", 1024 if vision is not None else None),
        hidden_size=int(text.get("hidden_size") or 0), vocab_size=int(text.get("vocab_size") or 0),
        intermediate_size=int(text.get("intermediate_size") or 0),
        linear_bytes=_linear_bytes(quant, DTYPE_BYTES.get(dtype, 2)))
    if mla:
        fields.update(kv_lora_rank=_int(text, "kv_lora_rank"), qk_rope_head_dim=_int(text, "qk_rope_head_dim"),
                      qk_nope_head_dim=int(text.get("qk_nope_head_dim") or 0),
                      q_lora_rank=int(text.get("q_lora_rank") or 0))
        if any(a in DSA_ARCHITECTURES[pin] for a in archs[:1]) and text.get("index_topk") is not None:
            fields.update(index_head_dim=_int(text, "index_head_dim"), index_kpool=int(text.get("index_kpool", 1)))
            if pin != "0.5.9":
                fields.update(index_shared_layers=frozenset(
                    i for i in range(layers) if _dsa_layer_skips_topk(text, i)))
    if model_type in GDN_MODEL_TYPES or str(config.get("model_type")) in GDN_MODEL_TYPES:
        fields.update(full_attention_layers=_gdn_full_layers(text, layers), linear_state_config=text)
    if any(a in HYBRID_SWA_ARCHITECTURES[pin] for a in archs) and not disable_hybrid_swa_memory:
        swa, full = _swa_layers(arch, text, layers)
        fields.update(swa_layers=swa, swa_full_layers=full, swa_num_kv_heads=text.get("swa_num_key_value_heads"),
                      swa_head_dim=int(text.get("swa_head_dim") or head_dim),
                      # 0.5.9 falls back to v_head_dim, 0.5.23 to swa_head_dim
                      swa_v_head_dim=int(text.get("swa_v_head_dim") or (
                          v_head_dim if pin == "0.5.9" else text.get("swa_head_dim") or head_dim)),
                      sliding_window=text.get("sliding_window"))
    return ModelShape(**fields)
