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
    hierarchical = s.has("max_ep_size")  # 0.5.23 also allows elasticity_aware_hierarchical
    allowed = ("elasticity_aware", "elasticity_aware_hierarchical") if hierarchical else ("elasticity_aware",)
    algo = s.get("eplb_algorithm", "auto")
    algo = "elasticity_aware" if algo == "auto" else algo
    return check(elastic_on(s) and bool(s.get("enable_eplb", False)) and algo not in allowed,
                 "eplb-algorithm-or-hierarchical" if hierarchical else "eplb-algorithm",
                 ("eplb_algorithm", "enable_eplb", "elastic_ep_backend"), algo=algo)


def _setup_checks(s: Settings) -> list[Callable[[], Check]]:
    """0.5.23's checks before the scale-up block, in its order."""
    on, mode = elastic_on(s), s.get("ep_join_mode")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.opt_int("max_ep_size")
    return [
        lambda: check(on and s.integer("pp_size", 1) != 1, "pp-not-one", ("pp_size", "elastic_ep_backend")),
        lambda: check(mode is not None and not on, "join-mode-without-backend", ("ep_join_mode",)),
        lambda: check(mode == "scale" and s.integer("node_rank", 0) != 1, "joiner-node-rank-not-one", ("ep_join_mode", "node_rank"), rank=s.integer("node_rank", 0)),
        lambda: check(mode == "scale" and offset <= 0, "joiner-offset-not-positive", ("ep_join_mode", "ep_join_rank_offset"), offset=offset),
        lambda: check(offset != 0 and mode != "scale", "offset-without-scale-join", ("ep_join_rank_offset",)),
        lambda: check(offset < 0, "offset-negative", ("ep_join_rank_offset",)),
        lambda: check(max_ep is not None and not on, "max-ep-without-backend", ("max_ep_size",)),
        lambda: check(max_ep is not None and max_ep <= 0, "max-ep-not-positive", ("max_ep_size",)),
        lambda: check(s.opt_int("elastic_ep_initial_size") is not None and not scaling_active(s), "initial-size-without-scale-up", ("elastic_ep_initial_size",)),
    ]


@predicate("elastic-ep-setup")
def _elastic_ep_setup(s: Settings, rule: RuleSpec) -> Hit | None:
    first = first_broken([lambda: _eplb_algorithm(s)])
    if first is not None or not s.has("max_ep_size"):
        return first  # 0.5.9's handler has the EPLB check only
    return first_broken(_setup_checks(s))


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
        return check(True, "attention-topology-invalid", blame, tp=tp, attn_dp=attn_dp_of(s), cp=cp)
    replica = attn_tp * cp
    sizes = [(s.flag("max_ep_size"), s.integer("max_ep_size", 0)),
             (s.flag("elastic_ep_initial_size"), s.opt_int("elastic_ep_initial_size") or tp)]
    if s.get("ep_join_mode") == "scale":
        sizes.append((s.flag("ep_join_rank_offset"), s.integer("ep_join_rank_offset", 0)))
    for name, size in sizes:
        if size <= 0 or size % replica:
            return check(True, "size-not-replica-multiple", blame, size=size, option=name, replica=replica)
    return check(False, None, blame, detail="", fix="")


def _join_checks(s: Settings) -> list[Callable[[], Check]]:
    """The scale joiner's checks, or the primary's (initial size equals the TP size)."""
    tp, initial = s.integer("tp_size", 1), s.opt_int("elastic_ep_initial_size")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.integer("max_ep_size", 0)
    if s.get("ep_join_mode") != "scale":
        return [lambda: check(initial is not None and initial != tp, "primary-initial-size-not-tp", ("elastic_ep_initial_size", "tp_size"), tp=tp, initial=initial)]
    return [
        lambda: check(initial is None, "joiner-without-initial-size", ("ep_join_mode",)),
        lambda: check(initial is not None and initial > offset, "initial-size-above-offset", ("elastic_ep_initial_size", "ep_join_rank_offset"), initial=initial, offset=offset),
        lambda: check(offset + tp > max_ep, "joiner-above-max-ep", ("ep_join_rank_offset", "max_ep_size"), join_target=offset + tp, max_ep=max_ep),
        lambda: check(tp == 1 and s.get("moe_dense_tp_size") != 1, "single-rank-joiner-dense-tp", ("moe_dense_tp_size",)),
        lambda: check(initial is not None and initial <= 0, "initial-size-not-positive", ("elastic_ep_initial_size",), initial=initial),
    ]


