"""Predicates of the rules for KV cache, KV sharding, hierarchical cache, HiSparse and mamba state.

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words. This
module holds the cache-compatibility handler, LMCache, the prefill-only KV pool, the
mamba state and the NVFP4 prefill dequant dtype; gkv_pool.py the pool layouts.
"""

from __future__ import annotations

from typing import Any, Sequence

from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

# One check: (broken, settings to blame, SGLang's words), or with a fourth item, the fix for
# that check (message field "fix", for rules whose fix template is "{fix}"). Words None mean
# "another rule reports this check": SGLang stops there, so this rule stays silent.
Check = tuple[bool, tuple[str, ...], str | None] | tuple[bool, tuple[str, ...], str | None, str]


def first_hit(checks: Sequence[Check], **extra: Any) -> Hit | None:
    """The Hit of the first broken check (SGLang raises at the first), or None."""
    for broken, blame, words, *fix in checks:
        if broken:
            return None if words is None else Hit(blame, {"detail": words, **extra, **({"fix": fix[0]} if fix else {})})
    return None


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
        (threshold < 0 or estimate < 0, policy,
         f"--radix-eviction-policy tlru requires non-negative 'threshold' and 'next_prompt_estimate' in "
         f"{s.flag('radix_eviction_policy_config')}, got {threshold} and {estimate}",
         f"give 'threshold' and 'next_prompt_estimate' values of 0 or more in {s.flag('radix_eviction_policy_config')}"),
        (threshold <= estimate, policy,
         f"--radix-eviction-policy tlru needs 'threshold' greater than 'next_prompt_estimate' in "
         f"{s.flag('radix_eviction_policy_config')}, got {threshold} <= {estimate}",
         f"raise 'threshold' above 'next_prompt_estimate' in {s.flag('radix_eviction_policy_config')}"),
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
        (s.get("disaggregation_mode") != "decode", (backup, "disaggregation_mode"),
         f"{flag} is only supported on a PD decode server",
         f"set {s.flag('disaggregation_mode')} decode, or drop the host_pool backup ({s.flag(backup)} host_pool, "
         f"or {s.flag('disaggregation_decode_host_receive_threshold')} below 1)"),
        (s.integer("dcp_size", 1) > 1, (backup, "dcp_size"), f"{flag} does not support {s.flag('dcp_size')} > 1",
         f"set {s.flag('dcp_size')} 1, or use another {s.flag(backup)}"),
        (s.on("enable_priority_scheduling") and not s.on("disable_priority_preemption"),
         (backup, "enable_priority_scheduling"),
         f"{flag} requires {s.flag('disable_priority_preemption')} when priority scheduling is enabled",
         f"add {s.flag('disable_priority_preemption')}, or drop {s.flag('enable_priority_scheduling')}"),
    ]


def _offload_checks(s: Settings) -> list[Check]:
    offload = "disaggregation_decode_enable_offload_kvcache"
    if not s.on(offload):
        return []
    decode = s.get("disaggregation_mode") == "decode"
    name = s.flag(offload)
    checks: list[Check] = [(not decode, (offload, "disaggregation_mode"),
                            f"{name} is only supported for decode side",
                            f"drop {name}, or set {s.flag('disaggregation_mode')} decode")]
    if not s.at_least(0, 5, 23):
        return checks + [(s.env_true("SGLANG_ENABLE_SPEC_V2"), (offload, "SGLANG_ENABLE_SPEC_V2"),
                          "Spec v2 (SGLANG_ENABLE_SPEC_V2) and decode offload kv cache are incompatible",
                          f"unset SGLANG_ENABLE_SPEC_V2, or drop {name}")]
    return checks + [
        (s.get("hicache_storage_backend") is None, (offload, "hicache_storage_backend"),
         f"{name} is only supported when {s.flag('hicache_storage_backend')} is provided",
         f"add {s.flag('hicache_storage_backend')}, or drop {name}"),
        (retraction_backup(s) == "host_pool", (offload, "disaggregation_decode_retraction_backup"),
         f"{name} and {s.flag('disaggregation_decode_retraction_backup')}=host_pool are mutually "
         "exclusive: both build a decode host pool",
         f"drop {name}, or the host_pool retraction backup"),
    ]


def _swa_checks(s: Settings) -> list[Check]:
    ratio, tails = s.get("swa_full_tokens_ratio"), s.get("swa_prefix_tails") if s.has("swa_prefix_tails") else None
    return [
        (_number(ratio) and not 0 < ratio <= 1.0, ("swa_full_tokens_ratio",),
         f"{s.flag('swa_full_tokens_ratio')} should be in range (0, 1.0], got {ratio}",
         f"set {s.flag('swa_full_tokens_ratio')} above 0 and at most 1.0"),
        (isinstance(tails, int) and tails < 0, ("swa_prefix_tails",),
         f"{s.flag('swa_prefix_tails')} should be a non-negative integer, got {tails}",
         f"set {s.flag('swa_prefix_tails')} to 0 or more"),
    ]


