"""Predicates of the KV pool layouts (SGLang 0.5.23): unified memory, KV sharding, HiCache, HiSparse.

Each reports the first of SGLang's own checks the settings break, in its order and words
(kv_cache_hook.py, kv_shard_hook.py, hicache_hook.py, hisparse_hook.py). Checks that read
the checkpoint's config are left to SGLang; where one of them comes first, the settings a
check after it reads are refused by SGLang either way, so the rule still names them.
Attention backends count only where written: SGLang's automatic choice depends on the GPU.
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import algorithm
from generator.sglang.rules.predicates.gkv import Check, first_hit, retraction_backup, written_backends
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

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
