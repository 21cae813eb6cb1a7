"""Predicates of elastic expert parallelism (SGLang's handle_elastic_ep / _handle_elastic_ep).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Callable

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Check, Hit, check, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec






def dwdp_on(s: Settings) -> bool:
    """DWDP is on: SGLang's handle_dwdp then sets attn_dp_size = dwdp_size, ep_size = dwdp_size,
    enable_dp_lm_head, moe_dp_size 1 and moe_a2a_backend 'none' before the later handlers run.
    A DWDP size other than the TP size stops SGLang in handle_dwdp (dwdp-layout), so it sets nothing."""
    dwdp = s.integer("dwdp_size", 1)
    return dwdp > 1 and dwdp == s.integer("tp_size", 1)


def attn_dp_of(s: Settings) -> int:
    """attn_dp_size as SGLang resolves it (``--dp-size N --enable-dp-attention`` is rewritten to it; DWDP sets it)."""
    if dwdp_on(s):
        return s.integer("dwdp_size", 1)
    on, size, _ = dp_attention(s)
    return size if on else s.integer("attn_dp_size", 1)


def a2a_of(s: Settings) -> str | None:
    """--moe-a2a-backend as SGLang resolves it (DWDP forces 'none')."""
    return "none" if dwdp_on(s) else s.get("moe_a2a_backend")


def elastic_on(s: Settings) -> bool:
    """Elastic EP is on for any written backend: SGLang tests ``is not None``, so 'none' counts too."""
    return s.get("elastic_ep_backend") is not None


def scaling_active(s: Settings) -> bool:
    """SGLang's ``scaling_active``: elastic EP with --max-ep-size above the local TP size."""
    max_ep = s.opt_int("max_ep_size")
    return elastic_on(s) and max_ep is not None and max_ep > s.integer("tp_size", 1)


def _eplb_algorithm(s: Settings) -> Check:
    allowed = ["elasticity_aware", "elasticity_aware_hierarchical"] if s.has("max_ep_size") else ["elasticity_aware"]
    algo = s.get("eplb_algorithm", "auto")
    algo = "elasticity_aware" if algo == "auto" else algo
    text = (f"elastic EP with {s.flag('enable_eplb')} requires {s.flag('eplb_algorithm')} 'auto' or "
            f"{' / '.join(repr(a) for a in allowed)} (got {algo!r})")
    return check(elastic_on(s) and bool(s.get("enable_eplb", False)) and algo not in allowed, None, ("eplb_algorithm", "enable_eplb", "elastic_ep_backend"), detail=text, fix=f"set {s.flag('eplb_algorithm')} auto or {' or '.join(allowed)}, or drop {s.flag('enable_eplb')}")


def _setup_checks(s: Settings) -> list[Callable[[], Check]]:
    """0.5.23's checks before the scale-up block, in its order."""
    on, mode = elastic_on(s), s.get("ep_join_mode")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.opt_int("max_ep_size")
    backend = s.flag("elastic_ep_backend")
    return [
        lambda: check(on and s.integer("pp_size", 1) != 1, "setup-1", ("pp_size", "elastic_ep_backend"), backend=backend),
        lambda: check(mode is not None and not on, "setup-2", ("ep_join_mode",), backend=backend),
        lambda: check(mode == "scale" and s.integer("node_rank", 0) != 1, "setup-3", ("ep_join_mode", "node_rank"), v0=s.integer('node_rank', 0)),
        lambda: check(mode == "scale" and offset <= 0, "setup-4", ("ep_join_mode", "ep_join_rank_offset"), offset=offset),
        lambda: check(offset != 0 and mode != "scale", "setup-5", ("ep_join_rank_offset",)),
        lambda: check(offset < 0, "setup-6", ("ep_join_rank_offset",)),
        lambda: check(max_ep is not None and not on, "setup-7", ("max_ep_size",), backend=backend),
        lambda: check(max_ep is not None and max_ep <= 0, "setup-8", ("max_ep_size",)),
        lambda: check(s.opt_int("elastic_ep_initial_size") is not None and not scaling_active(s), "setup-9", ("elastic_ep_initial_size",), backend=backend),
    ]


@predicate("elastic-ep-setup")
def _elastic_ep_setup(s: Settings, rule: RuleSpec) -> Hit | None:
    first = first_broken([lambda: _eplb_algorithm(s)], max_ep=s.flag("max_ep_size"), tp=s.flag("tp_size"))
    if first is not None or not s.has("max_ep_size"):
        return first  # 0.5.9's handler has the EPLB check only
    return first_broken(_setup_checks(s), max_ep=s.flag("max_ep_size"), tp=s.flag("tp_size"))