def _cache_checks(s: Settings) -> list[Check]:
    # SGLang's order: host-pool backup, T-LRU (0.5.23), hicache vs no radix (its own rule,
    # hicache-needs-radix), decode offload, SWA ratio and prefix tails.
    # (SGLang turns the radix cache off itself on a PD decode server unless
    # --disaggregation-decode-enable-radix-cache, and with dual-chunk attention: 0.5.9)
    decode_no_radix = s.get("disaggregation_mode") == "decode" and not s.on("disaggregation_decode_enable_radix_cache")
    no_radix = s.on("disable_radix_cache") or decode_no_radix or s.get("attention_backend") == "dual_chunk_flash_attn"
    radix = (s.on("enable_hierarchical_cache") and no_radix, (), None)
    return [*_host_pool_checks(s), *_tlru_checks(s), radix, *_offload_checks(s), *_swa_checks(s)]


@predicate("kv-cache-compat")
def _kv_cache_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    return first_hit(_cache_checks(s))


@predicate("lmcache-compat")
def _lmcache_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_lmcache"):
        return None
    lm = s.flag("enable_lmcache")
    if any(check[0] for check in _cache_checks(s)):
        return None  # SGLang raises at an earlier check of the handler (kv-cache-compat, hicache-needs-radix)
    return first_hit([
        (s.on("enable_hierarchical_cache"), ("enable_lmcache", "enable_hierarchical_cache"),
         f"{lm} and {s.flag('enable_hierarchical_cache')} are mutually exclusive"),
        (s.on("enable_unified_cache_external_linker"), ("enable_lmcache", "enable_unified_cache_external_linker"),
         f"{lm} and {s.flag('enable_unified_cache_external_linker')} are mutually exclusive"),
        (s.on("disable_radix_cache"), ("enable_lmcache", "disable_radix_cache"),
         f"{lm} requires radix cache to be enabled (drop {s.flag('disable_radix_cache')})"),
        (algorithm(s) not in (None, "NONE"), ("enable_lmcache", "speculative_algorithm"),
         "LMCacheUnifiedRadixCache does not yet support speculative decoding"),
        (dp_attention(s)[0], ("enable_lmcache", "dp_size", "attn_dp_size"),
         "LMCacheUnifiedRadixCache does not yet support DP attention"),
        (s.integer("dcp_size", 1) > 1, ("enable_lmcache", "dcp_size"),
         f"{lm} with {s.flag('dcp_size')} > 1 is not supported: LMCache has no DCP-aware index translation"),
        (s.on("enable_streaming_session"), ("enable_lmcache", "enable_streaming_session"),
         "LMCacheUnifiedRadixCache does not yet support streaming sessions"),
        (s.get("hicache_host_memory_mode") == "buffer_only", ("enable_lmcache", "hicache_host_memory_mode"),
         f"{s.flag('hicache_host_memory_mode')}=buffer_only is a HiCache-only mode"),
        (s.get("disaggregation_mode") not in (None, "null"), ("enable_lmcache", "disaggregation_mode"),
         "LMCacheUnifiedRadixCache currently supports colocated prefill/decode scheduling only"),
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
    return first_hit([
        (not s.on("is_embedding"), (name,), f"{s.flag(name)} currently requires {s.flag('is_embedding')}"),
        (dtype in ("nvfp4", "fp4_mx_block16"), (name, "kv_cache_dtype"),
         f"{s.flag(name)} does not currently support {s.flag('kv_cache_dtype')}={dtype}: the FP4 pool uses a "
         "separate allocation path"),
        (dtype == "mxfp8", (name, "kv_cache_dtype"),
         f"{s.flag(name)} does not currently support {s.flag('kv_cache_dtype')}=mxfp8: the MXFP8 pool stores "
         "separate scale-factor buffers"),
        (s.get("chunked_prefill_size") != -1, (name, "chunked_prefill_size"),
         f"{s.flag(name)} requires {s.flag('chunked_prefill_size')}=-1 so the FA backend takes the "
         "fa_skip_kv_cache path"),
        (not s.on("disable_radix_cache"), (name, "disable_radix_cache"),
         f"{s.flag(name)} requires {s.flag('disable_radix_cache')}: the radix cache indexes KV pool slots that "
         "no longer hold real data"),
        (s.integer("attn_cp_size", 1) > 1, (name, "attn_cp_size"),
         f"{s.flag(name)} is incompatible with {s.flag('attn_cp_size')} > 1"),
        (s.on("enable_prefill_cp"), (name, "enable_prefill_cp"),
         f"{s.flag(name)} is incompatible with {s.flag('enable_prefill_cp')}"),
        (s.on("enable_hisparse"), (name, "enable_hisparse"),
         f"{s.flag(name)} is incompatible with {s.flag('enable_hisparse')}"),
        # The backend half runs after SGLang resolved the backend: decided only when written.
        (prefill is not None and prefill not in ("fa3", "fa4"), (name, "attention_backend", "prefill_attention_backend"),
         f"{s.flag(name)} currently requires the FA prefill backend (fa3/fa4), but got prefill backend "
         f"'{prefill}'"),
    ])


@predicate("mamba-state-args")
def _mamba_state_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("mamba_cache_philox_rounds"):
        return None
    rounds, states = s.integer("mamba_cache_philox_rounds", 0), s.integer("mamba_max_states_per_path", -1)
    int8 = s.on("enable_int8_mamba_checkpoint")
    i8 = s.flag("enable_int8_mamba_checkpoint")
    return first_hit([
        (rounds < 0, ("mamba_cache_philox_rounds",), f"{s.flag('mamba_cache_philox_rounds')} must be non-negative",
         f"set {s.flag('mamba_cache_philox_rounds')} to 0 or more"),
        (states == 0 or states < -1, ("mamba_max_states_per_path",),
         f"{s.flag('mamba_max_states_per_path')} must be -1 (unlimited) or a positive integer, got {states}",
         f"set {s.flag('mamba_max_states_per_path')} -1 or a positive number"),
        (s.on("enable_mamba_cache_stochastic_rounding") and s.get("mamba_ssm_dtype") != "float16",
         ("enable_mamba_cache_stochastic_rounding", "mamba_ssm_dtype"),
         f"stochastic rounding for the Mamba SSM cache requires {s.flag('mamba_ssm_dtype')} float16, "
         f"got {s.get('mamba_ssm_dtype')!r}",
         f"set {s.flag('mamba_ssm_dtype')} float16, or drop {s.flag('enable_mamba_cache_stochastic_rounding')}"),
        (int8 and s.on("enable_hierarchical_cache"), ("enable_int8_mamba_checkpoint", "enable_hierarchical_cache"),
         f"{i8} is not supported together with {s.flag('enable_hierarchical_cache')}: the host-offload path is "
         "not int8-aware", f"drop {i8} or {s.flag('enable_hierarchical_cache')}"),
        (int8 and s.get("radix_cache_backend") is not None, ("enable_int8_mamba_checkpoint", "radix_cache_backend"),
         f"{i8} only supports the built-in mamba radix cache; {s.flag('radix_cache_backend')}="
         f"{s.get('radix_cache_backend')!r} is not int8-aware", f"drop {i8} or {s.flag('radix_cache_backend')}"),
        (int8 and s.on("enable_lmcache"), ("enable_int8_mamba_checkpoint", "enable_lmcache"),
         f"{i8} is not supported together with {s.flag('enable_lmcache')}: LMCache is not int8-aware",
         f"drop {i8} or {s.flag('enable_lmcache')}"),
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
        return first_hit([(requested != "auto", ("prefill_kv_cache_dequant_dtype", "kv_cache_dtype"),
                           f"{name} applies only with {s.flag('kv_cache_dtype')}=nvfp4")])
    explicit_prefill = s.get("prefill_attention_backend")
    explicit = explicit_prefill or s.get("attention_backend")
    if requested == "auto" and explicit is not None:
        if explicit not in _NVFP4_DEQUANT_OF_BACKEND:
            return first_hit([(True, ("kv_cache_dtype", "attention_backend", "prefill_attention_backend"),
                               f"NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend "
                               f"'{explicit}' provides neither")])
        requested = _NVFP4_DEQUANT_OF_BACKEND[explicit]
    target = _NVFP4_PREFILL_BACKEND.get(requested)  # None: SGLang picks by GPU generation
    decode = s.get("decode_attention_backend")
    return first_hit([
        (target is not None and explicit_prefill is not None and explicit_prefill != target,
         ("prefill_kv_cache_dequant_dtype", "prefill_attention_backend"),
         f"{name}={requested} requires prefill backend '{target}', but {s.flag('prefill_attention_backend')}="
         f"'{explicit_prefill}' was set"),
        (decode not in (None, "trtllm_mha"), ("kv_cache_dtype", "decode_attention_backend"),
         f"NVFP4 decode requires {s.flag('decode_attention_backend')}=trtllm_mha; got '{decode}'"),
    ])
