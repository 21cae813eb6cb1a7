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
        check(threshold < 0 or estimate < 0, None, policy, detail=
         f"--radix-eviction-policy tlru requires non-negative 'threshold' and 'next_prompt_estimate' in "
         f"{s.flag('radix_eviction_policy_config')}, got {threshold} and {estimate}",
         fix=f"give 'threshold' and 'next_prompt_estimate' values of 0 or more in {s.flag('radix_eviction_policy_config')}"),
        check(threshold <= estimate, None, policy, detail=
         f"--radix-eviction-policy tlru needs 'threshold' greater than 'next_prompt_estimate' in "
         f"{s.flag('radix_eviction_policy_config')}, got {threshold} <= {estimate}",
         fix=f"raise 'threshold' above 'next_prompt_estimate' in {s.flag('radix_eviction_policy_config')}"),
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
    flag = f"{s.flag(backup)}=host_pool"
    return [
        check(s.get("disaggregation_mode") != "decode", None, (backup, "disaggregation_mode"), detail=f"{flag} is only supported on a PD decode server", fix=f"set {s.flag('disaggregation_mode')} decode, or drop the host_pool backup ({s.flag(backup)} host_pool, "
         f"or {s.flag('disaggregation_decode_host_receive_threshold')} below 1)"),
        check(s.integer("dcp_size", 1) > 1, None, (backup, "dcp_size"), detail=f"{flag} does not support {s.flag('dcp_size')} > 1", fix=f"set {s.flag('dcp_size')} 1, or use another {s.flag(backup)}"),
        check(s.on("enable_priority_scheduling") and not s.on("disable_priority_preemption"), None, (backup, "enable_priority_scheduling"), detail=f"{flag} requires {s.flag('disable_priority_preemption')} when priority scheduling is enabled", fix=f"add {s.flag('disable_priority_preemption')}, or drop {s.flag('enable_priority_scheduling')}"),
    ]


def _offload_checks(s: Settings) -> list[Check]:
    offload = "disaggregation_decode_enable_offload_kvcache"
    if not s.on(offload):
        return []
    decode = s.get("disaggregation_mode") == "decode"
    name = s.flag(offload)
    checks: list[Check] = [check(not decode, None, (offload, "disaggregation_mode"), detail=f"{name} is only supported for decode side", fix=f"drop {name}, or set {s.flag('disaggregation_mode')} decode")]
    if not s.at_least(0, 5, 23):
        return checks + [check(s.env_true("SGLANG_ENABLE_SPEC_V2"), None, (offload, "SGLANG_ENABLE_SPEC_V2"), detail="Spec v2 (SGLANG_ENABLE_SPEC_V2) and decode offload kv cache are incompatible", fix=f"unset SGLANG_ENABLE_SPEC_V2, or drop {name}")]
    return checks + [
        check(s.get("hicache_storage_backend") is None, None, (offload, "hicache_storage_backend"), detail=f"{name} is only supported when {s.flag('hicache_storage_backend')} is provided", fix=f"add {s.flag('hicache_storage_backend')}, or drop {name}"),
        check(retraction_backup(s) == "host_pool", None, (offload, "disaggregation_decode_retraction_backup"), detail=f"{name} and {s.flag('disaggregation_decode_retraction_backup')}=host_pool are mutually "
         "exclusive: both build a decode host pool", fix=f"drop {name}, or the host_pool retraction backup"),
    ]