def attn_tp_size(s: Settings) -> int | None:
    """SGLang's attention-TP width, None when the topology is invalid (its ValueError)."""
    tp, dp, cp = s.integer("tp_size", 1), attn_dp_of(s), s.integer("attn_cp_size", 1)
    if tp <= 0 or dp <= 0 or cp <= 0 or tp % (dp * cp):
        return None
    return tp // dp // cp


def _topology(s: Settings) -> Check:
    """The ValueErrors SGLang turns into AssertionError: sizes that the attention replica must divide."""
    tp, cp = s.integer("tp_size", 1), s.integer("attn_cp_size", 1)
    attn_tp = attn_tp_size(s)
    blame = ("tp_size", "attn_dp_size", "max_ep_size")
    if attn_tp is None:
        return check(True, "topology-1", blame, tp_=tp, v0=attn_dp_of(s), cp=cp)
    replica = attn_tp * cp
    sizes = [(s.flag("max_ep_size"), s.integer("max_ep_size", 0)),
             (s.flag("elastic_ep_initial_size"), s.opt_int("elastic_ep_initial_size") or tp)]
    if s.get("ep_join_mode") == "scale":
        sizes.append((s.flag("ep_join_rank_offset"), s.integer("ep_join_rank_offset", 0)))
    for name, size in sizes:
        if size <= 0 or size % replica:
            return check(True, "topology-2", blame, size=size, name=name, replica=replica)
    return check(False, None, blame, detail="", fix="")


def _join_checks(s: Settings) -> list[Callable[[], Check]]:
    """The scale joiner's checks, or the primary's (initial size equals the TP size)."""
    tp, initial = s.integer("tp_size", 1), s.opt_int("elastic_ep_initial_size")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.integer("max_ep_size", 0)
    init_flag = s.flag("elastic_ep_initial_size")
    if s.get("ep_join_mode") != "scale":
        return [lambda: check(initial is not None and initial != tp, "join-6", ("elastic_ep_initial_size", "tp_size"), init_flag=init_flag, tp_=tp, initial=initial)]
    return [
        lambda: check(initial is None, "join-1", ("ep_join_mode",), init_flag=init_flag),
        lambda: check(initial is not None and initial > offset, "join-2", ("elastic_ep_initial_size", "ep_join_rank_offset"), init_flag=init_flag, initial=initial, offset=offset),
        lambda: check(offset + tp > max_ep, "join-3", ("ep_join_rank_offset", "max_ep_size"), v0=offset + tp, max_ep_=max_ep),
        lambda: check(tp == 1 and s.get("moe_dense_tp_size") != 1, "join-4", ("moe_dense_tp_size",)),
        lambda: check(initial is not None and initial <= 0, "join-5", ("elastic_ep_initial_size",), init_flag=init_flag, initial=initial),
    ]


def _load_balance(s: Settings) -> str:
    """--load-balance-method after SGLang resolves 'auto' (PD prefill: follow_bootstrap_room)."""
    method = s.get("load_balance_method", "auto")
    if method == "auto":
        return "follow_bootstrap_room" if s.get("disaggregation_mode") == "prefill" else "round_robin"
    return str(method)


def graph_backend(s: Settings, phase: str) -> str | None:
    """The CUDA-graph backend of 'decode' or 'prefill' as the flags set it; None when gen cannot tell.

    SGLang's defaults are decode 'full' and prefill 'breakable' on CUDA ('disabled' elsewhere).
    An unwritten prefill backend is left alone: SGLang's cascade turns a 'breakable' default
    off for the nixl all-to-all that scale-up requires (and without nixl the a2a check fires).
    A --cuda-graph-config JSON is not read.
    """
    if s.get("cuda_graph_config") is not None:
        return None
    explicit = s.get(f"cuda_graph_backend_{phase}")
    if explicit is not None:
        return str(explicit)
    if s.get("disable_cuda_graph", False) or s.get(f"disable_{phase}_cuda_graph", False):
        return "disabled"
    other = "prefill" if phase == "decode" else "decode"
    if s.get("disaggregation_mode") == other:
        return "disabled"  # a prefill server captures no decode graph, and the other way round
    return "full" if phase == "decode" else None