def _load_balance(s: Settings) -> str:
    """--load-balance-method after SGLang resolves 'auto' (PD prefill: follow_bootstrap_room)."""
    method = s.get("load_balance_method", "auto")
    if method == "auto":
        return "follow_bootstrap_room" if s.get("disaggregation_mode") == "prefill" else "round_robin"
    return str(method)


# phase -> (its CUDA-graph backend setting, its disable switch)
_GRAPH_SETTINGS = {"decode": ("cuda_graph_backend_decode", "disable_decode_cuda_graph"),
                   "prefill": ("cuda_graph_backend_prefill", "disable_prefill_cuda_graph")}


def graph_backend(s: Settings, phase: str) -> str | None:
    """The CUDA-graph backend of 'decode' or 'prefill' as the flags set it; None when gen cannot tell.

    SGLang's defaults are decode 'full' and prefill 'breakable' on CUDA ('disabled' elsewhere).
    An unwritten prefill backend is left alone: SGLang's cascade turns a 'breakable' default
    off for the nixl all-to-all that scale-up requires (and without nixl the a2a check fires).
    A --cuda-graph-config JSON is not read.
    """
    if s.get("cuda_graph_config") is not None:
        return None
    backend, disable = _GRAPH_SETTINGS[phase]
    explicit = s.get(backend)
    if explicit is not None:
        return str(explicit)
    if s.get("disable_cuda_graph", False) or s.get(disable, False):
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
        lambda: check(attn_tp > 1 and dense != 1, "dense-tp-not-one", ("moe_dense_tp_size",), dense=dense),
        lambda: check(isinstance(timeout, (int, float)) and timeout <= 0, "scale-timeout-not-positive", ("elastic_ep_scale_timeout",)),
        lambda: check(s.integer("tokenizer_worker_num", 1) != 1, "tokenizer-workers", ("tokenizer_worker_num",)),
        lambda: check(bool(s.get("use_ray", False)), "ray", ("use_ray",)),
        lambda: check(bool(s.get("enable_elastic_expert_backup", False)), "elastic-expert-backup", ("enable_elastic_expert_backup",)),
        *_join_checks(s),
        lambda: check(_load_balance(s) != "round_robin", "load-balance-not-round-robin", ("load_balance_method",), method=_load_balance(s)),
        lambda: check(backend != "mooncake", "backend-not-mooncake", ("elastic_ep_backend",), backend=backend),
        lambda: check(attn_tp % max(dcp, 1) != 0, "dcp-not-dividing-attention-tp", ("dcp_size",), dcp=dcp, attn_tp=attn_tp),
        lambda: check(decode not in (None, "disabled", "full"), "decode-graph-backend", ("cuda_graph_backend_decode",), decode=decode),
        lambda: check(prefill not in (None, "disabled"), "prefill-graph-enabled", ("cuda_graph_backend_prefill",), prefill=prefill),
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
        lambda: check(not attn_dp, "no-attention-dp", ("attn_dp_size", "max_ep_size")),
        lambda: check(not lm_head, "no-dp-lm-head", ("enable_dp_lm_head", "max_ep_size")),
        lambda: check(cp != 1, "cp-not-one", ("attn_cp_size",), cp=cp),
        lambda: check(moe_dp != 1, "moe-dp-not-one", ("moe_dp_size",), moe_dp=moe_dp),
        lambda: check(ep != tp, "ep-not-tp", ("ep_size", "tp_size"), ep=ep, tp=tp),
        lambda: check(a2a != "nixl", "a2a-not-nixl", ("moe_a2a_backend",), a2a=a2a),
    ]


@predicate("elastic-ep-scale-up")
def _elastic_ep_scale_up(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("max_ep_size") or not scaling_active(s) or _elastic_ep_setup(s, rule) is not None:
        return None  # the setup rule reports what SGLang stops at first
    return first_broken(_scale_checks(s) + _layout_checks(s))


# What SGLang's CUDA-graph recapture refuses when the decode graph is 'full': setting -> check.
_RECAPTURE = (("speculative_algorithm", "speculative-decoding"), ("is_embedding", "embedding-model"),
              ("dllm_algorithm", "diffusion-model"), ("encoder_only", "encoder-only-model"),
              ("forward_hooks", "forward-hooks"), ("enable_pdmux", "pdmux"))


@predicate("elastic-ep-graph-recapture")
def _elastic_ep_graph_recapture(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("max_ep_size") or not scaling_active(s) or graph_backend(s, "decode") != "full":
        return None
    if _elastic_ep_setup(s, rule) is not None:
        return None  # the setup rule reports what SGLang stops at first
    for name, refused in _RECAPTURE:
        if s.get(name) not in (None, False, []):
            return Hit((name, "max_ep_size"), {"option": s.flag(name)}, refused)
    return None
