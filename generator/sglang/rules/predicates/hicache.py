"""Predicates of the hierarchical cache, its external linker and HiSparse (hicache_hook.py, hisparse_hook.py).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import algorithm
from generator.sglang.rules.predicates.kv_cache import retraction_backup
from generator.sglang.rules.registry import Check, Hit, check, first_broken, predicate, quiet
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def _linker_checks(s: Settings) -> list[Check]:
    config = s.get("unified_cache_external_linker_config")
    linker = s.on("enable_unified_cache_external_linker")
    return [
        check(config is not None and not isinstance(config, dict), "linker-config-not-object", ("unified_cache_external_linker_config",)),
        check(s.on("enable_linker_mla_dedup") and (
            not linker or s.get("unified_cache_external_linker_backend") != "mooncake"), "mla-dedup-without-mooncake", ("enable_linker_mla_dedup", "enable_unified_cache_external_linker")),
        check(linker and (s.on("disable_radix_cache") or s.get("radix_cache_backend") is not None), "linker-without-radix-cache", ("enable_unified_cache_external_linker", "disable_radix_cache", "radix_cache_backend")),
        check(linker and s.on("enable_hierarchical_cache"), "linker-with-hicache", ("enable_unified_cache_external_linker", "enable_hierarchical_cache")),
        check(linker and s.get("hicache_storage_backend") is not None, "linker-with-storage", ("enable_unified_cache_external_linker", "hicache_storage_backend")),
    ]


def _resolved_layout(s: Settings) -> str | None:
    """The HiCache layout after SGLang's rewrites, for a decode host pool (threshold < 1)."""
    layout, io, storage = "layer_first", s.get("hicache_io_backend"), s.get("hicache_storage_backend")
    if storage == "mooncake" and s.integer("dcp_size", 1) > 1:
        return layout
    if storage in ("mooncake", "npu_memcache"):
        layout = {"direct": "page_first_direct", "kernel": "page_first"}.get(str(io), layout)
    if s.on("enable_unified_memory") and layout == "page_first_direct":
        layout = "page_first"
    return layout


def _hicache_checks(s: Settings) -> list[Check]:
    mode, storage, decode = s.get("hicache_host_memory_mode"), s.get("hicache_storage_backend"), \
        s.get("disaggregation_mode") == "decode"
    threshold = s.get("disaggregation_decode_host_receive_threshold", 1.0)
    layout = _resolved_layout(s) if isinstance(threshold, (int, float)) and threshold < 1 else None
    hicache = s.on("enable_hierarchical_cache")
    dcp = hicache and s.integer("dcp_size", 1) > 1
    return [
        check(mode == "buffer_only" and storage is None, "buffer-only-without-storage", ("hicache_host_memory_mode", "hicache_storage_backend")),
        check(mode == "buffer_only" and decode, "buffer-only-on-decode", ("hicache_host_memory_mode", "disaggregation_mode")),
        check(layout not in (None, "layer_first"), "layout-not-layer-first", ("disaggregation_decode_host_receive_threshold", "hicache_storage_backend"), layout=layout, storage=storage),
        check(dcp and storage is not None and mode == "buffer_only", "dcp-buffer-only", ("enable_hierarchical_cache", "dcp_size")),
        check(dcp and algorithm(s) not in (None, "DSPARK"), "dcp-spec-not-dspark", ("enable_hierarchical_cache", "dcp_size",
                                                         "speculative_algorithm")),
        check(dcp and s.on("enable_lmcache"), "dcp-lmcache", ("enable_lmcache", "dcp_size")),
        check(dcp and s.on("enable_hisparse"), "dcp-hisparse", ("enable_hisparse", "dcp_size")),
    ]


@predicate("hicache-config")
def _hicache_config(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("hicache_host_memory_fraction"):
        return None
    fraction = s.get("hicache_host_memory_fraction")
    checks: list[Check] = [
        check(isinstance(fraction, (int, float)) and not 0 < fraction <= 1, "fraction-out-of-range", ("hicache_host_memory_fraction",), fraction=fraction),
        *_linker_checks(s),
        quiet(s.on("enable_unified_cache_external_linker")),  # SGLang returns here
    ]
    active = s.on("enable_hierarchical_cache") or s.on("disaggregation_decode_enable_offload_kvcache") \
        or (s.get("disaggregation_mode") == "decode"
            and retraction_backup(s) in (None, "host_pool"))
    if active:
        checks += _hicache_checks(s)
    return first_broken(checks)


@predicate("hisparse-args")
def _hisparse_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_hisparse"):
        return None
    algo = algorithm(s)
    spec = algo is not None and algo.upper() != "NONE"
    topk = s.get("speculative_eagle_topk") or 1
    return first_broken([
        check(not s.on("disable_radix_cache"), "radix-cache-on", ("enable_hisparse", "disable_radix_cache")),
        check(s.on("enable_mixed_chunk"), "mixed-chunk", ("enable_hisparse", "enable_mixed_chunk")),
        check(spec and topk != 1, "spec-topk-not-one", ("enable_hisparse", "speculative_eagle_topk")),
        check(spec and s.on("speculative_adaptive"), "spec-adaptive", ("enable_hisparse", "speculative_adaptive")),
    ])


@predicate("hicache-needs-radix")
def _hicache_needs_radix(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_hierarchical_cache", False):
        return None
    if s.get("disable_radix_cache", False):
        return Hit(("enable_hierarchical_cache", "disable_radix_cache"), {}, "radix-cache-disabled")
    # SGLang also sets disable_radix_cache itself before this check: on a PD decode server
    # (0.5.23: unless --disaggregation-decode-enable-radix-cache), and with the dual-chunk
    # attention backend (0.5.9; 0.5.23 has no such backend).
    if s.get("attention_backend") == "dual_chunk_flash_attn":
        return Hit(("enable_hierarchical_cache", "attention_backend"), {}, "dual-chunk-attention")
    keep = "disaggregation_decode_enable_radix_cache"
    if s.get("disaggregation_mode") != "decode" or (s.has(keep) and s.get(keep, False)):
        return None
    return Hit(("enable_hierarchical_cache", "disaggregation_mode"), {}, "pd-decode-keeps-radix" if s.has(keep) else "pd-decode")
