"""Predicates of the KV cache: cache compatibility, LMCache, the prefill-only pool, mamba state, NVFP4 dequant, the unified memory pool, KV sharding.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
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
        (not unified, ("enable_page_major_kv_layout",),
         f"{layout} without {s.flag('enable_unified_memory')} is temporarily unsupported"),
        (not backends <= _PAGE_MAJOR_FULL, attn,
         f"{layout} (implied by {s.flag('enable_unified_memory')}): the attention backends {sorted(backends)} are "
         f"not in any allowed set ({sorted(_PAGE_MAJOR_FULL)} for MLA/MHA models)"),
        (decode not in _LINEAR_DECODE | {None}, ("enable_unified_memory", "linear_attn_decode_backend"),
         f"{layout}: linear-attention DECODE backend must be one of {sorted(_LINEAR_DECODE)}; got '{decode}'"),
        (prefill not in _LINEAR_PREFILL | {None}, ("enable_unified_memory", "linear_attn_prefill_backend"),
         f"{layout}: linear-attention PREFILL backend must be one of {sorted(_LINEAR_PREFILL)}; got '{prefill}'"),
        (s.get("mamba_backend") not in (None, "triton"), ("enable_unified_memory", "mamba_backend"),
         f"{layout} requires the Triton Mamba kernels; got '{s.get('mamba_backend')}'"),
    ]


def _pd_checks(s: Settings, um: str) -> list[Check]:
    if s.get("disaggregation_mode") in (None, "null"):
        return []
    transfer, algo = s.get("disaggregation_transfer_backend"), algorithm(s)
    offload = s.on("disaggregation_decode_enable_offload_kvcache")
    return [
        (transfer != "mooncake", ("enable_unified_memory", "disaggregation_transfer_backend"),
         f"{um} with PD disaggregation supports only the mooncake transfer backend; got '{transfer}'"),
        (s.integer("pp_size", 1) != 1, ("enable_unified_memory", "pp_size"),
         f"{um} with PD disaggregation does not support pipeline parallelism"),
        (transfer == "mooncake" and algo is not None, ("enable_unified_memory", "speculative_algorithm"),
         f"{um} with PD disaggregation does not support speculative decoding with the Mooncake transfer backend"),
        (s.env_true("SGLANG_DISABLE_LAZY_COMPACTION"), ("enable_unified_memory", "SGLANG_DISABLE_LAZY_COMPACTION"),
         f"{um} with PD disaggregation requires lazy compaction; unset SGLANG_DISABLE_LAZY_COMPACTION"),
        (s.on("enable_hisparse"), ("enable_unified_memory", "enable_hisparse"),
         f"{um} with PD disaggregation is not compatible with {s.flag('enable_hisparse')}"),
        (offload and s.get("hicache_storage_backend") != "file", ("enable_unified_memory", "hicache_storage_backend"),
         f"{um} with decode KV offload currently supports {s.flag('hicache_storage_backend')}=file only"),
    ]


def _spec_checks(s: Settings, um: str) -> list[Check]:
    algo, backends, dcp = algorithm(s), _named(s), s.integer("dcp_size", 1) > 1
    topk = s.get("speculative_eagle_topk")
    checks: list[Check] = [
        (algo not in _UM_ALGOS, ("enable_unified_memory", "speculative_algorithm"),
         f"{um} only supports {s.flag('speculative_algorithm')} DSPARK, DFLASH, EAGLE and EAGLE3; got '{algo}'"),
        (topk not in (None, 1), ("enable_unified_memory", "speculative_eagle_topk"),
         f"{um} supports a linear draft chain only ({s.flag('speculative_eagle_topk')} 1); got {topk}"),
    ]
    if algo in ("EAGLE", "EAGLE3"):
        target = _SPEC_VERIFY | _SPEC_MHA
        draft_name = s.get("speculative_draft_attention_backend")
        draft = {draft_name} if draft_name else backends
        checks += [
            (not backends <= target, ("enable_unified_memory", "attention_backend"),
             f"{um} + EAGLE/EAGLE3 requires the target on the spec-verify-audited attention backends "
             f"{sorted(target)} (got {sorted(backends)})"),
            (not draft <= _SPEC_MHA, ("enable_unified_memory", "speculative_draft_attention_backend"),
             f"{um} + EAGLE/EAGLE3 runs the draft on {sorted(draft)}, but a fused draft needs one of "
             f"{sorted(_SPEC_MHA)}"),
        ]
    allowed = {"DSPARK": _SPEC_VERIFY | {"fa4"}, "DFLASH": _SPEC_MHA}.get(str(algo))
    if allowed is not None:
        allowed = allowed - {"flashinfer"} if dcp else allowed
        checks.append((not backends <= allowed, ("enable_unified_memory", "attention_backend"),
                       f"{um} + {algo} requires spec-verify-audited attention backends {sorted(allowed)} for both "
                       f"prefill and decode; got {sorted(backends)}"))
    return checks


def _pool_tail_checks(s: Settings, um: str) -> list[Check]:
    eagle = algorithm(s) in ("EAGLE", "EAGLE3")
    checks: list[Check] = [
        (s.on("enable_two_batch_overlap"), ("enable_unified_memory", "enable_two_batch_overlap"),
         f"{um} does not support {s.flag('enable_two_batch_overlap')}"),
        (s.on("enable_lmcache"), ("enable_unified_memory", "enable_lmcache"),
         f"{um} is not yet compatible with {s.flag('enable_lmcache')}"),
        (s.on("enable_unified_cache_external_linker"), ("enable_unified_memory",
                                                              "enable_unified_cache_external_linker"),
         f"{um} does not support {s.flag('enable_unified_cache_external_linker')}"),
        (eagle and retraction_backup(s) == "host_pool",
         ("enable_unified_memory", "disaggregation_decode_retraction_backup"),
         f"{um} + EAGLE/EAGLE3 does not support {s.flag('disaggregation_decode_retraction_backup')}=host_pool"),
        (eagle and s.on("enable_hierarchical_cache"), ("enable_unified_memory", "enable_hierarchical_cache"),
         f"{um} + EAGLE/EAGLE3 does not support {s.flag('enable_hierarchical_cache')}"),
    ]
    if s.integer("dcp_size", 1) > 1:
        backends = _named(s)
        checks += [
            (s.get("disaggregation_mode") not in (None, "null"), ("enable_unified_memory", "dcp_size"),
             f"{um} with decode context parallelism ({s.flag('dcp_size')} > 1) does not support PD disaggregation"),
            (not backends <= _UM_DCP, ("enable_unified_memory", "dcp_size", "attention_backend"),
             f"{um} with decode context parallelism ({s.flag('dcp_size')} > 1) requires {sorted(_UM_DCP)}; "
             f"got {sorted(backends)}"),
        ]
    return checks


@predicate("unified-memory-pool")
def _unified_memory_pool(s: Settings, rule: RuleSpec) -> Hit | None:
    if not (s.on("enable_unified_memory") or s.on("enable_page_major_kv_layout")):
        return None
    um = s.flag("enable_unified_memory")
    fp4 = (s.on("enable_unified_memory") and s.get("kv_cache_dtype") in ("nvfp4", "fp4_mx_block16"),
           ("enable_unified_memory", "kv_cache_dtype"), f"FP4 KV cache does not yet support {um}")
    checks = [fp4, *_page_major_checks(s)]
    if s.on("enable_unified_memory"):
        checks += [*_pd_checks(s, um), *_spec_checks(s, um), *_pool_tail_checks(s, um)]
    hit = first_hit(checks)
    return None if hit is None else Hit(hit.blame, {**hit.fields, "fix": _pool_fix(s, hit.blame)})


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
        return (s.on(dest), ("enable_kv_cache_sharding", dest), f"{name} does not support {s.flag(dest)}")
    return [
        (s.get("disaggregation_mode") != "prefill", ("enable_kv_cache_sharding", "disaggregation_mode"),
         f"{name} is only supported on PD prefill workers ({s.flag('disaggregation_mode')} prefill)"),
        # SGLang allows speculation only for EAGLE (top-k 1) on a GLM DSA checkpoint: the model
        # half is the checkpoint's, but these algorithms and multi-layer EAGLE fail on any model.
        (algorithm(s) in _NOT_SHARDABLE_SPEC or s.on("enable_multi_layer_eagle"),
         ("enable_kv_cache_sharding", "speculative_algorithm"),
         "KV sharding supports speculative decoding only for GLM DSA single-layer NextN MTP with EAGLE and topk=1"),
        (s.get("dllm_algorithm") is not None, ("enable_kv_cache_sharding", "dllm_algorithm"),
         f"{name} does not support diffusion language models ({s.flag('dllm_algorithm')})"),
        (s.get("radix_cache_backend") is not None, ("enable_kv_cache_sharding", "radix_cache_backend"),
         f"{name} requires the built-in UnifiedRadixCache and does not support {s.flag('radix_cache_backend')}="
         f"'{s.get('radix_cache_backend')}'"),
        on("enable_unified_cache_external_linker"), on("enable_streaming_session"),
        on("enable_session_radix_cache"), on("enable_flexkv"), on("enable_unified_memory"),
        (s.integer("dcp_size", 1) > 1, ("enable_kv_cache_sharding", "dcp_size"),
         f"{name} and decode context parallelism ({s.flag('dcp_size')}) are mutually exclusive"),
        (s.on("enable_hierarchical_cache") and s.get("hicache_storage_backend") is not None,
         ("enable_kv_cache_sharding", "hicache_storage_backend"),
         f"{name} supports HiCache host offload but not {s.flag('hicache_storage_backend')} yet"),
        on("enable_lmcache"), on("enable_hisparse"),
        (s.on("enable_dynamic_chunking") and s.integer("pp_size", 1) > 1,
         ("enable_kv_cache_sharding", "enable_dynamic_chunking"),
         f"{name} does not support {s.flag('enable_dynamic_chunking')} with pipeline parallelism"),
        on("enable_two_batch_overlap"),
    ]


def _shard_backend_checks(s: Settings, name: str) -> list[Check]:
    prefill, _ = written_backends(s)
    if prefill == "dsa":
        return [
            (not s.on("enable_prefill_cp") or s.integer("attn_cp_size", 1) <= 1
             or s.get("cp_strategy") != "interleave" or s.integer("pp_size", 1) != 1,
             ("enable_kv_cache_sharding", "attention_backend"),
             "DSA KV sharding requires CUDA interleave prefill CP > 1 and PP1"),
            (s.get("dsa_prefill_backend") != "trtllm" or s.get("dsa_decode_backend") != "trtllm"
             or s.get("kv_cache_dtype") != "fp8_e4m3" or s.get("page_size") != 64,
             ("enable_kv_cache_sharding", "attention_backend"),
             "DSA KV sharding requires TRTLLM prefill/decode with fp8_e4m3 KV and page size 64"),
            (True, (), None),  # the rest reads the checkpoint's DSA index config
        ]
    mla = prefill == "trtllm_mla"
    return [
        (prefill is not None and prefill not in ("fa3", "trtllm_mla"),
         ("enable_kv_cache_sharding", "attention_backend", "prefill_attention_backend"),
         f"{name} currently requires the fa3 prefill attention backend, or trtllm_mla for plain-TP MLA; "
         f"got '{prefill}'"),
        (mla and s.integer("attn_cp_size", 1) > 1, ("enable_kv_cache_sharding", "attn_cp_size"),
         "KV sharding with trtllm_mla only supports plain-TP MLA (attn_cp_size must be 1)"),
        (mla and s.on("disable_chunked_prefix_cache"), ("enable_kv_cache_sharding",
                                                             "disable_chunked_prefix_cache"),
         "KV sharding with trtllm_mla requires chunked prefix caching"),
    ]


@predicate("kv-cache-sharding")
def _kv_cache_sharding(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_kv_cache_sharding"):
        return None
    name, transfer = s.flag("enable_kv_cache_sharding"), s.get("disaggregation_transfer_backend")
    page, chunk = s.get("page_size"), s.get("chunked_prefill_size")
    # An unwritten page size is left to SGLang: its default is 1, but model overrides set
    # their own (MiniMax M3 128, Nemotron-H 64, ...), so gen names only a written one.
    return first_hit([
        *_shard_flag_checks(s, name), *_shard_backend_checks(s, name),
        (transfer not in ("mooncake", "nixl"), ("enable_kv_cache_sharding", "disaggregation_transfer_backend"),
         f"{name} currently only supports the mooncake and nixl transfer backends; got '{transfer}'"),
        (isinstance(page, int) and page <= 1, ("enable_kv_cache_sharding", "page_size"),
         f"{name} requires a real page size ({s.flag('page_size')} 64 recommended), got {page}"),
        (isinstance(chunk, int) and chunk <= 0, ("enable_kv_cache_sharding", "chunked_prefill_size"),
         f"{name} requires chunked prefill ({s.flag('chunked_prefill_size')} > 0), got {chunk}"),
    ])
