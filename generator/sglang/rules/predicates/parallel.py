"""Predicates of the parallelism rules: nodes, DP attention, node rank, init address."""

from __future__ import annotations

import re

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.predicates.gpar_elastic import dwdp_on
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


@predicate("nnodes-divides")
def _nnodes_divides(s: Settings, rule: RuleSpec) -> Hit | None:
    tp, pp, nnodes = s.integer("tp_size", 1), s.integer("pp_size", 1), s.integer("nnodes", 1)
    if nnodes < 1 or (tp * pp) % nnodes == 0:
        return None
    return Hit(("nnodes", "tp_size", "pp_size"), {
        "tp": s.flag("tp_size"), "tp_value": tp, "pp": s.flag("pp_size"), "pp_value": pp,
        "product": tp * pp, "nnodes": s.flag("nnodes"), "nnodes_value": nnodes})


@predicate("multinode-dp")
def _multinode_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    dp, nnodes = s.integer("dp_size", 1), s.integer("nnodes", 1)
    on, _, _ = dp_attention(s)
    if dp <= 1 or nnodes <= 1 or (on and not s.has("attn_dp_size")):
        return None
    if s.has("attn_dp_size") and on and not s.is_set("attn_dp_size"):
        return None  # 0.5.23 rewrites --dp-size N --enable-dp-attention to --attn-dp-size N
    fix = (f"use {s.flag('attn_dp_size')} N (DP attention) instead of {s.flag('dp_size')}"
           if s.has("attn_dp_size") else f"add {s.flag('enable_dp_attention')}, or run one replica per node")
    return Hit(("dp_size", "nnodes"), {"dp": s.flag("dp_size"), "dp_value": dp, "nnodes_value": nnodes,
                                       "fix": fix})


@predicate("dp-attn-divides")
def _dp_attn_divides(s: Settings, rule: RuleSpec) -> Hit | None:
    on, size, _ = dp_attention(s)
    tp = s.integer("tp_size", 1)
    if not on or tp % size == 0:
        return None
    name = "attn_dp_size" if s.is_set("attn_dp_size") else "dp_size"
    return Hit((name, "tp_size"), {"tp": s.flag("tp_size"), "tp_value": tp, "dp": s.flag(name),
                                   "dp_value": size})


def _dp_ranks(s: Settings) -> int:
    """Data-parallel ranks as SGLang counts them (0.5.23: replicas x attention-DP groups)."""
    if dwdp_on(s):
        return s.integer("dwdp_size", 1)  # 0.5.23's handle_dwdp: attn_dp_size = dwdp_size, dp_size 1
    ranks = s.integer("dp_size", 1)
    if s.has("attn_dp_size"):
        ranks *= s.integer("attn_dp_size", 1)
    return ranks


def _lm_head_dropped(s: Settings) -> bool:
    """True when SGLang silently turns --enable-dp-lm-head off: one DP rank (0.5.23: unless
    an elastic EP node joins with ep_join_mode 'scale')."""
    return _dp_ranks(s) == 1 and s.get("ep_join_mode") != "scale"


@predicate("dp-lm-head")
def _dp_lm_head(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_dp_lm_head", False) or _lm_head_dropped(s):
        return None
    if s.has("attn_dp_size"):
        if dp_attention(s)[0] or dwdp_on(s):
            return None
        fix = f"set {s.flag('attn_dp_size')} > 1, or drop {s.flag('enable_dp_lm_head')}"
    else:
        if s.get("enable_dp_attention", False):
            return None
        fix = f"add {s.flag('enable_dp_attention')}, or drop {s.flag('enable_dp_lm_head')}"
    return Hit(("enable_dp_lm_head",), {"lm_head": s.flag("enable_dp_lm_head"), "fix": fix})


@predicate("dp-lm-head-dropped")
def _dp_lm_head_dropped(s: Settings, rule: RuleSpec) -> Hit | None:
    if not (s.get("enable_dp_lm_head", False) and _lm_head_dropped(s)):
        return None
    return Hit(("enable_dp_lm_head",), {"lm_head": s.flag("enable_dp_lm_head")})


_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9._-]+)):(?P<port>\d{1,5})$")


