"""Predicates of the serving rules: model name, memory fraction, ports, parsers."""

from __future__ import annotations

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


@predicate("served-model-colon")
def _served_colon(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("served_model_name")
    if value is None or ":" not in str(value):
        return None
    return Hit(("served_model_name",), {"name": s.flag("served_model_name"), "value": value,
                                        "suggestion": str(value).replace(":", "-")})


@predicate("port-grpc-0515")
def _port_grpc(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("port")
    if not isinstance(value, int) or value > 65535 or value + 10000 <= 65535 or "SGLANG_GRPC_PORT" in s.env:
        return None
    return Hit(("port",), {"port": s.flag("port"), "value": value, "grpc": value + 10000})


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


# Backends whose handlers leave page_size as written. FlashMLA always sets 64 (both pins);
# the other MLA/trtllm backends, fa4 (0.5.9) and some models set their own, and there the
# rule stays silent rather than guess SGLang's value.
_PAGE_KEEPING_BACKENDS = frozenset({"fa3", "flashinfer", "triton", "torch_native", "flex_attention"})
_FLASHMLA_PAGE = 64


def _effective_page(s: Settings) -> tuple[int | None, str]:
    """The page size SGLang validates against, and why it differs from the written one."""
    page = s.get("page_size", 1)
    named = {n: s.get(n) for n in ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
             if s.has(n) and s.get(n) is not None}
    flashmla = "flashmla" in (named.get("attention_backend"), named.get("decode_attention_backend"))
    if not set(named.values()) - {"flashmla"} <= _PAGE_KEEPING_BACKENDS:
        return None, ""
    if flashmla:
        return _FLASHMLA_PAGE, f" (FlashMLA sets the page size to {_FLASHMLA_PAGE})"
    return (page if isinstance(page, int) else None), ""


@predicate("chunked-prefill-page")
def _chunked_prefill_page(s: Settings, rule: RuleSpec) -> Hit | None:
    chunk = s.get("chunked_prefill_size")
    if not (s.is_set("chunked_prefill_size") and isinstance(chunk, int)):
        return None  # unwritten, SGLang derives the chunk from the GPU's memory
    page, why = _effective_page(s)
    on, dp, _ = dp_attention(s)
    checked = chunk // dp if on else chunk  # both pins divide the chunk per DP-attention rank first
    if page is None or checked <= 0 or page <= 1 or checked % page == 0 or s.get("disaggregation_mode") == "decode":
        return None
    if on:
        why += f" (DP attention of size {dp} divides the chunk to {checked} first)"
    step = page * dp if on else page
    return Hit(("chunked_prefill_size", "page_size"), {
        "chunk": s.flag("chunked_prefill_size"), "chunk_value": chunk, "page": s.flag("page_size"),
        "page_value": page, "why": why, "suggestion": max(step, chunk // step * step)})