def _swa_checks(s: Settings) -> list[Check]:
    ratio, tails = s.get("swa_full_tokens_ratio"), s.get("swa_prefix_tails") if s.has("swa_prefix_tails") else None
    return [
        check(_number(ratio) and not 0 < ratio <= 1.0, None, ("swa_full_tokens_ratio",), detail=f"{s.flag('swa_full_tokens_ratio')} should be in range (0, 1.0], got {ratio}", fix=f"set {s.flag('swa_full_tokens_ratio')} above 0 and at most 1.0"),
        check(isinstance(tails, int) and tails < 0, None, ("swa_prefix_tails",), detail=f"{s.flag('swa_prefix_tails')} should be a non-negative integer, got {tails}", fix=f"set {s.flag('swa_prefix_tails')} to 0 or more"),
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
    lm = s.flag("enable_lmcache")
    if any(c.broken for c in _cache_checks(s)):
        return None  # SGLang raises at an earlier check of the handler (kv-cache-compat, hicache-needs-radix)
    return first_broken([
        check(s.on("enable_hierarchical_cache"), None, ("enable_lmcache", "enable_hierarchical_cache"), detail=f"{lm} and {s.flag('enable_hierarchical_cache')} are mutually exclusive"),
        check(s.on("enable_unified_cache_external_linker"), None, ("enable_lmcache", "enable_unified_cache_external_linker"), detail=f"{lm} and {s.flag('enable_unified_cache_external_linker')} are mutually exclusive"),
        check(s.on("disable_radix_cache"), None, ("enable_lmcache", "disable_radix_cache"), detail=f"{lm} requires radix cache to be enabled (drop {s.flag('disable_radix_cache')})"),
        check(algorithm(s) not in (None, "NONE"), None, ("enable_lmcache", "speculative_algorithm"), detail="LMCacheUnifiedRadixCache does not yet support speculative decoding"),
        check(dp_attention(s)[0], None, ("enable_lmcache", "dp_size", "attn_dp_size"), detail="LMCacheUnifiedRadixCache does not yet support DP attention"),
        check(s.integer("dcp_size", 1) > 1, None, ("enable_lmcache", "dcp_size"), detail=f"{lm} with {s.flag('dcp_size')} > 1 is not supported: LMCache has no DCP-aware index translation"),
        check(s.on("enable_streaming_session"), None, ("enable_lmcache", "enable_streaming_session"), detail="LMCacheUnifiedRadixCache does not yet support streaming sessions"),
        check(s.get("hicache_host_memory_mode") == "buffer_only", None, ("enable_lmcache", "hicache_host_memory_mode"), detail=f"{s.flag('hicache_host_memory_mode')}=buffer_only is a HiCache-only mode"),
        check(s.get("disaggregation_mode") not in (None, "null"), None, ("enable_lmcache", "disaggregation_mode"), detail="LMCacheUnifiedRadixCache currently supports colocated prefill/decode scheduling only"),
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
        check(not s.on("is_embedding"), None, (name,), detail=f"{s.flag(name)} currently requires {s.flag('is_embedding')}"),
        check(dtype in ("nvfp4", "fp4_mx_block16"), None, (name, "kv_cache_dtype"), detail=f"{s.flag(name)} does not currently support {s.flag('kv_cache_dtype')}={dtype}: the FP4 pool uses a "
         "separate allocation path"),
        check(dtype == "mxfp8", None, (name, "kv_cache_dtype"), detail=f"{s.flag(name)} does not currently support {s.flag('kv_cache_dtype')}=mxfp8: the MXFP8 pool stores "
         "separate scale-factor buffers"),
        check(s.get("chunked_prefill_size") != -1, None, (name, "chunked_prefill_size"), detail=f"{s.flag(name)} requires {s.flag('chunked_prefill_size')}=-1 so the FA backend takes the "
         "fa_skip_kv_cache path"),
        check(not s.on("disable_radix_cache"), None, (name, "disable_radix_cache"), detail=f"{s.flag(name)} requires {s.flag('disable_radix_cache')}: the radix cache indexes KV pool slots that "
         "no longer hold real data"),
        check(s.integer("attn_cp_size", 1) > 1, None, (name, "attn_cp_size"), detail=f"{s.flag(name)} is incompatible with {s.flag('attn_cp_size')} > 1"),
        check(s.on("enable_prefill_cp"), None, (name, "enable_prefill_cp"), detail=f"{s.flag(name)} is incompatible with {s.flag('enable_prefill_cp')}"),
        check(s.on("enable_hisparse"), None, (name, "enable_hisparse"), detail=f"{s.flag(name)} is incompatible with {s.flag('enable_hisparse')}"),
        # The backend half runs after SGLang resolved the backend: decided only when written.
        check(prefill is not None and prefill not in ("fa3", "fa4"), None, (name, "attention_backend", "prefill_attention_backend"), detail=f"{s.flag(name)} currently requires the FA prefill backend (fa3/fa4), but got prefill backend "
         f"'{prefill}'"),
    ])


@predicate("mamba-state-args")
def _mamba_state_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("mamba_cache_philox_rounds"):
        return None
    rounds, states = s.integer("mamba_cache_philox_rounds", 0), s.integer("mamba_max_states_per_path", -1)
    int8 = s.on("enable_int8_mamba_checkpoint")
    i8 = s.flag("enable_int8_mamba_checkpoint")
    return first_broken([
        check(rounds < 0, None, ("mamba_cache_philox_rounds",), detail=f"{s.flag('mamba_cache_philox_rounds')} must be non-negative", fix=f"set {s.flag('mamba_cache_philox_rounds')} to 0 or more"),
        check(states == 0 or states < -1, None, ("mamba_max_states_per_path",), detail=f"{s.flag('mamba_max_states_per_path')} must be -1 (unlimited) or a positive integer, got {states}", fix=f"set {s.flag('mamba_max_states_per_path')} -1 or a positive number"),
        check(s.on("enable_mamba_cache_stochastic_rounding") and s.get("mamba_ssm_dtype") != "float16", None, ("enable_mamba_cache_stochastic_rounding", "mamba_ssm_dtype"), detail=f"stochastic rounding for the Mamba SSM cache requires {s.flag('mamba_ssm_dtype')} float16, "
         f"got {s.get('mamba_ssm_dtype')!r}", fix=f"set {s.flag('mamba_ssm_dtype')} float16, or drop {s.flag('enable_mamba_cache_stochastic_rounding')}"),
        check(int8 and s.on("enable_hierarchical_cache"), None, ("enable_int8_mamba_checkpoint", "enable_hierarchical_cache"), detail=f"{i8} is not supported together with {s.flag('enable_hierarchical_cache')}: the host-offload path is "
         "not int8-aware", fix=f"drop {i8} or {s.flag('enable_hierarchical_cache')}"),
        check(int8 and s.get("radix_cache_backend") is not None, None, ("enable_int8_mamba_checkpoint", "radix_cache_backend"), detail=f"{i8} only supports the built-in mamba radix cache; {s.flag('radix_cache_backend')}="
         f"{s.get('radix_cache_backend')!r} is not int8-aware", fix=f"drop {i8} or {s.flag('radix_cache_backend')}"),
        check(int8 and s.on("enable_lmcache"), None, ("enable_int8_mamba_checkpoint", "enable_lmcache"), detail=f"{i8} is not supported together with {s.flag('enable_lmcache')}: LMCache is not int8-aware", fix=f"drop {i8} or {s.flag('enable_lmcache')}"),
    ])


_NVFP4_PREFILL_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}  # as kv_cache_hook.py


