"""Predicates of the rules for parallelism layout (elastic EP, DWDP, decode context parallelism, CP/TP group sharing, layernorm SP, LM-head DP).

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.sglang.rules.predicates.gpar_elastic import a2a_of, attn_dp_of, dwdp_on
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def _hit(checks: Sequence[tuple[bool, str, tuple[str, ...]] | tuple[bool, str, tuple[str, ...], str]],
         **fields: str) -> Hit | None:
    """The first broken check as a Hit, plus message fields.

    A check is (broken?, SGLang's words, settings to blame) or, for rules whose fix template is
    "{fix}", (broken?, SGLang's words, settings to blame, the fix for that check).
    """
    for broken, text, blame, *fix in checks:
        if broken:
            return Hit(blame, {"detail": text, **fields, **({"fix": fix[0]} if fix else {})})
    return None


@predicate("dwdp-layout")
def _dwdp_layout(s: Settings, rule: RuleSpec) -> Hit | None:
    dwdp, tp = s.integer("dwdp_size", 1), s.integer("tp_size", 1)
    if not s.has("dwdp_size") or dwdp <= 1:
        return None  # SGLang's handle_dwdp returns for dwdp_size <= 1
    name, tp_name = s.flag("dwdp_size"), s.flag("tp_size")
    drop = f", or drop {name}"
    return _hit([
        (dwdp != tp, f"{name} ({dwdp}) must equal {tp_name} ({tp})", ("dwdp_size", "tp_size"),
         f"set {name} {tp} to match {tp_name}, or {tp_name} {dwdp}"),
        (s.get("disaggregation_mode", "null") not in ("null", "prefill"),
         f"DWDP requires {s.flag('disaggregation_mode')} null or prefill", ("disaggregation_mode", "dwdp_size"),
         f"set {s.flag('disaggregation_mode')} null or prefill{drop}"),
        (bool(s.get("enable_eplb", False)), f"EPLB dynamic migration ({s.flag('enable_eplb')}) conflicts with "
                                            "static DWDP partitioning", ("enable_eplb", "dwdp_size"),
         f"drop {s.flag('enable_eplb')}{drop}"),
        (s.get("speculative_algorithm") is not None, "DWDP does not support speculative decoding (MTP/draft workers)",
         ("speculative_algorithm", "dwdp_size"), f"drop {s.flag('speculative_algorithm')}{drop}"),
        (s.integer("pp_size", 1) != 1, f"DWDP requires {s.flag('pp_size')} 1", ("pp_size", "dwdp_size"),
         f"set {s.flag('pp_size')} 1{drop}"),
        (bool(s.get("enable_two_batch_overlap", False)), "DWDP's prefetch event protocol does not support two-batch "
         f"overlap ({s.flag('enable_two_batch_overlap')})", ("enable_two_batch_overlap", "dwdp_size"),
         f"drop {s.flag('enable_two_batch_overlap')}{drop}"),
    ], dwdp=name)


@predicate("dcp-flags")
def _dcp_flags(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("dcp_size"):
        return None
    dcp, backend, replicate = s.integer("dcp_size", 1), s.get("dcp_comm_backend"), s.get("dcp_replicate_q_proj")
    name, prefill, comm, rep = (s.flag("dcp_size"), s.flag("enable_prefill_cp"), s.flag("dcp_comm_backend"),
                                s.flag("dcp_replicate_q_proj"))
    # An unwritten backend resolves to 'ag_rs' for dcp_size <= 1, else by device ('a2a'/'fi_a2a' on CUDA).
    return _hit([
        (dcp < 1, f"{name} must be >= 1, but got {dcp}", ("dcp_size",), f"set {name} to 1 or more"),
        (dcp > 1 and bool(s.get("enable_prefill_cp", False)), f"{name} > 1 does not support {prefill}",
         ("dcp_size", "enable_prefill_cp"), f"drop {prefill}, or set {name} 1"),
        (backend in ("a2a", "fi_a2a") and dcp <= 1, f"{comm} {backend} requires {name} > 1, but got {dcp}",
         ("dcp_comm_backend", "dcp_size"), f"set {name} > 1, or drop {comm} {backend}"),
        (bool(replicate) and dcp <= 1, f"{rep} requires {name} > 1", ("dcp_replicate_q_proj", "dcp_size"),
         f"set {name} > 1, or drop {rep}"),
        (bool(replicate) and backend is not None and backend not in ("a2a", "fi_a2a"),
         f"{rep} only applies to the a2a/fi_a2a DCP communication backend; got {comm} {backend}",
         ("dcp_replicate_q_proj", "dcp_comm_backend"), f"set {comm} a2a or fi_a2a, or drop {rep}"),
    ], dcp=name)


@predicate("cp-aiter-fusion")
def _cp_aiter_fusion(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_aiter_allreduce_fusion", False):
        return None
    cp, moe_dp = s.integer("attn_cp_size", 1), s.integer("moe_dp_size", 1)
    if cp <= 1 and moe_dp <= 1:
        return None
    which = s.flag("attn_cp_size") if cp > 1 else s.flag("moe_dp_size")
    return Hit(("enable_aiter_allreduce_fusion",), {"fusion": s.flag("enable_aiter_allreduce_fusion"), "which": which})


@predicate("ep-dispatch-needs-a2a")
def _ep_dispatch_needs_a2a(s: Settings, rule: RuleSpec) -> Hit | None:
    algo = s.get("ep_dispatch_algorithm")
    if not s.has("ep_join_mode") or algo not in ("static", "lp") or a2a_of(s) not in (None, "none"):
        return None  # 0.5.23's handle_eplb_and_dispatch (the pin has the elastic-EP flags)
    if s.get("enable_waterfill", False):
        return None  # _a2a_backend_overrides switches the backend to deepep for Waterfill, DWDP or not
    return Hit(("ep_dispatch_algorithm",), {"dispatch": s.flag("ep_dispatch_algorithm"), "algo": algo,
                                            "a2a": s.flag("moe_a2a_backend")})


def _attn_tp(s: Settings) -> int:
    """SGLang's attention-TP width: tp // attn_dp // attn_cp."""
    dp = attn_dp_of(s)
    return max(s.integer("tp_size", 1) // max(dp, 1) // max(s.integer("attn_cp_size", 1), 1), 0)


@predicate("shared-experts-tp-divides")
def _shared_experts_tp(s: Settings, rule: RuleSpec) -> Hit | None:
    size = s.get("shared_experts_tp_size")
    if not isinstance(size, int):
        return None
    attn_tp = _attn_tp(s)
    if size >= 1 and attn_tp % size == 0:
        return None
    return Hit(("shared_experts_tp_size",), {"shared": s.flag("shared_experts_tp_size"), "size": size,
                                             "attn_tp": attn_tp})


@predicate("layernorm-sp-layout")
def _layernorm_sp_layout(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_layernorm_sp", False):
        return None
    tp, pp = s.integer("tp_size", 1), s.integer("pp_size", 1)
    attn_dp = attn_dp_of(s) > 1 or s.get("ep_join_mode") == "scale"
    sp = s.flag("enable_layernorm_sp")
    return _hit([
        (tp <= 1, f"{sp} requires {s.flag('tp_size')} > 1: there is no sequence to shard across a single TP rank",
         ("enable_layernorm_sp", "tp_size")),
        (attn_dp, f"{sp} is not compatible with attention DP", ("enable_layernorm_sp", "attn_dp_size")),
        (pp > 1, f"{sp} is not compatible with pipeline parallelism ({s.flag('pp_size')} {pp})",
         ("enable_layernorm_sp", "pp_size")),
    ], sp=sp)


@predicate("tp-lm-head-a2a")
def _tp_lm_head_a2a(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_tp_lm_head_all_to_all", False):
        return None
    attn_dp = attn_dp_of(s)
    on = attn_dp > 1 or s.get("ep_join_mode") == "scale"
    tp, cp, name = s.integer("tp_size", 1), s.integer("attn_cp_size", 1), s.flag("enable_tp_lm_head_all_to_all")
    return _hit([
        (not on, f"{name} requires attention DP ({s.flag('attn_dp_size')})", ("enable_tp_lm_head_all_to_all",)),
        (dwdp_on(s) or bool(s.get("enable_dp_lm_head", False)), f"{name} uses a TP-sharded LM head and is incompatible with "
                                                   f"{s.flag('enable_dp_lm_head')}",
         ("enable_tp_lm_head_all_to_all", "enable_dp_lm_head")),
        (tp != attn_dp, f"{name} currently requires tp_size == attn_dp_size, got tp_size={tp}, attn_dp_size={attn_dp}",
         ("enable_tp_lm_head_all_to_all", "tp_size")),
        (cp != 1, f"{name} currently requires attn_cp_size == 1, got {cp}", ("enable_tp_lm_head_all_to_all",
                                                                              "attn_cp_size")),
    ], name=name)


@predicate("disagg-decode-tp-divides")
def _disagg_decode_tp(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("disaggregation_decode_tp") or s.get("disaggregation_mode") != "prefill":
        return None
    tp = s.integer("tp_size", 1)
    decode = s.integer("disaggregation_decode_tp", tp)
    larger, smaller = max(tp, decode), min(tp, decode)
    if smaller <= 0 or larger % smaller == 0:
        return None
    return Hit(("disaggregation_decode_tp", "tp_size"), {
        "decode": s.flag("disaggregation_decode_tp"), "decode_value": decode, "tp": s.flag("tp_size"), "tp_value": tp})