def _scale_checks(s: Settings) -> list[Callable[[], Check]]:
    """The scale-up block up to the CUDA-graph checks, in SGLang's order."""
    attn_tp = attn_tp_size(s) or 1
    dense, dcp = s.get("moe_dense_tp_size"), s.integer("dcp_size", 1)
    backend, timeout = s.get("elastic_ep_backend"), s.get("elastic_ep_scale_timeout", 600)
    decode, prefill = graph_backend(s, "decode"), graph_backend(s, "prefill")
    return [
        lambda: _topology(s),
        lambda: check(attn_tp > 1 and dense != 1, "scale-1", ("moe_dense_tp_size",), dense=dense),
        lambda: check(isinstance(timeout, (int, float)) and timeout <= 0, "scale-2", ("elastic_ep_scale_timeout",)),
        lambda: check(s.integer("tokenizer_worker_num", 1) != 1, "scale-3", ("tokenizer_worker_num",)),
        lambda: check(bool(s.get("use_ray", False)), "scale-4", ("use_ray",)),
        lambda: check(bool(s.get("enable_elastic_expert_backup", False)), "scale-5", ("enable_elastic_expert_backup",)),
        *_join_checks(s),
        lambda: check(_load_balance(s) != "round_robin", "scale-6", ("load_balance_method",), v0=_load_balance(s)),
        lambda: check(backend != "mooncake", "scale-7", ("elastic_ep_backend",), backend=backend),
        lambda: check(attn_tp % max(dcp, 1) != 0, "scale-8", ("dcp_size",), dcp=dcp, attn_tp=attn_tp),
        lambda: check(decode not in (None, "disabled", "full"), "scale-9", ("cuda_graph_backend_decode",), decode=decode),
        lambda: check(prefill not in (None, "disabled"), "scale-10", ("cuda_graph_backend_prefill",), prefill=prefill),
    ]


def _layout_checks(s: Settings) -> list[Callable[[], Check]]:
    """The scale-up block after the CUDA-graph checks: attention DP, DP LM head, CP, MoE DP, EP, a2a."""
    tp = s.integer("tp_size", 1)
    joiner = s.get("ep_join_mode") == "scale"
    attn_dp = attn_dp_of(s) > 1 or joiner
    a2a, dwdp = a2a_of(s), dwdp_on(s)
    # Every all-to-all backend but 'none' makes EP span the TP group (overrides._A2A_EP_SPANNING_BACKENDS).
    ep = tp if a2a not in (None, "none") else s.integer("dwdp_size" if dwdp else "ep_size", 1)
    cp, moe_dp = s.integer("attn_cp_size", 1), 1 if dwdp else s.integer("moe_dp_size", 1)
    lm_head = dwdp or bool(s.get("enable_dp_lm_head", False))
    return [
        lambda: check(not attn_dp, "layout-1", ("attn_dp_size", "max_ep_size")),
        lambda: check(not lm_head, "layout-2", ("enable_dp_lm_head", "max_ep_size")),
        lambda: check(cp != 1, "layout-3", ("attn_cp_size",), cp=cp),
        lambda: check(moe_dp != 1, "layout-4", ("moe_dp_size",), moe_dp=moe_dp),
        lambda: check(ep != tp, "layout-5", ("ep_size", "tp_size"), ep=ep, tp_=tp),
        lambda: check(a2a != "nixl", "layout-6", ("moe_a2a_backend",), a2a=a2a),
    ]


@predicate("elastic-ep-scale-up")
def _elastic_ep_scale_up(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("max_ep_size") or not scaling_active(s) or _elastic_ep_setup(s, rule) is not None:
        return None  # the setup rule reports what SGLang stops at first
    return first_broken(_scale_checks(s) + _layout_checks(s), max_ep=s.flag("max_ep_size"), tp=s.flag("tp_size"))


# What SGLang's CUDA-graph recapture refuses when the decode graph is 'full' (SGLang's message words).
_RECAPTURE = (("speculative_algorithm", "speculative decoding"), ("is_embedding", "embedding models"),
              ("dllm_algorithm", "diffusion models"), ("encoder_only", "encoder-only models"),
              ("forward_hooks", "forward hooks"), ("enable_pdmux", "PDMux"))


@predicate("elastic-ep-graph-recapture")
def _elastic_ep_graph_recapture(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("max_ep_size") or not scaling_active(s) or graph_backend(s, "decode") != "full":
        return None
    if _elastic_ep_setup(s, rule) is not None:
        return None  # the setup rule reports what SGLang stops at first
    for name, what in _RECAPTURE:
        if s.get(name) not in (None, False, []):
            return Hit((name, "max_ep_size"), {"decode": s.flag("disable_decode_cuda_graph"), "flag": s.flag(name), "what": what, "v0": s.flag(name)}, "elastic-ep-graph-recapture-1")
    return None
