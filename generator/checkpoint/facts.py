"""The facts of one checkpoint, read from its snapshot: what rules (sglang/) and memory (plan/) use.

:class:`CheckpointFacts` wraps the ``checkpoint`` (or ``draft``) part of a model snapshot
(``catalogs/models/<model>.json``, :mod:`generator.checkpoint.snapshot`). It only reads:
config.json's values as they are written, the weights' sizes, and the tensor names. How a
particular SGLang derives something from them (its text config, its KV-head count, its
context length) belongs to that pin's rules, which read these raw values; the helpers here
are the ones every pin shares. A value that is absent is None: a rule that needs it stays
silent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

# The sub-configs SGLang reads a multimodal model's language model from (get_hf_text_config
# in both pinned releases; they differ only in priority when a config has several, which no
# released checkpoint has).
TEXT_CONFIG_KEYS = ("thinker_config", "llm_config", "language_config", "text_config")
VISION_CONFIG_KEYS = ("vision_config", "visual", "vit_config")
GB = 1_000_000_000  # weights.size_gb is decimal GB, as disk sizes are written


@dataclass(frozen=True, eq=False)  # equal only to itself: two snapshots' facts never mix
class CheckpointFacts:
    """One checkpoint's snapshot data (``role``: ``checkpoint`` or ``draft``), read-only."""

    data: dict[str, Any]
    role: str = "checkpoint"

    # ----- config.json -----

    @property
    def config(self) -> dict[str, Any]:
        """config.json, whole, as captured."""
        value = self.data.get("config")
        return value if isinstance(value, dict) else {}

    @property
    def generation_config(self) -> dict[str, Any] | None:
        """generation_config.json, or None when the checkpoint has none."""
        value = self.data.get("generation_config")
        return value if isinstance(value, dict) else None

    @property
    def published(self) -> bool:
        """True for a snapshot written from published pages (``source.kind`` "published"), not
        captured from the checkpoint: its config holds only the keys cited, the rest unknown."""
        source = self.data.get("source")
        return isinstance(source, dict) and source.get("kind") == "published"

    @property
    def text_config(self) -> dict[str, Any]:
        """The language model's config: the first sub-config SGLang would use, else config.json."""
        config = self.config
        for key in TEXT_CONFIG_KEYS:
            sub = config.get(key)
            if isinstance(sub, dict):
                inner = sub.get("text_config")
                if key == "thinker_config" and isinstance(inner, dict):
                    return inner
                return sub
        return config

    @property
    def vision_config(self) -> dict[str, Any] | None:
        """The vision tower's config, or None for a text-only model."""
        for key in VISION_CONFIG_KEYS:
            sub = self.config.get(key)
            if isinstance(sub, dict):
                return sub
        return None

    @property
    def architectures(self) -> tuple[str, ...]:
        """config.json's ``architectures`` (SGLang loads the first)."""
        value = self.config.get("architectures")
        return tuple(a for a in value if isinstance(a, str)) if isinstance(value, list) else ()

    @property
    def architecture(self) -> str | None:
        """The model class SGLang looks up in its registry, or None."""
        return self.architectures[0] if self.architectures else None

    @property
    def model_type(self) -> str | None:
        """config.json's ``model_type``."""
        value = self.config.get("model_type")
        return value if isinstance(value, str) else None

    @property
    def torch_dtype(self) -> str | None:
        """The checkpoint's dtype word (``torch_dtype``, or transformers 5's ``dtype``), text config first."""
        for config in (self.text_config, self.config):
            for key in ("torch_dtype", "dtype"):
                value = config.get(key)
                if isinstance(value, str):
                    return value
        return None

    @property
    def quantization_config(self) -> dict[str, Any] | None:
        """``quantization_config`` (config.json's, else the text config's), or None."""
        for config in (self.config, self.text_config):
            value = config.get("quantization_config")
            if isinstance(value, dict):
                return value
        return None

    @property
    def auto_map(self) -> dict[str, Any] | None:
        """``auto_map``: classes loaded from the checkpoint's own code (needs trust_remote_code)."""
        value = self.config.get("auto_map")
        return value if isinstance(value, dict) else None

    def text(self, *keys: str) -> Any:
        """The first of ``keys`` the text config sets (not None), else None."""
        config = self.text_config
        for key in keys:
            value = config.get(key)
            if value is not None:
                return value
        return None

    def int_of(self, *keys: str) -> int | None:
        """:meth:`text` as an int (a bool or any other type is None)."""
        value = self.text(*keys)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    # ----- shapes, as every pinned SGLang reads them (rules compare them with the flags) -----

    @property
    def attention_heads(self) -> int | None:
        """The language model's query heads (``num_attention_heads``)."""
        return self.int_of("num_attention_heads")

    @property
    def kv_heads(self) -> int | None:
        """KV heads in SGLang's order of keys (ModelConfig.get_total_num_kv_heads), else the
        query heads (no grouped-query attention)."""
        return self.int_of("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                           "num_attention_groups") or self.attention_heads

    @property
    def uses_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3 style): KV heads are not sharded by TP."""
        return self.int_of("kv_lora_rank") is not None

    @property
    def vision_heads(self) -> int | None:
        """The vision tower's attention heads, or None without one."""
        vision = self.vision_config or {}
        for key in ("num_heads", "num_attention_heads"):
            value = vision.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    @property
    def experts(self) -> int | None:
        """Routed experts of a MoE model (``n_routed_experts``, ``num_experts``, ``num_local_experts``)."""
        return self.int_of("n_routed_experts", "num_experts", "num_local_experts")

    @property
    def weight_block_size(self) -> tuple[int, int] | None:
        """``quantization_config.weight_block_size`` (block-wise FP8: [block_n, block_k]), or None."""
        block = (self.quantization_config or {}).get("weight_block_size")
        if isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block):
            return block[0], block[1]
        return None

    @property
    def quant_method(self) -> str | None:
        """``quantization_config.quant_method``, lower-case, or None."""
        method = (self.quantization_config or {}).get("quant_method")
        return method.lower() if isinstance(method, str) else None

    @property
    def nextn_layers(self) -> int | None:
        """The checkpoint's own next-token (MTP) layers: ``num_nextn_predict_layers`` or
        ``mtp_num_hidden_layers``; None when config.json says neither."""
        return self.int_of("num_nextn_predict_layers", "mtp_num_hidden_layers")

    def context_limit(self, rope_scaling: bool = True) -> int:
        """The context length SGLang derives from the text config (get_context_length, the same
        code in both pinned releases): the first of its length keys times rope_scaling's factor
        (1 with original_max_position_embeddings or llama3 rope), else 2048.

        ``rope_scaling``: whether the pin's Transformers still hands SGLang a ``rope_scaling``
        (4.x does; 5.x moves it to ``rope_parameters``, so SGLang 0.5.23 never multiplies:
        proven by tests/test_model_oracle.py on both pins)."""
        config = self.text_config
        rope = config.get("rope_scaling") if rope_scaling else None
        factor: float = 1
        if isinstance(rope, dict) and rope:
            found = rope.get("factor", 1)
            factor = found if isinstance(found, (int, float)) else 1
            if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
                factor = 1
        for key in ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
                    "max_position_embeddings"):
            value = config.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(factor * value)
        return 2048

    # ----- the weights -----

    @property
    def weights(self) -> dict[str, Any] | None:
        """The snapshot's ``weights`` part, or None when no weights were read."""
        value = self.data.get("weights")
        return value if isinstance(value, dict) else None

    @property
    def total_size(self) -> int | None:
        """Bytes of all tensors (the index's ``metadata.total_size``, else the headers' sum)."""
        return (self.weights or {}).get("total_size")

    @property
    def size_gb(self) -> float | None:
        """:attr:`total_size` in GB (10^9 bytes), as ``weights.size_gb`` is written."""
        return None if self.total_size is None else self.total_size / GB

    @property
    def shard_count(self) -> int | None:
        """How many safetensors files hold the weights."""
        weights = self.weights
        return len(weights["shards"]) if weights else None

    @property
    def shard_files(self) -> tuple[str, ...]:
        """The shard file names, sorted."""
        weights = self.weights
        return tuple(s["file"] for s in weights["shards"]) if weights else ()

    @property
    def parameters(self) -> int | None:
        """The parameter count: the index's ``total_parameters``, else the headers' element
        count when no dtype packs several values per element (int4 in I32 does), else None."""
        weights = self.weights
        if not weights:
            return None
        if weights.get("total_parameters") is not None:
            return int(weights["total_parameters"])
        dtypes = weights.get("dtypes")
        quant = self.quantization_config or {}
        packed = str(quant.get("quant_method", "")) in ("compressed-tensors", "gptq", "awq", "bitsandbytes", "mxfp4")
        if not dtypes or packed:
            return None
        return sum(int(d["elements"]) for d in dtypes.values())

    @property
    def params_b(self) -> float | None:
        """:attr:`parameters` in billions."""
        return None if self.parameters is None else self.parameters / 1e9

    @property
    def file_hashes(self) -> dict[str, str | None]:
        """SHA-256 of each small file read (config.json, the index, ...), None when unknown."""
        files = self.data.get("files")
        return {k: v.get("sha256") for k, v in files.items()} if isinstance(files, dict) else {}

    @functools.cached_property
    def tensor_names(self) -> tuple[str, ...]:
        """Every tensor name (from the index, or the headers without one), sorted; expanded
        from the snapshot's templates on first use."""
        from generator.checkpoint.names import expand_names

        weights = self.weights
        return tuple(expand_names(weights["tensor_names"])) if weights else ()

    def has_tensor(self, prefix: str) -> bool:
        """True when some tensor name starts with ``prefix``."""
        return any(name.startswith(prefix) for name in self.tensor_names)

    def summary(self) -> dict[str, Any]:
        """What gen uses of this checkpoint, for ``gen show --format json``."""
        source = self.data.get("source") or {}
        return {"source": source, "architecture": self.architecture, "model_type": self.model_type,
                "torch_dtype": self.torch_dtype, "quantization": (self.quantization_config or {}).get("quant_method"),
                "total_size": self.total_size, "shards": self.shard_count, "parameters": self.parameters,
                "files": self.file_hashes}