_NVFP4_DEQUANT_OF_BACKEND = {backend: dtype for dtype, backend in _NVFP4_PREFILL_BACKEND.items()}


@predicate("nvfp4-prefill-dequant")
def _nvfp4_prefill_dequant(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("prefill_kv_cache_dequant_dtype"):
        return None
    requested, dtype = s.get("prefill_kv_cache_dequant_dtype", "auto"), s.get("kv_cache_dtype")
    name = s.flag("prefill_kv_cache_dequant_dtype")
    if dtype != "nvfp4":
        return first_broken([check(requested != "auto", None, ("prefill_kv_cache_dequant_dtype", "kv_cache_dtype"), detail=f"{name} applies only with {s.flag('kv_cache_dtype')}=nvfp4")])
    explicit_prefill = s.get("prefill_attention_backend")
    explicit = explicit_prefill or s.get("attention_backend")
    if requested == "auto" and explicit is not None:
        if explicit not in _NVFP4_DEQUANT_OF_BACKEND:
            return first_broken([check(True, None, ("kv_cache_dtype", "attention_backend", "prefill_attention_backend"), detail=f"NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend "
                               f"'{explicit}' provides neither")])
        requested = _NVFP4_DEQUANT_OF_BACKEND[explicit]
    target = _NVFP4_PREFILL_BACKEND.get(requested)  # None: SGLang picks by GPU generation
    decode = s.get("decode_attention_backend")
    return first_broken([
        check(target is not None and explicit_prefill is not None and explicit_prefill != target, None, ("prefill_kv_cache_dequant_dtype", "prefill_attention_backend"), detail=f"{name}={requested} requires prefill backend '{target}', but {s.flag('prefill_attention_backend')}="
         f"'{explicit_prefill}' was set"),
        check(decode not in (None, "trtllm_mha"), None, ("kv_cache_dtype", "decode_attention_backend"), detail=f"NVFP4 decode requires {s.flag('decode_attention_backend')}=trtllm_mha; got '{decode}'"),
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
    layout = "--enable-page-major-kv-layout"
    backends = _named(s)
    decode = s.get("linear_attn_decode_backend") or s.get("linear_attn_backend")
    prefill = s.get("linear_attn_prefill_backend") or s.get("linear_attn_backend")
    attn = ("enable_unified_memory", "attention_backend", "prefill_attention_backend", "decode_attention_backend")
    return [
        check(not unified, None, ("enable_page_major_kv_layout",), detail=f"{layout} without {s.flag('enable_unified_memory')} is temporarily unsupported"),
        check(not backends <= _PAGE_MAJOR_FULL, None, attn, detail=
         f"{layout} (implied by {s.flag('enable_unified_memory')}): the attention backends {sorted(backends)} are "
         f"not in any allowed set ({sorted(_PAGE_MAJOR_FULL)} for MLA/MHA models)"),
        check(decode not in _LINEAR_DECODE | {None}, None, ("enable_unified_memory", "linear_attn_decode_backend"), detail=f"{layout}: linear-attention DECODE backend must be one of {sorted(_LINEAR_DECODE)}; got '{decode}'"),
        check(prefill not in _LINEAR_PREFILL | {None}, None, ("enable_unified_memory", "linear_attn_prefill_backend"), detail=f"{layout}: linear-attention PREFILL backend must be one of {sorted(_LINEAR_PREFILL)}; got '{prefill}'"),
        check(s.get("mamba_backend") not in (None, "triton"), None, ("enable_unified_memory", "mamba_backend"), detail=f"{layout} requires the Triton Mamba kernels; got '{s.get('mamba_backend')}'"),
    ]


def _pd_checks(s: Settings, um: str) -> list[Check]:
    if s.get("disaggregation_mode") in (None, "null"):
        return []
    transfer, algo = s.get("disaggregation_transfer_backend"), algorithm(s)
    offload = s.on("disaggregation_decode_enable_offload_kvcache")
    return [
        check(transfer != "mooncake", None, ("enable_unified_memory", "disaggregation_transfer_backend"), detail=f"{um} with PD disaggregation supports only the mooncake transfer backend; got '{transfer}'"),
        check(s.integer("pp_size", 1) != 1, None, ("enable_unified_memory", "pp_size"), detail=f"{um} with PD disaggregation does not support pipeline parallelism"),
        check(transfer == "mooncake" and algo is not None, None, ("enable_unified_memory", "speculative_algorithm"), detail=f"{um} with PD disaggregation does not support speculative decoding with the Mooncake transfer backend"),
        check(s.env_true("SGLANG_DISABLE_LAZY_COMPACTION"), None, ("enable_unified_memory", "SGLANG_DISABLE_LAZY_COMPACTION"), detail=f"{um} with PD disaggregation requires lazy compaction; unset SGLANG_DISABLE_LAZY_COMPACTION"),
        check(s.on("enable_hisparse"), None, ("enable_unified_memory", "enable_hisparse"), detail=f"{um} with PD disaggregation is not compatible with {s.flag('enable_hisparse')}"),
        check(offload and s.get("hicache_storage_backend") != "file", None, ("enable_unified_memory", "hicache_storage_backend"), detail=f"{um} with decode KV offload currently supports {s.flag('hicache_storage_backend')}=file only"),
    ]


def _spec_checks(s: Settings, um: str) -> list[Check]:
    algo, backends, dcp = algorithm(s), _named(s), s.integer("dcp_size", 1) > 1
    topk = s.get("speculative_eagle_topk")
    checks: list[Check] = [
        check(algo not in _UM_ALGOS, None, ("enable_unified_memory", "speculative_algorithm"), detail=f"{um} only supports {s.flag('speculative_algorithm')} DSPARK, DFLASH, EAGLE and EAGLE3; got '{algo}'"),
        check(topk not in (None, 1), None, ("enable_unified_memory", "speculative_eagle_topk"), detail=f"{um} supports a linear draft chain only ({s.flag('speculative_eagle_topk')} 1); got {topk}"),
    ]
    if algo in ("EAGLE", "EAGLE3"):
        target = _SPEC_VERIFY | _SPEC_MHA
        draft_name = s.get("speculative_draft_attention_backend")
        draft = {draft_name} if draft_name else backends
        checks += [
            check(not backends <= target, None, ("enable_unified_memory", "attention_backend"), detail=f"{um} + EAGLE/EAGLE3 requires the target on the spec-verify-audited attention backends "
             f"{sorted(target)} (got {sorted(backends)})"),
            check(not draft <= _SPEC_MHA, None, ("enable_unified_memory", "speculative_draft_attention_backend"), detail=f"{um} + EAGLE/EAGLE3 runs the draft on {sorted(draft)}, but a fused draft needs one of "
             f"{sorted(_SPEC_MHA)}"),
        ]
    allowed = {"DSPARK": _SPEC_VERIFY | {"fa4"}, "DFLASH": _SPEC_MHA}.get(str(algo))
    if allowed is not None:
        allowed = allowed - {"flashinfer"} if dcp else allowed
        checks.append(check(not backends <= allowed, None, ("enable_unified_memory", "attention_backend"), detail=f"{um} + {algo} requires spec-verify-audited attention backends {sorted(allowed)} for both "
                       f"prefill and decode; got {sorted(backends)}"))
    return checks


def _pool_tail_checks(s: Settings, um: str) -> list[Check]:
    eagle = algorithm(s) in ("EAGLE", "EAGLE3")
    checks: list[Check] = [
        check(s.on("enable_two_batch_overlap"), None, ("enable_unified_memory", "enable_two_batch_overlap"), detail=f"{um} does not support {s.flag('enable_two_batch_overlap')}"),
        check(s.on("enable_lmcache"), None, ("enable_unified_memory", "enable_lmcache"), detail=f"{um} is not yet compatible with {s.flag('enable_lmcache')}"),
        check(s.on("enable_unified_cache_external_linker"), None, ("enable_unified_memory",
                                                              "enable_unified_cache_external_linker"), detail=f"{um} does not support {s.flag('enable_unified_cache_external_linker')}"),
        check(eagle and retraction_backup(s) == "host_pool", None, ("enable_unified_memory", "disaggregation_decode_retraction_backup"), detail=f"{um} + EAGLE/EAGLE3 does not support {s.flag('disaggregation_decode_retraction_backup')}=host_pool"),
        check(eagle and s.on("enable_hierarchical_cache"), None, ("enable_unified_memory", "enable_hierarchical_cache"), detail=f"{um} + EAGLE/EAGLE3 does not support {s.flag('enable_hierarchical_cache')}"),
    ]
    if s.integer("dcp_size", 1) > 1:
        backends = _named(s)
        checks += [
            check(s.get("disaggregation_mode") not in (None, "null"), None, ("enable_unified_memory", "dcp_size"), detail=f"{um} with decode context parallelism ({s.flag('dcp_size')} > 1) does not support PD disaggregation"),
            check(not backends <= _UM_DCP, None, ("enable_unified_memory", "dcp_size", "attention_backend"), detail=f"{um} with decode context parallelism ({s.flag('dcp_size')} > 1) requires {sorted(_UM_DCP)}; "
             f"got {sorted(backends)}"),
        ]
    return checks


@predicate("unified-memory-pool")
def _unified_memory_pool(s: Settings, rule: RuleSpec) -> Hit | None:
    if not (s.on("enable_unified_memory") or s.on("enable_page_major_kv_layout")):
        return None
    um = s.flag("enable_unified_memory")
    fp4 = check(s.on("enable_unified_memory") and s.get("kv_cache_dtype") in ("nvfp4", "fp4_mx_block16"), None, ("enable_unified_memory", "kv_cache_dtype"), detail=f"FP4 KV cache does not yet support {um}")
    checks = [fp4, *_page_major_checks(s)]
    if s.on("enable_unified_memory"):
        checks += [*_pd_checks(s, um), *_spec_checks(s, um), *_pool_tail_checks(s, um)]
    hit = first_broken(checks)
    return None if hit is None else Hit(hit.blame, {**hit.fields, "fix": _pool_fix(s, hit.blame)}, hit.check)


def _pool_fix(s: Settings, blame: tuple[str, ...]) -> str:
    """The fix of a unified-memory check: change the setting it blames after the pool flag, or drop the pool."""
    um, layout = s.flag("enable_unified_memory"), s.flag("enable_page_major_kv_layout")
    if blame == ("enable_page_major_kv_layout",):
        return f"add {um}, or drop {layout}"
    other = blame[1]
    if other.isupper():  # an environment variable
        change = f"unset {other}"
    elif s.get(other) is True:  # a switch the pool does not support
        change = f"drop {s.flag(other)}"
    else:
        change = f"change {s.flag(other)} to a value the message allows"
    return f"{change}, or drop {um} (and {layout})"


_NOT_SHARDABLE_SPEC = frozenset({"EAGLE3", "STANDALONE", "NGRAM", "DFLASH", "DSPARK"})  # never SGLang's EAGLE


def _shard_flag_checks(s: Settings, name: str) -> list[Check]:
    def on(dest: str) -> Check:
        return check(s.on(dest), None, ("enable_kv_cache_sharding", dest), detail=f"{name} does not support {s.flag(dest)}")
    return [
        check(s.get("disaggregation_mode") != "prefill", None, ("enable_kv_cache_sharding", "disaggregation_mode"), detail=f"{name} is only supported on PD prefill workers ({s.flag('disaggregation_mode')} prefill)"),
        # SGLang allows speculation only for EAGLE (top-k 1) on a GLM DSA checkpoint: the model
        # half is the checkpoint's, but these algorithms and multi-layer EAGLE fail on any model.
        check(algorithm(s) in _NOT_SHARDABLE_SPEC or s.on("enable_multi_layer_eagle"), None, ("enable_kv_cache_sharding", "speculative_algorithm"), detail="KV sharding supports speculative decoding only for GLM DSA single-layer NextN MTP with EAGLE and topk=1"),
        check(s.get("dllm_algorithm") is not None, None, ("enable_kv_cache_sharding", "dllm_algorithm"), detail=f"{name} does not support diffusion language models ({s.flag('dllm_algorithm')})"),
        check(s.get("radix_cache_backend") is not None, None, ("enable_kv_cache_sharding", "radix_cache_backend"), detail=f"{name} requires the built-in UnifiedRadixCache and does not support {s.flag('radix_cache_backend')}="
         f"'{s.get('radix_cache_backend')}'"),
        on("enable_unified_cache_external_linker"), on("enable_streaming_session"),
        on("enable_session_radix_cache"), on("enable_flexkv"), on("enable_unified_memory"),
        check(s.integer("dcp_size", 1) > 1, None, ("enable_kv_cache_sharding", "dcp_size"), detail=f"{name} and decode context parallelism ({s.flag('dcp_size')}) are mutually exclusive"),
        check(s.on("enable_hierarchical_cache") and s.get("hicache_storage_backend") is not None, None, ("enable_kv_cache_sharding", "hicache_storage_backend"), detail=f"{name} supports HiCache host offload but not {s.flag('hicache_storage_backend')} yet"),
        on("enable_lmcache"), on("enable_hisparse"),
        check(s.on("enable_dynamic_chunking") and s.integer("pp_size", 1) > 1, None, ("enable_kv_cache_sharding", "enable_dynamic_chunking"), detail=f"{name} does not support {s.flag('enable_dynamic_chunking')} with pipeline parallelism"),
        on("enable_two_batch_overlap"),
    ]


def _shard_backend_checks(s: Settings, name: str) -> list[Check]:
    prefill, _ = written_backends(s)
    if prefill == "dsa":
        return [
            check(not s.on("enable_prefill_cp") or s.integer("attn_cp_size", 1) <= 1
             or s.get("cp_strategy") != "interleave" or s.integer("pp_size", 1) != 1, None, ("enable_kv_cache_sharding", "attention_backend"), detail="DSA KV sharding requires CUDA interleave prefill CP > 1 and PP1"),
            check(s.get("dsa_prefill_backend") != "trtllm" or s.get("dsa_decode_backend") != "trtllm"
             or s.get("kv_cache_dtype") != "fp8_e4m3" or s.get("page_size") != 64, None, ("enable_kv_cache_sharding", "attention_backend"), detail="DSA KV sharding requires TRTLLM prefill/decode with fp8_e4m3 KV and page size 64"),
            quiet(True),  # the rest reads the checkpoint's DSA index config
        ]
    mla = prefill == "trtllm_mla"
    return [
        check(prefill is not None and prefill not in ("fa3", "trtllm_mla"), None, ("enable_kv_cache_sharding", "attention_backend", "prefill_attention_backend"), detail=f"{name} currently requires the fa3 prefill attention backend, or trtllm_mla for plain-TP MLA; "
         f"got '{prefill}'"),
        check(mla and s.integer("attn_cp_size", 1) > 1, None, ("enable_kv_cache_sharding", "attn_cp_size"), detail="KV sharding with trtllm_mla only supports plain-TP MLA (attn_cp_size must be 1)"),
        check(mla and s.on("disable_chunked_prefix_cache"), None, ("enable_kv_cache_sharding",
                                                             "disable_chunked_prefix_cache"), detail="KV sharding with trtllm_mla requires chunked prefix caching"),
    ]


@predicate("kv-cache-sharding")
def _kv_cache_sharding(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_kv_cache_sharding"):
        return None
    name, transfer = s.flag("enable_kv_cache_sharding"), s.get("disaggregation_transfer_backend")
    page, chunk = s.get("page_size"), s.get("chunked_prefill_size")
    # An unwritten page size is left to SGLang: its default is 1, but model overrides set
    # their own (MiniMax M3 128, Nemotron-H 64, ...), so gen names only a written one.
    return first_broken([
        *_shard_flag_checks(s, name), *_shard_backend_checks(s, name),
        check(transfer not in ("mooncake", "nixl"), None, ("enable_kv_cache_sharding", "disaggregation_transfer_backend"), detail=f"{name} currently only supports the mooncake and nixl transfer backends; got '{transfer}'"),
        check(isinstance(page, int) and page <= 1, None, ("enable_kv_cache_sharding", "page_size"), detail=f"{name} requires a real page size ({s.flag('page_size')} 64 recommended), got {page}"),
        check(isinstance(chunk, int) and chunk <= 0, None, ("enable_kv_cache_sharding", "chunked_prefill_size"), detail=f"{name} requires chunked prefill ({s.flag('chunked_prefill_size')} > 0), got {chunk}"),
    ])
