"""Predicates of the hierarchical cache, its external linker and HiSparse (hicache_hook.py, hisparse_hook.py).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import algorithm
from generator.sglang.rules.predicates.kv_cache import Check, first_hit, retraction_backup
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def _linker_checks(s: Settings) -> list[Check]:
    config = s.get("unified_cache_external_linker_config")
    linker = s.on("enable_unified_cache_external_linker")
    name = s.flag("enable_unified_cache_external_linker")
    return [
        (config is not None and not isinstance(config, dict), ("unified_cache_external_linker_config",),
         f"{s.flag('unified_cache_external_linker_config')} must be a JSON object",
         f"write {s.flag('unified_cache_external_linker_config')} as a JSON object ({{...}})"),
        (s.on("enable_linker_mla_dedup") and (
            not linker or s.get("unified_cache_external_linker_backend") != "mooncake"),
         ("enable_linker_mla_dedup", "enable_unified_cache_external_linker"),
         f"{s.flag('enable_linker_mla_dedup')} requires the Mooncake linker ({name} with "
         f"{s.flag('unified_cache_external_linker_backend')} mooncake)",
         f"add {name} with {s.flag('unified_cache_external_linker_backend')} mooncake, or drop "
         f"{s.flag('enable_linker_mla_dedup')}"),
        (linker and (s.on("disable_radix_cache") or s.get("radix_cache_backend") is not None),
         ("enable_unified_cache_external_linker", "disable_radix_cache", "radix_cache_backend"),
         f"{name} requires the default UnifiedRadixCache with radix caching enabled",
         f"drop {s.flag('disable_radix_cache')} and {s.flag('radix_cache_backend')}, or drop {name}"),
        (linker and s.on("enable_hierarchical_cache"),
         ("enable_unified_cache_external_linker", "enable_hierarchical_cache"),
         f"{name} and {s.flag('enable_hierarchical_cache')} are mutually exclusive",
         f"drop {name} or {s.flag('enable_hierarchical_cache')}"),
        (linker and s.get("hicache_storage_backend") is not None,
         ("enable_unified_cache_external_linker", "hicache_storage_backend"),
         f"{name} does not use {s.flag('hicache_storage_backend')}",
         f"drop {s.flag('hicache_storage_backend')}, or drop {name}"),
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
    mode_flag, storage_flag, dcp_flag = s.flag("hicache_host_memory_mode"), s.flag("hicache_storage_backend"), \
        s.flag("dcp_size")
    return [
        (mode == "buffer_only" and storage is None, ("hicache_host_memory_mode", "hicache_storage_backend"),
         f"{mode_flag} buffer_only requires a storage backend ({s.flag('hicache_storage_backend')}): host memory "
         "is only a staging buffer", f"add {storage_flag}, or drop {mode_flag} buffer_only"),
        (mode == "buffer_only" and decode, ("hicache_host_memory_mode", "disaggregation_mode"),
         f"{mode_flag} buffer_only is not supported on decode instances", f"drop {mode_flag} buffer_only"),
        (layout not in (None, "layer_first"), ("disaggregation_decode_host_receive_threshold", "hicache_storage_backend"),
         f"the resolved HiCache storage layout '{layout}' (for {s.flag('hicache_storage_backend')} {storage}) "
         f"cannot share the layer_first decode host pool used by KV transfer "
         f"({s.flag('disaggregation_decode_host_receive_threshold')} < 1)",
         f"drop {s.flag('hicache_io_backend')} {s.get('hicache_io_backend')} (the layout then stays layer_first), or "
         f"set {s.flag('disaggregation_decode_host_receive_threshold')} 1"),
        (dcp and storage is not None and mode == "buffer_only", ("enable_hierarchical_cache", "dcp_size"),
         "HiCache L3 with DCP does not support buffer_only host memory",
         f"drop {mode_flag} buffer_only, or set {dcp_flag} 1"),
        (dcp and algorithm(s) not in (None, "DSPARK"), ("enable_hierarchical_cache", "dcp_size",
                                                         "speculative_algorithm"),
         f"HiCache with {dcp_flag} > 1 only supports DSPARK speculative decoding",
         f"set {s.flag('speculative_algorithm')} DSPARK or drop it, or set {dcp_flag} 1"),
        (dcp and s.on("enable_lmcache"), ("enable_lmcache", "dcp_size"),
         f"{s.flag('enable_lmcache')} with {dcp_flag} > 1 is not supported",
         f"drop {s.flag('enable_lmcache')}, or set {dcp_flag} 1"),
        (dcp and s.on("enable_hisparse"), ("enable_hisparse", "dcp_size"),
         f"{s.flag('enable_hisparse')} with {dcp_flag} > 1 is not supported",
         f"drop {s.flag('enable_hisparse')}, or set {dcp_flag} 1"),
    ]


@predicate("hicache-config")
def _hicache_config(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("hicache_host_memory_fraction"):
        return None
    fraction = s.get("hicache_host_memory_fraction")
    checks: list[Check] = [
        (isinstance(fraction, (int, float)) and not 0 < fraction <= 1, ("hicache_host_memory_fraction",),
         f"{s.flag('hicache_host_memory_fraction')} must be in (0, 1], got {fraction}",
         f"set {s.flag('hicache_host_memory_fraction')} above 0 and at most 1"),
        *_linker_checks(s),
        (s.on("enable_unified_cache_external_linker"), (), None),  # SGLang returns here
    ]
    active = s.on("enable_hierarchical_cache") or s.on("disaggregation_decode_enable_offload_kvcache") \
        or (s.get("disaggregation_mode") == "decode"
            and retraction_backup(s) in (None, "host_pool"))
    if active:
        checks += _hicache_checks(s)
    return first_hit(checks)


@predicate("hisparse-args")
def _hisparse_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.on("enable_hisparse"):
        return None
    name, algo = s.flag("enable_hisparse"), algorithm(s)
    spec = algo is not None and algo.upper() != "NONE"
    topk = s.get("speculative_eagle_topk") or 1
    return first_hit([
        (not s.on("disable_radix_cache"), ("enable_hisparse", "disable_radix_cache"),
         f"hierarchical sparse attention ({name}) currently requires {s.flag('disable_radix_cache')}",
         f"add {s.flag('disable_radix_cache')}"),
        (s.on("enable_mixed_chunk"), ("enable_hisparse", "enable_mixed_chunk"),
         f"{name} does not support {s.flag('enable_mixed_chunk')} yet", f"drop {s.flag('enable_mixed_chunk')}"),
        (spec and topk != 1, ("enable_hisparse", "speculative_eagle_topk"),
         f"the minimal HiSparse spec integration supports linear speculation only; use "
         f"{s.flag('speculative_eagle_topk')} 1", f"set {s.flag('speculative_eagle_topk')} 1"),
        (spec and s.on("speculative_adaptive"), ("enable_hisparse", "speculative_adaptive"),
         f"HiSparse speculative decoding uses statically sized swap state; {s.flag('speculative_adaptive')} is "
         "not supported", f"drop {s.flag('speculative_adaptive')}"),
    ], hisparse=name)


@predicate("hicache-needs-radix")
def _hicache_needs_radix(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_hierarchical_cache", False):
        return None
    hicache, no_radix = s.flag("enable_hierarchical_cache"), s.flag("disable_radix_cache")
    if s.get("disable_radix_cache", False):
        return Hit(("enable_hierarchical_cache", "disable_radix_cache"),
                   {"hicache": hicache, "no_radix": no_radix, "fix": "drop one of them"})
    # SGLang also sets disable_radix_cache itself before this check: on a PD decode server
    # (0.5.23: unless --disaggregation-decode-enable-radix-cache), and with the dual-chunk
    # attention backend (0.5.9; 0.5.23 has no such backend).
    if s.get("attention_backend") == "dual_chunk_flash_attn":
        backend = s.flag("attention_backend")
        return Hit(("enable_hierarchical_cache", "attention_backend"), {
            "hicache": hicache, "no_radix": f"{no_radix} (which {backend} dual_chunk_flash_attn sets)",
            "fix": f"drop {hicache}, or use another {backend}"})
    keep = "disaggregation_decode_enable_radix_cache"
    if s.get("disaggregation_mode") != "decode" or (s.has(keep) and s.get(keep, False)):
        return None
    opt_in = f", or add {s.flag(keep)}" if s.has(keep) else ""
    return Hit(("enable_hierarchical_cache", "disaggregation_mode"), {
        "hicache": hicache, "no_radix": f"{no_radix} (which {s.flag('disaggregation_mode')} decode sets)",
        "fix": f"drop {hicache} on a PD decode server{opt_in}"})
