"""Predicates of parallelism: nodes and ranks, DP attention, context-parallel and MoE-DP sizes, DWDP, decode context parallelism, layernorm SP, LM-head DP/TP, pipeline-parallel compatibility.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

import re

from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.predicates.elastic_ep import a2a_of, attn_dp_of, dwdp_on
from generator.sglang.rules.registry import Check, Hit, check, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


# The all-to-all backends for which SGLang sets ep_size = tp_size (as in parallel.py).
_A2A_SETS_EP = ("deepep", "mooncake", "ascend_fuseep", "flashinfer")


def _ep_size(s: Settings) -> int | None:
    """ep_size as SGLang resolves it, None for an a2a backend whose effect gen does not model."""
    a2a = s.get("moe_a2a_backend")
    if a2a in _A2A_SETS_EP:
        return s.integer("tp_size", 1)
    return s.integer("ep_size", 1) if a2a in (None, "none") else None




@predicate("attn-cp-sizes")
def _attn_cp_sizes(s: Settings, rule: RuleSpec) -> Hit | None:
    cp, tp, pp = s.integer("attn_cp_size", 1), s.integer("tp_size", 1), s.integer("pp_size", 1)
    if cp <= 1:
        return None
    newer = s.has("attn_dp_size")
    # 0.5.9 multiplies by dp_size whether DP attention is on or not; 0.5.23 by attn_dp_size.
    dp = (dp_attention(s)[1] if dp_attention(s)[0] else 1) if newer else s.integer("dp_size", 1)
    if dwdp_on(s):
        dp = s.integer("dwdp_size", 1)  # 0.5.23's handle_dwdp sets attn_dp_size to it
    dp_flag = s.flag("attn_dp_size") if newer else s.flag("dp_size")
    blame = ("attn_cp_size", "tp_size")
    return first_broken([
        check(tp % cp != 0, "tp-not-divisible-by-cp", blame, tp=tp, cp=cp),
        check(tp % (dp * cp) != 0, "tp-not-divisible-by-dp-times-cp", blame, tp=tp, dp_flag=dp_flag, dp=dp, cp=cp),
        check(not newer and pp > 1, "pp-with-cp", blame, pp=pp),
    ])


@predicate("moe-dp-sizes")
def _moe_dp_sizes(s: Settings, rule: RuleSpec) -> Hit | None:
    moe_dp, tp, pp = s.integer("moe_dp_size", 1), s.integer("tp_size", 1), s.integer("pp_size", 1)
    ep = _ep_size(s)
    if moe_dp <= 1 or ep is None or dwdp_on(s):
        return None  # 0.5.23's handle_dwdp resets moe_dp_size to 1
    newer = s.has("attn_dp_size")
    cp = s.integer("attn_cp_size", 1)
    blame = ("moe_dp_size", "tp_size")
    return first_broken([
        check(tp % moe_dp != 0, "tp-not-divisible", blame, tp=tp, moe_dp=moe_dp),
        check(ep * moe_dp > tp, "ep-times-moe-dp-above-tp", blame, ep=ep, moe_dp=moe_dp, tp=tp),
        check(pp > 1, "pp-with-moe-dp", blame, pp=pp),
        check(ep > 1 and ep * moe_dp != tp, "ep-times-moe-dp-not-tp", blame, ep=ep, moe_dp=moe_dp, tp=tp),
        check(newer and cp != moe_dp, "cp-not-moe-dp", blame, moe_dp=moe_dp, cp=cp),
    ])


_PP_BLAME = ("pp_size", "speculative_algorithm", "min_free_slots_delay")


def _pp_spec_checks(s: Settings, algo: str) -> list[Check]:
    mode = s.get("disaggregation_mode", "null")
    if algo == "DSPARK":
        return [check(mode != "prefill", "dspark-needs-prefill", _PP_BLAME)]
    multi = bool(s.get("enable_multi_layer_eagle"))
    checks = [check(algo != "EAGLE" or multi,
                    "multi-layer-eagle" if algo == "EAGLE" else "not-eagle-multi-layer" if multi else "not-eagle",
                    _PP_BLAME, algo=algo)]
    if s.env_true("SGLANG_ENABLE_PP_SPEC"):
        on, _, settings = dp_attention(s)
        return checks + [
            check(mode != "null", "pp-spec-env-with-pd", _PP_BLAME, mode=mode),
            check(bool(s.get("speculative_adaptive")), "pp-spec-env-adaptive", _PP_BLAME),
            check(on, "pp-spec-env-dp-attention", _PP_BLAME, dp_settings=settings)]
    return checks + [check(mode != "prefill", "spec-without-pd" if mode == "null" else "spec-not-on-prefill", _PP_BLAME)]


@predicate("pp-compat")
def _pp_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.integer("pp_size", 1) <= 1:
        return None
    algo = algorithm(s)  # upper-cased, NEXTN -> EAGLE, None under aux-hidden-state capture
    # DFLASH is refused before, by its own handler (rule spec-pp)
    checks = _pp_spec_checks(s, algo) if algo not in (None, "DFLASH") else []
    checks.append(check(s.get("min_free_slots_delay") is not None, "min-free-slots-delay", _PP_BLAME))
    return first_broken(checks)




@predicate("dwdp-layout")
def _dwdp_layout(s: Settings, rule: RuleSpec) -> Hit | None:
    dwdp, tp = s.integer("dwdp_size", 1), s.integer("tp_size", 1)
    if not s.has("dwdp_size") or dwdp <= 1:
        return None  # SGLang's handle_dwdp returns for dwdp_size <= 1
    return first_broken([
        check(dwdp != tp, "dwdp-not-tp", ("dwdp_size", "tp_size"), dwdp=dwdp, tp=tp),
        check(s.get("disaggregation_mode", "null") not in ("null", "prefill"), "pd-decode", ("disaggregation_mode", "dwdp_size")),
        check(bool(s.get("enable_eplb", False)), "eplb", ("enable_eplb", "dwdp_size")),
        check(s.get("speculative_algorithm") is not None, "speculative-decoding", ("speculative_algorithm", "dwdp_size")),
        check(s.integer("pp_size", 1) != 1, "pipeline-parallel", ("pp_size", "dwdp_size")),
        check(bool(s.get("enable_two_batch_overlap", False)), "two-batch-overlap", ("enable_two_batch_overlap", "dwdp_size")),
    ])


@predicate("dcp-flags")
def _dcp_flags(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("dcp_size"):
        return None
    dcp, backend, replicate = s.integer("dcp_size", 1), s.get("dcp_comm_backend"), s.get("dcp_replicate_q_proj")
    # An unwritten backend resolves to 'ag_rs' for dcp_size <= 1, else by device ('a2a'/'fi_a2a' on CUDA).
    return first_broken([
        check(dcp < 1, "dcp-below-one", ("dcp_size",), dcp=dcp),
        check(dcp > 1 and bool(s.get("enable_prefill_cp", False)), "dcp-with-prefill-cp", ("dcp_size", "enable_prefill_cp")),
        check(backend in ("a2a", "fi_a2a") and dcp <= 1, "a2a-backend-without-dcp", ("dcp_comm_backend", "dcp_size"),
              backend=backend, dcp=dcp),
        check(bool(replicate) and dcp <= 1, "replicate-q-without-dcp", ("dcp_replicate_q_proj", "dcp_size")),
        check(bool(replicate) and backend is not None and backend not in ("a2a", "fi_a2a"), "replicate-q-backend",
              ("dcp_replicate_q_proj", "dcp_comm_backend"), backend=backend),
    ])


@predicate("cp-aiter-fusion")
def _cp_aiter_fusion(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_aiter_allreduce_fusion", False):
        return None
    cp, moe_dp = s.integer("attn_cp_size", 1), s.integer("moe_dp_size", 1)
    if cp <= 1 and moe_dp <= 1:
        return None
    return Hit(("enable_aiter_allreduce_fusion",), {"size_flag": s.flag("attn_cp_size") if cp > 1 else s.flag("moe_dp_size")})


@predicate("ep-dispatch-needs-a2a")
def _ep_dispatch_needs_a2a(s: Settings, rule: RuleSpec) -> Hit | None:
    algo = s.get("ep_dispatch_algorithm")
    if not s.has("ep_join_mode") or algo not in ("static", "lp") or a2a_of(s) not in (None, "none"):
        return None  # 0.5.23's handle_eplb_and_dispatch (the pin has the elastic-EP flags)
    if s.get("enable_waterfill", False):
        return None  # _a2a_backend_overrides switches the backend to deepep for Waterfill, DWDP or not
    return Hit(("ep_dispatch_algorithm",), {"algo": algo})


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
    return Hit(("shared_experts_tp_size",), {"size": size, "attn_tp": attn_tp})


@predicate("layernorm-sp-layout")
def _layernorm_sp_layout(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_layernorm_sp", False):
        return None
    tp, pp = s.integer("tp_size", 1), s.integer("pp_size", 1)
    attn_dp = attn_dp_of(s) > 1 or s.get("ep_join_mode") == "scale"
    return first_broken([
        check(tp <= 1, "tp-one", ("enable_layernorm_sp", "tp_size")),
        check(attn_dp, "attention-dp", ("enable_layernorm_sp", "attn_dp_size")),
        check(pp > 1, "pipeline-parallel", ("enable_layernorm_sp", "pp_size"), pp=pp),
    ])


@predicate("tp-lm-head-a2a")
def _tp_lm_head_a2a(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_tp_lm_head_all_to_all", False):
        return None
    attn_dp = attn_dp_of(s)
    on = attn_dp > 1 or s.get("ep_join_mode") == "scale"
    tp, cp = s.integer("tp_size", 1), s.integer("attn_cp_size", 1)
    return first_broken([
        check(not on, "no-attention-dp", ("enable_tp_lm_head_all_to_all",)),
        check(dwdp_on(s) or bool(s.get("enable_dp_lm_head", False)), "with-dp-lm-head",
              ("enable_tp_lm_head_all_to_all", "enable_dp_lm_head")),
        check(tp != attn_dp, "tp-not-attn-dp", ("enable_tp_lm_head_all_to_all", "tp_size"), tp=tp, attn_dp=attn_dp),
        check(cp != 1, "cp-not-one", ("enable_tp_lm_head_all_to_all", "attn_cp_size"), cp=cp),
    ])


@predicate("disagg-decode-tp-divides")
def _disagg_decode_tp(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("disaggregation_decode_tp") or s.get("disaggregation_mode") != "prefill":
        return None
    tp = s.integer("tp_size", 1)
    decode = s.integer("disaggregation_decode_tp", tp)
    larger, smaller = max(tp, decode), min(tp, decode)
    if smaller <= 0 or larger % smaller == 0:
        return None
    return Hit(("disaggregation_decode_tp", "tp_size"), {"decode_tp": decode, "tp": tp})


@predicate("nnodes-divides")
def _nnodes_divides(s: Settings, rule: RuleSpec) -> Hit | None:
    tp, pp, nnodes = s.integer("tp_size", 1), s.integer("pp_size", 1), s.integer("nnodes", 1)
    if nnodes < 1 or (tp * pp) % nnodes == 0:
        return None
    return Hit(("nnodes", "tp_size", "pp_size"), {"tp": tp, "pp": pp, "product": tp * pp, "nnodes": nnodes})


@predicate("multinode-dp")
def _multinode_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    dp, nnodes = s.integer("dp_size", 1), s.integer("nnodes", 1)
    on, _, _ = dp_attention(s)
    if dp <= 1 or nnodes <= 1 or (on and not s.has("attn_dp_size")):
        return None
    if s.has("attn_dp_size") and on and not s.is_set("attn_dp_size"):
        return None  # 0.5.23 rewrites --dp-size N --enable-dp-attention to --attn-dp-size N
    return Hit(("dp_size", "nnodes"), {"dp": dp, "nnodes": nnodes},
               "attn-dp-size" if s.has("attn_dp_size") else "enable-dp-attention")


@predicate("dp-attn-divides")
def _dp_attn_divides(s: Settings, rule: RuleSpec) -> Hit | None:
    on, size, _ = dp_attention(s)
    tp = s.integer("tp_size", 1)
    if not on or tp % size == 0:
        return None
    name = "attn_dp_size" if s.is_set("attn_dp_size") else "dp_size"
    return Hit((name, "tp_size"), {"tp": tp, "dp_flag": s.flag(name), "dp": size})


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
        return Hit(("enable_dp_lm_head",), {}, "attn-dp-size")
    if s.get("enable_dp_attention", False):
        return None
    return Hit(("enable_dp_lm_head",), {}, "enable-dp-attention")


@predicate("dp-lm-head-dropped")
def _dp_lm_head_dropped(s: Settings, rule: RuleSpec) -> Hit | None:
    if not (s.get("enable_dp_lm_head", False) and _lm_head_dropped(s)):
        return None
    return Hit(("enable_dp_lm_head",))


_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9._-]+)):(?P<port>\d{1,5})$")


def dist_init_addr_ok(value: str) -> bool:
    """``host:port`` or ``[v6]:port`` with a port in 1-65535 (what SGLang and NCCL split)."""
    match = _HOST_PORT.fullmatch(value)
    return match is not None and 1 <= int(match.group("port")) <= 65535


@predicate("dist-init-addr-form")
def _dist_init_addr(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("dist_init_addr")
    if value is None or dist_init_addr_ok(str(value)):
        return None
    return Hit(("dist_init_addr",))


@predicate("node-rank-range")
def _node_rank(s: Settings, rule: RuleSpec) -> Hit | None:
    rank, nnodes = s.integer("node_rank", 0), s.integer("nnodes", 1)
    if 0 <= rank < max(nnodes, 1):
        return None
    return Hit(("node_rank", "nnodes"), {"rank": rank, "nnodes": nnodes})


@predicate("eplb-needs-ep")
def _eplb_needs_ep(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_eplb", False) or s.get("ep_join_mode") == "scale":
        return None  # 0.5.23 does not assert it for an elastic EP scale joiner
    a2a = s.get("moe_a2a_backend")
    if a2a in _A2A_SETS_EP:
        ep, problem = s.integer("tp_size", 1), "a2a-sets-ep-to-tp"  # SGLang sets ep_size to tp_size for these
    elif a2a in (None, "none"):
        ep, problem = s.integer("ep_size", 1), "ep-size-one"
    else:
        return None  # an a2a backend whose effect on ep_size gen does not model
    if ep > 1:
        return None
    return Hit(("enable_eplb", "ep_size", "moe_a2a_backend"), {"ep": ep, "a2a": a2a}, problem)


@predicate("moe-dense-tp")
def _moe_dense_tp(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("moe_dense_tp_size")
    tp = s.integer("tp_size", 1)
    newer = s.at_least(0, 5, 23)  # 0.5.23 also takes tp_size itself
    if not isinstance(value, int) or value == 1 or (newer and value == tp):
        return None
    return Hit(("moe_dense_tp_size",), {"tp": tp}, "not-one-or-tp" if newer else "not-one")


@predicate("tbo-needs-a2a")
def _tbo_needs_a2a(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_two_batch_overlap", False) or s.get("moe_a2a_backend", "none") != "none":
        return None
    newer = s.has("attn_dp_size")  # 0.5.23 also runs TBO on the DP-attention TP-MoE path
    if newer and dp_attention(s)[0]:
        return None
    return Hit(("enable_two_batch_overlap",), {}, "dp-attention-possible" if newer else "a2a-only")