def dist_init_addr_ok(value: str) -> bool:
    """``host:port`` or ``[v6]:port`` with a port in 1-65535 (what SGLang and NCCL split)."""
    match = _HOST_PORT.match(value)
    return match is not None and 1 <= int(match.group("port")) <= 65535


@predicate("dist-init-addr-form")
def _dist_init_addr(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("dist_init_addr")
    if value is None or dist_init_addr_ok(str(value)):
        return None
    return Hit(("dist_init_addr",), {"dist": s.flag("dist_init_addr"), "value": value})


@predicate("node-rank-range")
def _node_rank(s: Settings, rule: RuleSpec) -> Hit | None:
    rank, nnodes = s.integer("node_rank", 0), s.integer("nnodes", 1)
    if 0 <= rank < max(nnodes, 1):
        return None
    return Hit(("node_rank", "nnodes"), {"rank": s.flag("node_rank"), "rank_value": rank,
                                         "nnodes": s.flag("nnodes"), "nnodes_value": nnodes})


@predicate("eplb-needs-ep")
def _eplb_needs_ep(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_eplb", False) or s.get("ep_join_mode") == "scale":
        return None  # 0.5.23 does not assert it for an elastic EP scale joiner
    a2a = s.get("moe_a2a_backend")
    why = ""
    if a2a in _A2A_SETS_EP:
        ep = s.integer("tp_size", 1)  # SGLang sets ep_size to tp_size for these
        why = f" ({s.flag('moe_a2a_backend')} {a2a} sets it to {s.flag('tp_size')} {ep})"
    elif a2a in (None, "none"):
        ep = s.integer("ep_size", 1)
    else:
        return None  # an a2a backend whose effect on ep_size gen does not model
    if ep > 1:
        return None
    return Hit(("enable_eplb", "ep_size", "moe_a2a_backend"), {
        "eplb": s.flag("enable_eplb"), "ep": s.flag("ep_size"), "ep_value": ep, "why": why,
        "tp": s.flag("tp_size")})


# The all-to-all backends for which SGLang's _handle_a2a_moe sets ep_size = tp_size.
_A2A_SETS_EP = ("deepep", "mooncake", "ascend_fuseep", "flashinfer")


@predicate("moe-dense-tp")
def _moe_dense_tp(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("moe_dense_tp_size")
    tp = s.integer("tp_size", 1)
    newer = s.at_least(0, 5, 23)  # 0.5.23 also takes tp_size itself
    if not isinstance(value, int) or value == 1 or (newer and value == tp):
        return None
    allowed = f"1 or {s.flag('tp_size')} ({tp})" if newer else "1"
    return Hit(("moe_dense_tp_size",), {"dense": s.flag("moe_dense_tp_size"), "value": value, "allowed": allowed})


@predicate("tbo-needs-a2a")
def _tbo_needs_a2a(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_two_batch_overlap", False) or s.get("moe_a2a_backend", "none") != "none":
        return None
    newer = s.has("attn_dp_size")  # 0.5.23 also runs TBO on the DP-attention TP-MoE path
    if newer and dp_attention(s)[0]:
        return None
    fix = (f"set {s.flag('moe_a2a_backend')} (e.g. deepep) with expert parallelism"
           + (f", or turn on DP attention ({s.flag('attn_dp_size')} N)" if newer else "")
           + f", or drop {s.flag('enable_two_batch_overlap')}")
    return Hit(("enable_two_batch_overlap",), {
        "tbo": s.flag("enable_two_batch_overlap"), "a2a": s.flag("moe_a2a_backend"),
        "dp_note": " and without DP attention" if newer else "", "fix": fix})
