"""SGLang's own memory sizing, per pin, before deploy: weights, KV pool, tokens, requests, reserve.

:func:`size_memory` computes what the pinned SGLang computes at start, from plain inputs:
the model's config.json (through :mod:`generator.plan.model_shape`), its weight bytes, the
GPU's ``memory.total`` in MiB and the service's flags. It mirrors, per pin:

* 0.5.9: ``ModelRunnerKVCacheMixin.profile_max_num_token`` / ``get_cell_size_per_token`` /
  ``handle_max_mamba_cache`` / ``set_num_tokens_hybrid_swa`` / ``init_memory_pool``
  (``model_executor/model_runner_kv_cache_mixin.py``) and the max_running_requests of
  ``model_runner.py``;
* 0.5.23: ``KVCacheConfigurator._profile_available_bytes`` / ``_handle_max_mamba_cache`` /
  ``resolve_max_num_reqs`` (``mem_cache/kv_cache_configurator.py``) and
  ``DefaultPoolConfigurator`` / ``HybridSWAPoolConfigurator`` (``model_executor/pool_configurator.py``),
  which count the speculative draft's weights and KV layers in the budget.

The one input SGLang measures and gen cannot is the free memory before the weights load.
It is assumed here, in one place (:data:`CUDA_CONTEXT_GIB`, :data:`COMM_BUFFERS_GIB`), from
startup logs; a caller that knows it (a real log, ``/get_server_info``) passes it instead.
``tests/data/memory_logs.json`` holds the logs the assumption and the whole formula are
checked against (``tests/test_memory_logs.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from generator.plan.memory_defaults import DefaultInputs, Flags, resolve_defaults
from generator.plan.model_shape import ModelShape, model_shape, text_config

GIB = 1 << 30

# The assumption: memory a rank has lost before its weights load, measured in the startup
# logs of tests/data/memory_logs.json as nvidia-smi's memory.total minus "Load weight begin.
# avail mem". The CUDA context, cuBLAS/torch state and what the driver keeps out of
# cudaMemGetInfo come to ~1.1 GiB on one GPU. When ranks talk over NVLink (tp x pp > 1 on
# SXM-class GPUs), NCCL and SGLang's custom all-reduce take ~1.95 GiB more ("Init torch
# distributed ends. mem usage=1.96 GB" on 8x H200); over PCIe the logs show none.
CUDA_CONTEXT_GIB = 1.1
COMM_BUFFERS_GIB = 1.95
# GPU names (nvidia-smi) of the NVLink-class parts, when the host's link matrix is unknown.
NVLINK_GPU_WORDS = ("h100 sxm", "h100 80gb hbm3", "h200", "h20", "h800", "a100-sxm", "a100 sxm", "a800",
                    "b200", "b300", "gb200", "gb300")  # lower case: matched against the lowered name

# KV cache dtypes by --kv-cache-dtype: bytes per element as torch reports them
# (float4_e2m1fn_x2 packs two values in its one byte; SGLang halves the cell for it).
KV_DTYPE_BYTES = {"fp8_e5m2": 1, "fp8_e4m3": 1, "fp8": 1, "bf16": 2, "bfloat16": 2, "fp4_e2m1": 1, "mxfp8": 1,
                  "float16": 2, "fp16": 2}
FP4_KV = frozenset({"fp4_e2m1", "nvfp4"})

SPEC_EAGLE = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
# `_handle_speculative_decoding`: targets whose MTP head is read from the target checkpoint.
MTP_FROM_TARGET = frozenset({"DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "Glm4MoeForCausalLM",
                             "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM",
                             "BailingMoeV2ForCausalLM", "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM",
                             "PixtralForConditionalGeneration"})


def nvlink_class(gpu_name: str) -> bool:
    """True for a GPU model name of the NVLink-connected datacenter parts (:data:`NVLINK_GPU_WORDS`)."""
    return any(word in gpu_name.lower() for word in NVLINK_GPU_WORDS)


def free_before_load_gib(memory_mib: int, ranks: int, nvlink: bool) -> float:
    """The assumed free memory of one rank before its weights load (see :data:`CUDA_CONTEXT_GIB`)."""
    return memory_mib / 1024 - CUDA_CONTEXT_GIB - (COMM_BUFFERS_GIB if ranks > 1 and nvlink else 0.0)


@dataclass(frozen=True)
class Checkpoint:
    """A model's facts: config.json and the bytes of its weights (the index's total_size)."""

    config: Mapping[str, Any]
    weight_bytes: int
    draft_config: Mapping[str, Any] | None = None  # a separate draft checkpoint (EAGLE/EAGLE3)
    draft_weight_bytes: int = 0


@dataclass(frozen=True)
class Measured:
    """Figures a real start printed, replacing what gen would assume (GiB, as SGLang logs them)."""

    free_before_load_gib: float | None = None
    free_after_load_gib: float | None = None  # "Load weight end. avail mem"


@dataclass(frozen=True)
class MemoryPlan:
    """What SGLang will compute for one rank of one service (see :func:`size_memory`)."""

    pin: str
    gpu_total_gib: float
    free_before_load_gib: float
    free_before_load_assumed: bool
    mem_fraction_static: float
    fraction_is_default: bool
    default_fraction: float
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    weights_gib: float  # the target's weights on one rank
    draft_weights_gib: float  # the speculative draft's, on one rank
    draft_counted: bool  # the pin counts the draft's weights in the KV budget (0.5.23)
    cell_bytes: int  # KV bytes per token on one rank, as SGLang sizes the pool
    rest_gib: float  # the KV budget before the token division (<= 0: SGLang refuses)
    min_fraction: float  # the smallest mem_fraction_static that leaves a KV budget
    max_total_num_tokens: int
    kv_pool_gib: float
    mamba_gib: float
    swa_tokens: int | None
    max_running_requests: int
    context_len: int
    draft_kv_gib: float  # 0.5.9: the draft's KV cache, allocated after the target's pool (0 otherwise)
    req_table_rows: int  # request slots of the request-to-token table
    req_table_gib: float  # the request-to-token table: its rows x context length x int32
    reserve_gib: float  # free after the weights, pools, request table and draft: for CUDA graphs, activations
    default_reserve_gib: float  # what SGLang's default rule keeps for these flags, after the table
    notes: tuple[str, ...] = field(default=())
    kv_layers: int = 0  # the layers one rank's KV pool holds (a pipeline stage's, or all of them)
    pp_whole_model: bool = False  # --pp-size > 1 and the pin's class does not split the layers

    @property
    def fits(self) -> bool:
        """False where SGLang refuses to start: the weights leave no KV cache."""
        return self.rest_gib > 0 and self.max_total_num_tokens > 0

    @property
    def late_draft_gib(self) -> float:
        """What 0.5.9 loads after sizing the target's pool, out of the reserve: the draft's
        weights and KV cache (0 where the pin counts them in the budget)."""
        return 0.0 if self.draft_counted else self.draft_weights_gib + self.draft_kv_gib

    @property
    def after_pool_gib(self) -> float:
        """Everything SGLang allocates after sizing the KV pool: the request table and the late draft."""
        return self.req_table_gib + self.late_draft_gib


def pin_rules(pin: str) -> str:
    """The sizing code a pin runs: 0.5.9's up to 0.5.22, 0.5.23's from there (only those two are mirrored)."""
    parts = tuple(int(p) if p.isdigit() else 0 for p in pin.split(".")[:3])
    return "0.5.23" if parts >= (0, 5, 23) else "0.5.9"


def stage_ranges(layers: int, pp: int) -> list[tuple[int, int]]:
    """Each pipeline rank's ``[start_layer, end_layer)``: SGLang's ``get_pp_indices`` without
    ``SGLANG_PP_LAYER_PARTITION`` (an even split, the remainder's extra layers on the last ranks)."""
    base, extra = divmod(layers, pp)
    ranges, start = [], 0
    for rank in range(pp):
        size = base + (1 if rank >= pp - extra else 0)
        ranges.append((start, start + size))
        start += size
    return ranges


def kv_layers(shape: ModelShape, pp: int, layer_split: bool | None) -> int:
    """The KV layers of the pipeline rank with the most of them (its pool holds the fewest
    tokens; SGLang all-reduces the minimum over the ranks).

    SGLang's runner takes a rank's layers from the model object (``end_layer - start_layer``,
    0.5.9 ``model_runner.py`` / 0.5.23 ``layer_setup._resolve_pp_layer_range``); a model class
    without ``start_layer``/``end_layer`` (``layer_split`` False, from the pin's
    ``<pin>.pipeline.json``) gets a pool for every layer on every rank. A hybrid linear-attention
    model counts its full-attention layers inside the rank's range (``profile_max_num_token``).
    Unknown (None): split, as the classes that support pipeline parallelism mostly do."""
    ranges = [(0, shape.num_layers)] if pp <= 1 or layer_split is False else stage_ranges(shape.num_layers, pp)
    full = shape.full_attention_layers
    return max(sum(1 for i in full if start <= i < end) if full is not None else end - start
               for start, end in ranges)


def kv_dtype_bytes(flags: Flags, shape: ModelShape) -> int:
    """``configure_kv_cache_dtype``: element size of the KV cache."""
    if flags.kv_cache_dtype == "auto":
        return 1 if shape.kv_fp8_from_checkpoint else shape.dtype_bytes
    return KV_DTYPE_BYTES.get(flags.kv_cache_dtype, shape.dtype_bytes)


def _draft_layers(pin: str, shape: ModelShape, flags: Flags, checkpoint: Checkpoint) -> int:
    """0.5.23's ``eagle_draft_num_layers``: the draft's KV layers sized into the target's pool."""
    if flags.speculative_algorithm not in SPEC_EAGLE or pin == "0.5.9":
        return 0
    if checkpoint.draft_config is not None:
        draft = model_shape(checkpoint.draft_config, pin)
        return int(draft.nextn_layers) if draft.nextn_layers is not None else draft.num_layers
    if shape.nextn_layers is not None:
        return int(shape.nextn_layers)
    return 1 if shape.architecture in MTP_FROM_TARGET else 0


def cell_size(pin: str, shape: ModelShape, flags: Flags, num_layers: int, draft_layers: int = 0,
              stored: bool = False) -> int:
    """KV bytes per token on one rank: ``get_cell_size_per_token`` (0.5.9) / ``_compute_cell_size`` (0.5.23).

    ``stored``: the bytes the pool allocates rather than the ones 0.5.9 sizes with. They
    differ for an FP8 DSA row, which 0.5.9 budgets as 576 bytes a layer and stores as 656
    (``calculate_mla_kv_cache_dim``: the 512 FP8 values, their scales and the rope part in
    bf16) unless a trtllm NSA backend keeps it unpadded; 0.5.23 budgets what it stores.
    """
    kv = kv_dtype_bytes(flags, shape)
    fp4 = flags.kv_cache_dtype in FP4_KV
    attn_tp = flags.attn_tp
    indexer = 0
    if shape.mla:
        dim = shape.kv_lora_rank + shape.qk_rope_head_dim
        padded = pin != "0.5.9" or (stored and not flags.nsa_trtllm)
        if padded and shape.index_head_dim is not None and kv == 1 and not fp4:
            dim = shape.kv_lora_rank + shape.kv_lora_rank // 128 * 4 + shape.qk_rope_head_dim * 2
        cell = dim * num_layers * kv
        if fp4:
            cell = cell // 2 + (shape.kv_lora_rank + shape.qk_rope_head_dim) // 16 * num_layers * kv
        if shape.index_head_dim is not None:
            per = shape.index_head_dim + shape.index_head_dim // 128 * 4
            if pin != "0.5.9":
                per = -(-per // shape.index_kpool)
            indexer_layers = num_layers - sum(1 for i in shape.index_shared_layers if i < num_layers)
            indexer = per * indexer_layers
            cell += indexer
    elif shape.swa_layers is not None and pin == "0.5.9":
        full = shape.kv_heads_per_rank(attn_tp) * (shape.head_dim + shape.v_head_dim)
        swa = shape.swa_kv_heads_per_rank(attn_tp) * (shape.swa_head_dim + shape.swa_v_head_dim)
        cell = (full * len(shape.swa_full_layers or ()) + swa * len(shape.swa_layers)) * kv
    else:
        heads = shape.kv_heads_per_rank(attn_tp)
        cell = heads * (shape.head_dim + shape.v_head_dim) * num_layers * kv
        if fp4:
            cell = cell // 2 + (heads * shape.head_dim * num_layers * 2 * kv) // 16
        elif flags.kv_cache_dtype == "mxfp8" and pin != "0.5.9":
            cell += heads * (shape.head_dim + shape.v_head_dim) * num_layers // 32
    if draft_layers and num_layers:
        if indexer:
            target_kv = cell - indexer
            draft_indexer = per * draft_layers  # the draft's indexer: every layer
            cell += int(target_kv * draft_layers / num_layers) + draft_indexer
        else:
            cell += int(cell * draft_layers / num_layers)
    return cell


def _swa_split_0_5_23(shape: ModelShape, flags: Flags, kv: int, draft_layers: int) -> tuple[float, int, int]:
    """(cell per full token, full per-token bytes, swa per-token bytes) of ``HybridSWAPoolConfigurator``."""
    full_tok = shape.kv_heads_per_rank(flags.attn_tp) * (shape.head_dim + shape.v_head_dim) * kv
    swa_tok = shape.swa_kv_heads_per_rank(flags.attn_tp) * (shape.swa_head_dim + shape.swa_v_head_dim) * kv
    full_layers, swa_layers = len(shape.swa_full_layers or ()), len(shape.swa_layers or ())
    if full_layers == 0:
        return swa_tok * swa_layers + full_tok * draft_layers, full_tok, swa_tok
    return full_tok * (full_layers + draft_layers) + flags.swa_full_tokens_ratio * swa_tok * swa_layers, full_tok, swa_tok


def weights_per_rank(shape: ModelShape, checkpoint: Checkpoint, flags: Flags) -> tuple[float, float]:
    """(target, in-checkpoint MTP head) bytes one rank loads.

    Tensor parallelism shards everything but norms and MoE routers; KV projections are
    replicated to one head per rank when tp exceeds the KV heads; attention is replicated
    across DP-attention groups; a pipeline stage holds its share of the layers, also for a
    wrapper class without ``start_layer``/``end_layer`` whose KV pool holds every layer: its
    inner language model splits them (sgl-project/sglang#14254: 8.22 GB on PP0 of a 24B model at
    PP 4); a class with no pipeline support at all does not start (P035). Layers past
    ``num_hidden_layers`` (the MTP head) are the draft's, loaded only with speculative decoding.
    """
    tp, attn_tp, pp = flags.tp, flags.attn_tp, flags.pp
    total = float(checkpoint.weight_bytes)
    per_param = shape.dtype_bytes
    embed = shape.vocab_size * shape.hidden_size * per_param
    tied = bool(checkpoint.config.get("tie_word_embeddings", False))
    body = max(total - embed * (1 if tied else 2), 0.0)
    layers = shape.num_layers + shape.mtp_layers
    mtp = body * shape.mtp_layers / layers if layers else 0.0
    target = (total - mtp) / tp
    kv_params = 0.0 if shape.mla else 2.0 * shape.hidden_size * shape.num_kv_heads * shape.head_dim * shape.num_layers
    if not shape.mla and shape.num_kv_heads < attn_tp:
        target += kv_params * shape.linear_bytes * (1 / shape.num_kv_heads - 1 / tp)
    if attn_tp < tp:
        target += _attention_params(shape) * shape.linear_bytes * (1 / attn_tp - 1 / tp)
    if pp > 1:
        target = (target - embed / tp) / pp + embed / tp
    return target, mtp / tp


def _attention_params(shape: ModelShape) -> float:
    """Attention weights of all layers, from config.json (for DP-attention replication)."""
    h = shape.hidden_size
    if shape.mla:
        c, heads = shape, shape.num_attention_heads
        qk = c.qk_nope_head_dim + c.qk_rope_head_dim
        q = h * c.q_lora_rank + c.q_lora_rank * heads * qk if c.q_lora_rank else h * heads * qk
        per = q + h * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank * heads * (
            c.qk_nope_head_dim + c.v_head_dim) + heads * c.v_head_dim * h
    else:
        per = 2 * h * shape.num_attention_heads * shape.head_dim + 2 * h * shape.num_kv_heads * shape.head_dim
    return float(per * shape.num_layers)


@dataclass(frozen=True)
class _Mamba:
    rest_gib: float
    state_gib: float
    cache_size: int
    ratio: int


def _mamba(pin: str, shape: ModelShape, flags: Flags, rest: float, running: int | None) -> _Mamba | None:
    """``handle_max_mamba_cache`` (0.5.9) / ``_handle_max_mamba_cache`` (0.5.23): the recurrent state first."""
    state = shape.linear_state(flags.attn_tp)
    if state is None:
        return None
    ssm_bytes = {"bfloat16": 2, "float16": 2, "float32": 4}.get(
        flags.mamba_ssm_dtype or str(shape.linear_state_config.get("mamba_ssm_dtype") if shape.linear_state_config
                                     else None), 4)
    per_req = state.bytes_per_request(2, ssm_bytes)
    dp = flags.dp if flags.dp_attention else 1
    ratio = 1 if flags.disable_radix_cache else 3
    spec = flags.speculative_algorithm is not None
    draft_tokens = flags.speculative_num_draft_tokens or 0
    if pin == "0.5.9":
        if spec and running is not None:
            rest -= per_req * (running // dp) * draft_tokens / GIB
        if flags.max_mamba_cache_size is not None:
            size = flags.max_mamba_cache_size // (flags.dp if flags.dp_attention else 1)
        elif flags.disable_radix_cache and running is not None:
            size = running // dp
        else:
            raw = rest * flags.mamba_full_memory_ratio / (1 + flags.mamba_full_memory_ratio)
            size = int((raw * GIB) // per_req)
        used = size * per_req / GIB
        return _Mamba(rest - used, used, size, ratio)
    requests = max(1, (running or 0) // dp)
    if flags.max_mamba_cache_size is not None:
        size = flags.max_mamba_cache_size // dp
        if spec:
            rest -= per_req * (min(requests, size // ratio) + 1) * draft_tokens / GIB
    elif flags.disable_radix_cache and running is not None:
        size = max(1, running // dp)
        if spec:
            rest -= per_req * (size + 1) * draft_tokens / GIB
    else:
        budget = rest * flags.mamba_full_memory_ratio / (1 + flags.mamba_full_memory_ratio) * GIB
        if spec:
            size = int((budget - per_req * (1 + draft_tokens)) // (per_req * (1 + draft_tokens / ratio)))
            rest -= per_req * (min(requests, size // ratio) + 1) * draft_tokens / GIB
        else:
            size = int((budget - per_req) // per_req)
    used = (size + 1) * per_req / GIB
    return _Mamba(rest - used, used, size, ratio)


def _running_requests(pin: str, tokens_profiled: int, tokens: int, shape_ctx: int, flags: Flags,
                      running: int | None, mamba: _Mamba | None) -> tuple[int, int]:
    """(the max_running_requests SGLang takes for the pool it built, the rows of its request table).

    The request table (``ReqToTokenPool``) has one row per request slot: 0.5.9's
    ``init_memory_pool`` sizes it before the scheduler halves the count by the tokens, 0.5.23
    allocates ``resolve_max_num_reqs`` rows plus one padding row.
    """
    dp = flags.dp if flags.dp_attention else 1
    if pin == "0.5.9":
        reqs = running if running is not None else min(max(int(tokens_profiled / shape_ctx * 512), 2048), 4096)
        if mamba is not None:
            reqs = min(reqs, mamba.cache_size // mamba.ratio)
            if flags.speculative_algorithm is not None and flags.dp_attention and running is not None:
                reqs = min(reqs, running // flags.dp)
        return min(tokens // 2 if running is None else running // max(flags.dp, 1), reqs), reqs
    estimated = max(min(int(tokens / shape_ctx * 512), 4096), 2048)
    reqs = min(max(1, running // dp), tokens // 2) if running is not None else min(estimated, tokens // 2)
    if mamba is not None:
        reqs = min(reqs, mamba.cache_size // mamba.ratio)
    return reqs, reqs + 1


def req_table_bytes(rows: int, context_len: int, flags: Flags) -> int:
    """The request-to-token table: ``rows`` int32 rows of the context length plus SGLang's
    headroom (``extra_max_context_len``: 4, and the speculative draft tokens), allocated after
    the KV pool is sized, out of what the static pool leaves."""
    return rows * (context_len + 4 + (flags.speculative_num_draft_tokens or 0)) * 4


@dataclass(frozen=True)
class Fit:
    """The static budget of one rank: the fraction SGLang takes, free memory around the load, the KV budget."""

    mem_fraction_static: float
    fraction_is_default: bool
    default_fraction: float
    chunked_prefill_size: int
    cuda_graph_max_bs: int
    free_before_load_gib: float
    free_before_load_assumed: bool
    free_after_load_gib: float
    weights_gib: float  # what the budget charges: the target's weights, and the draft's on 0.5.23
    rest_gib: float  # ``rest_memory`` before the recurrent state and the token division
    min_fraction: float
    default_reserve_gib: float


def _defaults(pin: str, mib: int, flags: Flags, shape: ModelShape | None) -> Any:
    return resolve_defaults(pin, DefaultInputs(
        gpu_memory_mib=mib, flags=flags, mla=bool(shape and shape.mla), multimodal=bool(shape and shape.multimodal),
        vision_layers=shape.vision_layers if shape else None, vision_hidden=shape.vision_hidden if shape else None))


def budget(pin: str, charged_bytes: float, gpu_memory_mib: int, flags: Flags, nvlink: bool = False,
           measured: Measured = Measured(), shape: ModelShape | None = None) -> Fit:
    """``profile_max_num_token``'s ``rest_memory`` (0.5.9) / ``_profile_available_bytes`` (0.5.23).

    ``charged_bytes``: what one rank has loaded when the pool is sized (the target's
    weights; on 0.5.23 also the draft's). ``rest_gib <= 0`` is where SGLang refuses.
    """
    pin = pin_rules(pin)
    defaults = _defaults(pin, gpu_memory_mib, flags, shape)
    fraction = defaults.mem_fraction_static
    pre = measured.free_before_load_gib
    assumed = pre is None
    if pre is None:
        pre = free_before_load_gib(gpu_memory_mib, flags.tp * flags.pp, nvlink)
    post = measured.free_after_load_gib
    if post is None:
        post = pre - charged_bytes / GIB
    rest = post - pre * (1 - fraction)
    if pin != "0.5.9" and shape is not None and shape.multimodal:
        rest -= 100 / 1024  # mm_runtime_reservation_gb: SGLANG_VLM_CACHE_SIZE_MB
    return Fit(fraction, defaults.fraction_is_default, defaults.default_fraction, defaults.chunked_prefill_size,
               defaults.cuda_graph_max_bs, pre, assumed, post, charged_bytes / GIB, rest,
               1 - post / pre if pre > 0 else 1.0, pre * (1 - defaults.default_fraction))


def dsa_kv_cache_dtype(pin: str, config: Mapping[str, Any], shape: ModelShape, flags: Flags,
                       capability: tuple[int, int] | None) -> str:
    """The KV cache dtype SGLang picks for a DeepSeek DSA model left at ``auto``
    (``_set_default_nsa_kv_cache_dtype``): FP8 from compute capability 10 (Blackwell), else
    bfloat16; 0.5.23 keeps bfloat16 for learnable attention sinks. Other models keep theirs."""
    if flags.kv_cache_dtype != "auto" or not shape.mla or shape.index_head_dim is None:
        return flags.kv_cache_dtype
    sinks = pin != "0.5.9" and bool(text_config(config).get("learnable_sink", config.get("learnable_sink", False)))
    return "fp8_e4m3" if capability is not None and capability[0] >= 10 and not sinks else "bfloat16"


def _hybrid_swa_disabled(pin: str, config: Mapping[str, Any], flags: Flags, capability: tuple[int, int] | None) -> bool:
    """``disable_hybrid_swa_memory`` as the pin's model-specific adjustments set it.

    0.5.9 picks trtllm_mha for GPT-OSS on SM100 (``is_sm100_supported``) when no attention
    backend is given, and that backend turns the sliding-window pool off; 0.5.23 keeps it.
    """
    if flags.disable_hybrid_swa_memory:
        return True
    arch = (config.get("architectures") or [""])[0]
    backend = flags.attention_backend
    if pin == "0.5.9" and arch == "GptOssForCausalLM":
        chosen = backend if backend is not None else ("trtllm_mha" if capability and capability[0] == 10 else None)
        return chosen == "trtllm_mha"
    return False


def _tokens(pin: str, shape: ModelShape, flags: Flags, kv: int, kv_budget: float, layers: int,
            draft_layers: int) -> tuple[int, int, int, int | None]:
    """(cell bytes, tokens profiled, max_total_num_tokens page-aligned, sliding-window tokens) for
    the KV budget: ``profile_max_num_token`` and, for sliding-window hybrids, 0.5.9's
    ``set_num_tokens_hybrid_swa`` or 0.5.23's ``HybridSWAPoolConfigurator`` split."""
    page = max(flags.page_size, 1)
    swa_tokens: int | None = None
    tokens_profiled = tokens = 0
    cell = cell_size(pin, shape, flags, layers, draft_layers)
    if kv_budget > 0 and shape.swa_layers is not None and pin != "0.5.9":
        cell_f, _, _ = _swa_split_0_5_23(shape, flags, kv, draft_layers)
        cell = int(cell_f)
        tokens_profiled = int(int(kv_budget * GIB) // cell_f)
        tokens = _cap(tokens_profiled, flags) // page * page
        if shape.swa_full_layers:
            swa_tokens = int(tokens * flags.swa_full_tokens_ratio) // page * page
    elif kv_budget > 0 and cell:
        tokens_profiled = int(kv_budget * GIB) // cell
        tokens = _cap(tokens_profiled, flags) // page * page
        if shape.swa_layers is not None and shape.swa_full_layers:  # 0.5.9 set_num_tokens_hybrid_swa
            full_tok = shape.kv_heads_per_rank(flags.attn_tp) * (shape.head_dim + shape.v_head_dim) * kv
            swa_tok = shape.swa_kv_heads_per_rank(flags.attn_tp) * (shape.swa_head_dim + shape.swa_v_head_dim) * kv
            nf, ns = len(shape.swa_full_layers), len(shape.swa_layers)
            total = tokens * (full_tok * nf + swa_tok * ns)
            full = int(total / (full_tok * nf + flags.swa_full_tokens_ratio * swa_tok * ns))
            swa_tokens = int(full * flags.swa_full_tokens_ratio) // page * page
            tokens = full // page * page
    return cell, tokens_profiled, tokens, swa_tokens


def size_memory(pin: str, checkpoint: Checkpoint, gpu_memory_mib: int, flags: Flags,
                measured: Measured = Measured(), nvlink: bool = False,
                capability: tuple[int, int] | None = None, layer_split: bool | None = None) -> MemoryPlan:
    """What SGLang ``pin`` will size for one rank of this service (see the module docstring).

    ``capability``: the GPU's compute capability (``gpus[].compute_cap``), where the pin's
    choices depend on it. ``layer_split``: whether the pin's model class for this architecture
    splits its layers across pipeline stages (:meth:`generator.sglang.pipeline.Pipeline.splits_layers`;
    None: not known), read only with ``--pp-size`` above 1.
    """
    pin = pin_rules(pin)
    shape = model_shape(checkpoint.config, pin, flags.dtype,
                        _hybrid_swa_disabled(pin, checkpoint.config, flags, capability), flags.enable_multimodal)
    notes: list[str] = []
    kv_dtype = dsa_kv_cache_dtype(pin, checkpoint.config, shape, flags, capability)
    if kv_dtype != flags.kv_cache_dtype:
        if capability is None:
            notes.append("DSA KV cache dtype taken as bfloat16: the GPUs' compute_cap is unknown (SGLang picks "
                         "FP8 on compute capability 10 and up)")
        flags = replace(flags, kv_cache_dtype=kv_dtype)
    spec = "EAGLE" if flags.speculative_algorithm == "NEXTN" else flags.speculative_algorithm
    flags = replace(flags, speculative_algorithm=spec)
    if spec in SPEC_EAGLE and flags.speculative_num_steps is not None and flags.speculative_eagle_topk == 1:
        flags = replace(flags, speculative_num_draft_tokens=flags.speculative_num_steps + 1)
    running = flags.max_running_requests
    if running is None and spec is not None:
        running = 48  # _handle_speculative_decoding
    target_bytes, mtp_bytes = weights_per_rank(shape, checkpoint, flags)
    draft_bytes = 0.0
    if spec in SPEC_EAGLE:
        draft_bytes = checkpoint.draft_weight_bytes / flags.tp if checkpoint.draft_config is not None else mtp_bytes
    draft_counted = pin != "0.5.9"
    fit = budget(pin, target_bytes + (draft_bytes if draft_counted else 0.0), gpu_memory_mib, flags, nvlink,
                 measured, shape)
    pre, post, rest = fit.free_before_load_gib, fit.free_after_load_gib, fit.rest_gib
    mamba = _mamba(pin, shape, flags, rest, running) if rest > 0 else None
    kv_budget = mamba.rest_gib if mamba is not None else rest
    if flags.pp > 1 and layer_split is False:
        notes.append(f"the pin's {shape.architecture} has no start_layer/end_layer: every pipeline rank sizes "
                     f"its KV pool for all {shape.num_layers} layers")
    elif flags.pp > 1 and layer_split is None:
        notes.append(f"whether the pin splits {shape.architecture}'s layers across pipeline stages is not "
                     "captured (catalogs/sglang/<pin>.pipeline.json): a stage's share of the layers assumed")
    layers = kv_layers(shape, flags.pp, layer_split)
    draft_layers = _draft_layers(pin, shape, flags, checkpoint)
    kv = kv_dtype_bytes(flags, shape)
    cell, tokens_profiled, tokens, swa_tokens = _tokens(pin, shape, flags, kv, kv_budget, layers, draft_layers)
    context = flags.context_length or shape.context_len
    requests, rows = _running_requests(pin, tokens_profiled, tokens, context, flags, running, mamba) if tokens else (0, 0)
    table = req_table_bytes(rows, context, flags) / GIB
    kv_pool = _pool_bytes(pin, shape, flags, kv, layers, tokens, swa_tokens) / GIB
    draft_kv = 0.0
    if pin == "0.5.9" and spec in SPEC_EAGLE and tokens:
        per_layer = cell_size(pin, shape, flags, 1) if shape.swa_layers is None else 0
        draft_kv = tokens * per_layer * max(1, _draft_layers("0.5.23", shape, flags, checkpoint)) / GIB
        notes.append("0.5.9 loads the draft after sizing the target's pool: its weights and KV come out of "
                     "the reserve")
    mamba_gib = mamba.state_gib if mamba is not None else 0.0
    reserve = post - kv_pool - mamba_gib - table - (draft_bytes / GIB + draft_kv if not draft_counted else 0.0)
    if fit.free_before_load_assumed:
        notes.append(f"free memory before load assumed: {gpu_memory_mib / 1024:.2f} GiB minus "
                     f"{CUDA_CONTEXT_GIB} GiB CUDA context" + (f" and {COMM_BUFFERS_GIB} GiB of NCCL/all-reduce "
                                                               "buffers" if flags.tp * flags.pp > 1 and nvlink
                                                               else ""))
    return MemoryPlan(
        pin=pin, gpu_total_gib=gpu_memory_mib / 1024, free_before_load_gib=pre,
        free_before_load_assumed=fit.free_before_load_assumed, mem_fraction_static=fit.mem_fraction_static,
        fraction_is_default=fit.fraction_is_default, default_fraction=fit.default_fraction,
        chunked_prefill_size=fit.chunked_prefill_size, cuda_graph_max_bs=fit.cuda_graph_max_bs,
        weights_gib=target_bytes / GIB, draft_weights_gib=draft_bytes / GIB, draft_counted=draft_counted,
        cell_bytes=cell, rest_gib=rest, min_fraction=fit.min_fraction, max_total_num_tokens=tokens,
        kv_pool_gib=kv_pool, mamba_gib=mamba_gib, swa_tokens=swa_tokens, max_running_requests=requests,
        context_len=context, draft_kv_gib=draft_kv, req_table_rows=rows, req_table_gib=table, reserve_gib=reserve,
        default_reserve_gib=fit.default_reserve_gib - table, notes=tuple(notes), kv_layers=layers,
        pp_whole_model=flags.pp > 1 and layer_split is False)


def _cap(tokens: int, flags: Flags) -> int:
    """--max-total-tokens lowers the profiled count, never raises it."""
    return min(tokens, flags.max_total_tokens) if flags.max_total_tokens is not None else tokens


def _pool_bytes(pin: str, shape: ModelShape, flags: Flags, kv: int, layers: int, tokens: int,
                swa_tokens: int | None) -> float:
    """The KV buffers SGLang allocates for ``tokens`` (the pool the log's K/V sizes add up to)."""
    if shape.swa_layers is not None and swa_tokens is not None:
        full_tok = shape.kv_heads_per_rank(flags.attn_tp) * (shape.head_dim + shape.v_head_dim) * kv
        swa_tok = shape.swa_kv_heads_per_rank(flags.attn_tp) * (shape.swa_head_dim + shape.swa_v_head_dim) * kv
        return float(tokens * full_tok * len(shape.swa_full_layers or ()) + swa_tokens * swa_tok * len(shape.swa_layers))
    return float(tokens * cell_size(pin, shape, flags, layers, stored=True))
