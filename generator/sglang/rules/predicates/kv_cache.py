"""Predicates of the KV cache: cache compatibility, LMCache, the prefill-only pool, mamba state, NVFP4 dequant, the unified memory pool, KV sharding.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.registry import Check, Hit, check, first_broken, predicate, quiet
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _tlru_checks(s: Settings) -> list[Check]:
    if s.get("radix_eviction_policy") != "tlru":
        return []
    config = s.get("radix_eviction_policy_config") or {}
    if not isinstance(config, dict):
        return []  # SGLang fails on .get with AttributeError; not a check of its own
    threshold, estimate = config.get("threshold", 0), config.get("next_prompt_estimate", 0)
    if not (_number(threshold) and _number(estimate)):
        return []
    policy = ("radix_eviction_policy", "radix_eviction_policy_config")
    return [
        check(threshold < 0 or estimate < 0, "tlru-negative", policy, threshold=threshold, estimate=estimate),
        check(threshold <= estimate, "tlru-threshold-not-above-estimate", policy, threshold=threshold, estimate=estimate),
    ]


def retraction_backup(s: Settings) -> str | None:
    """The decode retraction backup as SGLang resolves it: host_pool under a host receive threshold < 1."""
    if not s.has("disaggregation_decode_retraction_backup"):
        return None
    threshold = s.get("disaggregation_decode_host_receive_threshold", 1.0)
    if _number(threshold) and 0 <= threshold < 1 and s.get("disaggregation_decode_retraction_backup") != "cpu_tensor":
        return "host_pool"  # handle_pd_disaggregation declares it (cpu_tensor is refused there)
    return s.get("disaggregation_decode_retraction_backup")


def _host_pool_checks(s: Settings) -> list[Check]:
    if retraction_backup(s) != "host_pool":
        return []
    backup = "disaggregation_decode_retraction_backup"
    return [
        check(s.get("disaggregation_mode") != "decode", "host-pool-not-decode", (backup, "disaggregation_mode")),
        check(s.integer("dcp_size", 1) > 1, "host-pool-with-dcp", (backup, "dcp_size")),
        check(s.on("enable_priority_scheduling") and not s.on("disable_priority_preemption"), "host-pool-priority-preemption", (backup, "enable_priority_scheduling")),
    ]


def _offload_checks(s: Settings) -> list[Check]:
    offload = "disaggregation_decode_enable_offload_kvcache"
    if not s.on(offload):
        return []
    decode = s.get("disaggregation_mode") == "decode"
    checks: list[Check] = [check(not decode, "offload-not-decode", (offload, "disaggregation_mode"))]
    if not s.at_least(0, 5, 23):
        return checks + [check(s.env_true("SGLANG_ENABLE_SPEC_V2"), "offload-with-spec-v2", (offload, "SGLANG_ENABLE_SPEC_V2"))]
    return checks + [
        check(s.get("hicache_storage_backend") is None, "offload-without-storage", (offload, "hicache_storage_backend")),
        check(retraction_backup(s) == "host_pool", "offload-with-host-pool", (offload, "disaggregation_decode_retraction_backup")),
    ]


def _swa_checks(s: Settings) -> list[Check]:
    ratio, tails = s.get("swa_full_tokens_ratio"), s.get("swa_prefix_tails") if s.has("swa_prefix_tails") else None
    return [
        check(_number(ratio) and not 0 < ratio <= 1.0, "swa-ratio-out-of-range", ("swa_full_tokens_ratio",), ratio=ratio),
        check(isinstance(tails, int) and tails < 0, "swa-prefix-tails-negative", ("swa_prefix_tails",), tails=tails),
    ]


def _cache_checks(s: Settings) -> list[Check]:
    # SGLang's order: host-pool backup, T-LRU (0.5.23), hicache vs no radix (its own rule,
    # hicache-needs-radix), decode offload, SWA ratio and prefix tails.
    # (SGLang turns the radix cache off itself on a PD decode server unless
    # --disaggregation-decode-enable-radix-cache, and with dual-chunk attention: 0.5.9)
    decode_no_radix = s.get("disaggregation_mode") == "decode" and not s.on("disaggregation_decode_enable_radix_cache")
    no_radix = s.on("disable_radix_cache") or decode_no_radix or s.get("attention_backend") == "dual_chunk_flash_attn"
    radix = quiet(s.on("enable_hierarchical_cache") and no_radix)
    return [*_host_pool_checks(s), *_tlru_checks(s), radix, *_offload_checks(s), *_swa_checks(s)]


@predicate("kv-cache-compat")
def _kv_cache_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    return first_broken(_cache_checks(s))


@predicate("lmcache-compat")
def _lmcache_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_lmcache"):
        return None
    if any(c.broken for c in _cache_checks(s)):
        return None  # SGLang raises at an earlier check of the handler (kv-cache-compat, hicache-needs-radix)
    return first_broken([
        check(s.on("enable_hierarchical_cache"), "with-hicache", ("enable_lmcache", "enable_hierarchical_cache")),
        check(s.on("enable_unified_cache_external_linker"), "with-external-linker", ("enable_lmcache", "enable_unified_cache_external_linker")),
        check(s.on("disable_radix_cache"), "radix-cache-off", ("enable_lmcache", "disable_radix_cache")),
        check(algorithm(s) not in (None, "NONE"), "speculative-decoding", ("enable_lmcache", "speculative_algorithm")),
        check(dp_attention(s)[0], "dp-attention", ("enable_lmcache", "dp_size", "attn_dp_size")),
        check(s.integer("dcp_size", 1) > 1, "dcp", ("enable_lmcache", "dcp_size")),
        check(s.on("enable_streaming_session"), "streaming-session", ("enable_lmcache", "enable_streaming_session")),
        check(s.get("hicache_host_memory_mode") == "buffer_only", "buffer-only-host-memory", ("enable_lmcache", "hicache_host_memory_mode")),
        check(s.get("disaggregation_mode") not in (None, "null"), "pd-disaggregation", ("enable_lmcache", "disaggregation_mode")),
    ])


def written_backends(s: Settings) -> tuple[str | None, str | None]:
    """The (prefill, decode) attention backends as written; None where SGLang chooses.

    A written fa3 with --kv-cache-dtype fp8_e5m2 counts as triton: SGLang replaces it
    before any check (FlashAttention3 takes FP8 only as e4m3; overrides.py
    _attention_backend_fa3_fp8_fallback), and e.g. the prefill-only pool then refuses it.
    """
    whole = s.get("attention_backend")
    if whole == "fa3" and s.get("kv_cache_dtype") == "fp8_e5m2":
        whole = "triton"
    prefill = s.get("prefill_attention_backend") if s.has("prefill_attention_backend") else None
    decode = s.get("decode_attention_backend") if s.has("decode_attention_backend") else None
    return prefill or whole, decode or whole


@predicate("prefill-only-no-kv-cache")
def _prefill_only_no_kv_cache(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("prefill_only_disable_kv_cache"):
        return None
    name, dtype = "prefill_only_disable_kv_cache", s.get("kv_cache_dtype")
    prefill, _ = written_backends(s)
    return first_broken([
        check(not s.on("is_embedding"), "not-embedding", (name,)),
        check(dtype in ("nvfp4", "fp4_mx_block16"), "fp4-kv-cache", (name, "kv_cache_dtype"), dtype=dtype),
        check(dtype == "mxfp8", "mxfp8-kv-cache", (name, "kv_cache_dtype")),
        check(s.get("chunked_prefill_size") != -1, "chunked-prefill-on", (name, "chunked_prefill_size")),
        check(not s.on("disable_radix_cache"), "radix-cache-on", (name, "disable_radix_cache")),
        check(s.integer("attn_cp_size", 1) > 1, "attention-cp", (name, "attn_cp_size")),
        check(s.on("enable_prefill_cp"), "prefill-cp", (name, "enable_prefill_cp")),
        check(s.on("enable_hisparse"), "hisparse", (name, "enable_hisparse")),
        # The backend half runs after SGLang resolved the backend: decided only when written.
        check(prefill is not None and prefill not in ("fa3", "fa4"), "prefill-backend-not-fa", (name, "attention_backend", "prefill_attention_backend"), prefill=prefill),
    ])


@predicate("mamba-state-args")
def _mamba_state_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("mamba_cache_philox_rounds"):
        return None
    rounds, states = s.integer("mamba_cache_philox_rounds", 0), s.integer("mamba_max_states_per_path", -1)
    int8 = s.on("enable_int8_mamba_checkpoint")
    return first_broken([
        check(rounds < 0, "philox-rounds-negative", ("mamba_cache_philox_rounds",)),
        check(states == 0 or states < -1, "max-states-per-path", ("mamba_max_states_per_path",), states=states),
        check(s.on("enable_mamba_cache_stochastic_rounding") and s.get("mamba_ssm_dtype") != "float16", "stochastic-rounding-dtype", ("enable_mamba_cache_stochastic_rounding", "mamba_ssm_dtype")),
        check(int8 and s.on("enable_hierarchical_cache"), "int8-with-hicache", ("enable_int8_mamba_checkpoint", "enable_hierarchical_cache")),
        check(int8 and s.get("radix_cache_backend") is not None, "int8-with-radix-backend", ("enable_int8_mamba_checkpoint", "radix_cache_backend")),
        check(int8 and s.on("enable_lmcache"), "int8-with-lmcache", ("enable_int8_mamba_checkpoint", "enable_lmcache")),
    ])


_NVFP4_PREFILL_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}  # as kv_cache_hook.py


_NVFP4_DEQUANT_OF_BACKEND = {backend: dtype for dtype, backend in _NVFP4_PREFILL_BACKEND.items()}


@predicate("nvfp4-prefill-dequant")
def _nvfp4_prefill_dequant(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("prefill_kv_cache_dequant_dtype"):
        return None
    requested, dtype = s.get("prefill_kv_cache_dequant_dtype", "auto"), s.get("kv_cache_dtype")
    if dtype != "nvfp4":
        return first_broken([check(requested != "auto", "dequant-without-nvfp4", ("prefill_kv_cache_dequant_dtype", "kv_cache_dtype"))])
    explicit_prefill = s.get("prefill_attention_backend")
    explicit = explicit_prefill or s.get("attention_backend")
    if requested == "auto" and explicit is not None:
        if explicit not in _NVFP4_DEQUANT_OF_BACKEND:
            return first_broken([check(True, "backend-without-dequant", ("kv_cache_dtype", "attention_backend", "prefill_attention_backend"), explicit=explicit)])
        requested = _NVFP4_DEQUANT_OF_BACKEND[explicit]
    target = _NVFP4_PREFILL_BACKEND.get(requested)  # None: SGLang picks by GPU generation
    decode = s.get("decode_attention_backend")
    return first_broken([
        check(target is not None and explicit_prefill is not None and explicit_prefill != target, "prefill-backend-not-target", ("prefill_kv_cache_dequant_dtype", "prefill_attention_backend"), requested=requested, target=target, explicit_prefill=explicit_prefill),
        check(decode not in (None, "trtllm_mha"), "decode-backend-not-trtllm-mha", ("kv_cache_dtype", "decode_attention_backend"), decode=decode),
    ])


# kv_cache_hook.py's allow-lists, joined over the model kinds (MLA, MHA, asymmetric K/V):
# a backend outside the union is refused for every checkpoint.
_PAGE_MAJOR_FULL = frozenset({"triton", "fa3", "fa4", "flashinfer", "trtllm_mha", "trtllm_mla", "cutedsl_mla",
                              "flashmla"})


_LINEAR_DECODE = frozenset({"triton", "flashinfer", "cutedsl", "helion"})


_LINEAR_PREFILL = frozenset({"triton", "flashkda", "flashinfer", "cutedsl", "helion"})


_SPEC_VERIFY = frozenset({"triton", "trtllm_mla", "cutedsl_mla", "flashmla", "flashinfer", "fa3"})


_SPEC_MHA = frozenset({"triton", "flashinfer", "fa3", "trtllm_mha"})


_UM_ALGOS = (None, "DSPARK", "EAGLE", "EAGLE3", "DFLASH")


_UM_DCP = frozenset({"flashinfer", "trtllm_mla", "cutedsl_mla"})


def _named(s: Settings) -> set[str]:
    return {b for b in written_backends(s) if b is not None}


def _page_major_checks(s: Settings) -> list[Check]:
    unified = s.on("enable_unified_memory")
    backends = _named(s)
    decode = s.get("linear_attn_decode_backend") or s.get("linear_attn_backend")
    prefill = s.get("linear_attn_prefill_backend") or s.get("linear_attn_backend")
    attn = ("enable_unified_memory", "attention_backend", "prefill_attention_backend", "decode_attention_backend")
    return [
        check(not unified, "page-major-without-unified-memory", ("enable_page_major_kv_layout",)),
        check(not backends <= _PAGE_MAJOR_FULL, "attention-backends", attn, written=sorted(backends), allowed=sorted(_PAGE_MAJOR_FULL)),
        check(decode not in _LINEAR_DECODE | {None}, "linear-decode-backend", ("enable_unified_memory", "linear_attn_decode_backend"), allowed=sorted(_LINEAR_DECODE), decode=decode),
        check(prefill not in _LINEAR_PREFILL | {None}, "linear-prefill-backend", ("enable_unified_memory", "linear_attn_prefill_backend"), allowed=sorted(_LINEAR_PREFILL), prefill=prefill),
        check(s.get("mamba_backend") not in (None, "triton"), "mamba-backend", ("enable_unified_memory", "mamba_backend")),
    ]


def _pd_checks(s: Settings) -> list[Check]:
    if s.get("disaggregation_mode") in (None, "null"):
        return []
    transfer, algo = s.get("disaggregation_transfer_backend"), algorithm(s)
    offload = s.on("disaggregation_decode_enable_offload_kvcache")
    return [
        check(transfer != "mooncake", "pd-transfer-backend", ("enable_unified_memory", "disaggregation_transfer_backend"), transfer=transfer),
        check(s.integer("pp_size", 1) != 1, "pd-pipeline-parallel", ("enable_unified_memory", "pp_size")),
        check(transfer == "mooncake" and algo is not None, "pd-speculative-mooncake", ("enable_unified_memory", "speculative_algorithm")),
        check(s.env_true("SGLANG_DISABLE_LAZY_COMPACTION"), "pd-lazy-compaction-off", ("enable_unified_memory", "SGLANG_DISABLE_LAZY_COMPACTION")),
        check(s.on("enable_hisparse"), "pd-hisparse", ("enable_unified_memory", "enable_hisparse")),
        check(offload and s.get("hicache_storage_backend") != "file", "pd-offload-storage", ("enable_unified_memory", "hicache_storage_backend")),
    ]


def _spec_checks(s: Settings) -> list[Check]:
    algo, backends, dcp = algorithm(s), _named(s), s.integer("dcp_size", 1) > 1
    topk = s.get("speculative_eagle_topk")
    checks: list[Check] = [
        check(algo not in _UM_ALGOS, "spec-algorithm", ("enable_unified_memory", "speculative_algorithm"), algo=algo),
        check(topk not in (None, 1), "spec-topk", ("enable_unified_memory", "speculative_eagle_topk"), topk=topk),
    ]
    if algo in ("EAGLE", "EAGLE3"):
        target = _SPEC_VERIFY | _SPEC_MHA
        draft_name = s.get("speculative_draft_attention_backend")
        draft = {draft_name} if draft_name else backends
        checks += [
            check(not backends <= target, "eagle-target-backends", ("enable_unified_memory", "attention_backend"), allowed=sorted(target), written=sorted(backends)),
            check(not draft <= _SPEC_MHA, "eagle-draft-backend", ("enable_unified_memory", "speculative_draft_attention_backend"), draft=sorted(draft), allowed=sorted(_SPEC_MHA)),
        ]
    allowed = {"DSPARK": _SPEC_VERIFY | {"fa4"}, "DFLASH": _SPEC_MHA}.get(str(algo))
    if allowed is not None:
        allowed = allowed - {"flashinfer"} if dcp else allowed
        checks.append(check(not backends <= allowed, "spec-backends", ("enable_unified_memory", "attention_backend"), algo=algo, allowed=sorted(allowed), written=sorted(backends)))
    return checks


def _pool_tail_checks(s: Settings) -> list[Check]:
    eagle = algorithm(s) in ("EAGLE", "EAGLE3")
    checks: list[Check] = [
        check(s.on("enable_two_batch_overlap"), "two-batch-overlap", ("enable_unified_memory", "enable_two_batch_overlap")),
        check(s.on("enable_lmcache"), "lmcache", ("enable_unified_memory", "enable_lmcache")),
        check(s.on("enable_unified_cache_external_linker"), "external-linker", ("enable_unified_memory",
                                                              "enable_unified_cache_external_linker")),
        check(eagle and retraction_backup(s) == "host_pool", "eagle-host-pool-backup", ("enable_unified_memory", "disaggregation_decode_retraction_backup")),
        check(eagle and s.on("enable_hierarchical_cache"), "eagle-hicache", ("enable_unified_memory", "enable_hierarchical_cache")),
    ]
    if s.integer("dcp_size", 1) > 1:
        backends = _named(s)
        checks += [
            check(s.get("disaggregation_mode") not in (None, "null"), "dcp-with-pd", ("enable_unified_memory", "dcp_size")),
            check(not backends <= _UM_DCP, "dcp-backends", ("enable_unified_memory", "dcp_size", "attention_backend"), allowed=sorted(_UM_DCP), written=sorted(backends)),
        ]
    return checks


@predicate("unified-memory-pool")
def _unified_memory_pool(s: Settings, rule: RuleSpec) -> Hit | None:
    if not (s.on("enable_unified_memory") or s.on("enable_page_major_kv_layout")):
        return None
    fp4 = check(s.on("enable_unified_memory") and s.get("kv_cache_dtype") in ("nvfp4", "fp4_mx_block16"), "fp4-kv-cache", ("enable_unified_memory", "kv_cache_dtype"))
    checks = [fp4, *_page_major_checks(s)]
    if s.on("enable_unified_memory"):
        checks += [*_pd_checks(s), *_spec_checks(s), *_pool_tail_checks(s)]
    return first_broken(checks)


_NOT_SHARDABLE_SPEC = frozenset({"EAGLE3", "STANDALONE", "NGRAM", "DFLASH", "DSPARK"})  # never SGLang's EAGLE


def _shard_flag_checks(s: Settings) -> list[Check]:
    def on(dest: str) -> Check:
        return check(s.on(dest), "unsupported-feature", ("enable_kv_cache_sharding", dest), option=s.flag(dest))
    return [
        check(s.get("disaggregation_mode") != "prefill", "not-pd-prefill", ("enable_kv_cache_sharding", "disaggregation_mode")),
        # SGLang allows speculation only for EAGLE (top-k 1) on a GLM DSA checkpoint: the model
        # half is the checkpoint's, but these algorithms and multi-layer EAGLE fail on any model.
        check(algorithm(s) in _NOT_SHARDABLE_SPEC or s.on("enable_multi_layer_eagle"), "speculative-decoding", ("enable_kv_cache_sharding", "speculative_algorithm")),
        check(s.get("dllm_algorithm") is not None, "diffusion-model", ("enable_kv_cache_sharding", "dllm_algorithm")),
        check(s.get("radix_cache_backend") is not None, "radix-cache-backend", ("enable_kv_cache_sharding", "radix_cache_backend")),
        on("enable_unified_cache_external_linker"), on("enable_streaming_session"),
        on("enable_session_radix_cache"), on("enable_flexkv"), on("enable_unified_memory"),
        check(s.integer("dcp_size", 1) > 1, "dcp", ("enable_kv_cache_sharding", "dcp_size")),
        check(s.on("enable_hierarchical_cache") and s.get("hicache_storage_backend") is not None, "hicache-storage", ("enable_kv_cache_sharding", "hicache_storage_backend")),
        on("enable_lmcache"), on("enable_hisparse"),
        check(s.on("enable_dynamic_chunking") and s.integer("pp_size", 1) > 1, "dynamic-chunking-with-pp", ("enable_kv_cache_sharding", "enable_dynamic_chunking")),
        on("enable_two_batch_overlap"),
    ]


def _shard_backend_checks(s: Settings) -> list[Check]:
    prefill, _ = written_backends(s)
    if prefill == "dsa":
        return [
            check(not s.on("enable_prefill_cp") or s.integer("attn_cp_size", 1) <= 1
             or s.get("cp_strategy") != "interleave" or s.integer("pp_size", 1) != 1, "dsa-prefill-cp", ("enable_kv_cache_sharding", "attention_backend")),
            check(s.get("dsa_prefill_backend") != "trtllm" or s.get("dsa_decode_backend") != "trtllm"
             or s.get("kv_cache_dtype") != "fp8_e4m3" or s.get("page_size") != 64, "dsa-trtllm-fp8-page", ("enable_kv_cache_sharding", "attention_backend")),
            quiet(True),  # the rest reads the checkpoint's DSA index config
        ]
    mla = prefill == "trtllm_mla"
    return [
        check(prefill is not None and prefill not in ("fa3", "trtllm_mla"), "prefill-backend", ("enable_kv_cache_sharding", "attention_backend", "prefill_attention_backend"), prefill=prefill),
        check(mla and s.integer("attn_cp_size", 1) > 1, "trtllm-mla-with-cp", ("enable_kv_cache_sharding", "attn_cp_size")),
        check(mla and s.on("disable_chunked_prefix_cache"), "trtllm-mla-without-chunked-prefix-cache", ("enable_kv_cache_sharding",
                                                             "disable_chunked_prefix_cache")),
    ]


@predicate("kv-cache-sharding")
def _kv_cache_sharding(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_kv_cache_sharding"):
        return None
    transfer = s.get("disaggregation_transfer_backend")
    page, chunk = s.get("page_size"), s.get("chunked_prefill_size")
    # An unwritten page size is left to SGLang: its default is 1, but model overrides set
    # their own (MiniMax M3 128, Nemotron-H 64, ...), so gen names only a written one.
    return first_broken([
        *_shard_flag_checks(s), *_shard_backend_checks(s),
        check(transfer not in ("mooncake", "nixl"), "transfer-backend", ("enable_kv_cache_sharding", "disaggregation_transfer_backend"), transfer=transfer),
        check(isinstance(page, int) and page <= 1, "page-size-one", ("enable_kv_cache_sharding", "page_size"), page=page),
        check(isinstance(chunk, int) and chunk <= 0, "chunked-prefill-off", ("enable_kv_cache_sharding", "chunked_prefill_size"), chunk=chunk),
    ])
