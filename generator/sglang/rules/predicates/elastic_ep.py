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
        lambda: check(on and s.integer("pp_size", 1) != 1, None, ("pp_size", "elastic_ep_backend"), detail="PP size should be set to 1 under elastic EP", fix=f"set {s.flag('pp_size')} 1, or drop {backend}"),
        lambda: check(mode is not None and not on, None, ("ep_join_mode",), detail=f"{s.flag('ep_join_mode')} requires {backend} to be set", fix=f"add {backend}, or drop {s.flag('ep_join_mode')}"),
        lambda: check(mode == "scale" and s.integer("node_rank", 0) != 1, None, ("ep_join_mode", "node_rank"), detail=f"elastic EP scale-up requires one joining TP group at {s.flag('node_rank')} 1 "
                 f"(got {s.integer('node_rank', 0)})", fix=f"set {s.flag('node_rank')} 1 on the joining group"),
        lambda: check(mode == "scale" and offset <= 0, None, ("ep_join_mode", "ep_join_rank_offset"), detail=f"elastic EP scale joiners require {s.flag('ep_join_rank_offset')} set to the current "
                 f"effective EP size (got {offset})", fix=f"set {s.flag('ep_join_rank_offset')} to the running deployment's EP size"),
        lambda: check(offset != 0 and mode != "scale", None, ("ep_join_rank_offset",), detail=f"{s.flag('ep_join_rank_offset')} is only valid with {s.flag('ep_join_mode')} scale", fix=f"add {s.flag('ep_join_mode')} scale, or drop {s.flag('ep_join_rank_offset')}"),
        lambda: check(offset < 0, None, ("ep_join_rank_offset",), detail="elastic EP join rank offset must be >= 0", fix=f"set {s.flag('ep_join_rank_offset')} to 0 or more"),
        lambda: check(max_ep is not None and not on, None, ("max_ep_size",), detail=f"{s.flag('max_ep_size')} requires {backend} to be set", fix=f"add {backend}, or drop {s.flag('max_ep_size')}"),
        lambda: check(max_ep is not None and max_ep <= 0, None, ("max_ep_size",), detail=f"{s.flag('max_ep_size')} must be a positive integer", fix=f"set {s.flag('max_ep_size')} to 1 or more"),
        lambda: check(s.opt_int("elastic_ep_initial_size") is not None and not scaling_active(s), None, ("elastic_ep_initial_size",), detail=f"{s.flag('elastic_ep_initial_size')} is only valid for an elastic EP deployment with "
                 f"{s.flag('max_ep_size')} larger than its local TP size", fix=f"drop {s.flag('elastic_ep_initial_size')}, or add {backend} with {s.flag('max_ep_size')} "
                 f"above {s.flag('tp_size')}"),
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
        return check(True, None, blame, detail=f"invalid attention topology: {s.flag('tp_size')} {tp}, {s.flag('attn_dp_size')} "
                      f"{attn_dp_of(s)}, {s.flag('attn_cp_size')} {cp}", fix=f"make {s.flag('attn_dp_size')} x {s.flag('attn_cp_size')} divide {s.flag('tp_size')}")
    replica = attn_tp * cp
    sizes = [(s.flag("max_ep_size"), s.integer("max_ep_size", 0)),
             (s.flag("elastic_ep_initial_size"), s.opt_int("elastic_ep_initial_size") or tp)]
    if s.get("ep_join_mode") == "scale":
        sizes.append((s.flag("ep_join_rank_offset"), s.integer("ep_join_rank_offset", 0)))
    for name, size in sizes:
        if size <= 0 or size % replica:
            return check(True, None, blame, detail=f"EP size {size} ({name}) must be divisible by attention replica size {replica}", fix=f"set {name} to a multiple of {replica}")
    return check(False, None, blame, detail="", fix="")


def _join_checks(s: Settings) -> list[Callable[[], Check]]:
    """The scale joiner's checks, or the primary's (initial size equals the TP size)."""
    tp, initial = s.integer("tp_size", 1), s.opt_int("elastic_ep_initial_size")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.integer("max_ep_size", 0)
    init_flag = s.flag("elastic_ep_initial_size")
    if s.get("ep_join_mode") != "scale":
        return [lambda: check(initial is not None and initial != tp, None, ("elastic_ep_initial_size", "tp_size"), detail=f"the primary {init_flag} must equal its launch-time TP size ({tp}), got {initial}", fix=f"set {init_flag} {tp}, or drop it")]
    return [
        lambda: check(initial is None, None, ("ep_join_mode",), detail=f"elastic EP scale joiners require {init_flag} set to the primary "
                                  "deployment's launch-time EP size", fix=f"add {init_flag} with the primary's launch-time EP size"),
        lambda: check(initial is not None and initial > offset, None, ("elastic_ep_initial_size", "ep_join_rank_offset"), detail=f"{init_flag} cannot exceed the current EP size (initial={initial}, "
                                   f"current={offset})", fix=f"set {init_flag} at most {s.flag('ep_join_rank_offset')} {offset}"),
        lambda: check(offset + tp > max_ep, None, ("ep_join_rank_offset", "max_ep_size"), detail=f"elastic EP joining group exceeds {s.flag('max_ep_size')} "
                                       f"(join_target={offset + tp}, max_ep_size={max_ep})", fix=f"raise {s.flag('max_ep_size')} to {offset + tp} or more, or lower {s.flag('ep_join_rank_offset')}"),
        lambda: check(tp == 1 and s.get("moe_dense_tp_size") != 1, None, ("moe_dense_tp_size",), detail=f"a single-rank elastic EP joining group requires {s.flag('moe_dense_tp_size')} 1", fix=f"set {s.flag('moe_dense_tp_size')} 1"),
        lambda: check(initial is not None and initial <= 0, None, ("elastic_ep_initial_size",), detail=f"{init_flag} must be positive (got {initial})", fix=f"set {init_flag} to 1 or more"),
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
        lambda: check(attn_tp > 1 and dense != 1, None, ("moe_dense_tp_size",), detail=f"elastic EP scale-up with attention TP greater than one requires "
                                             f"{s.flag('moe_dense_tp_size')} 1 (got {dense})", fix=f"set {s.flag('moe_dense_tp_size')} 1"),
        lambda: check(isinstance(timeout, (int, float)) and timeout <= 0, None, ("elastic_ep_scale_timeout",), detail=f"{s.flag('elastic_ep_scale_timeout')} must be greater than zero", fix=f"set {s.flag('elastic_ep_scale_timeout')} above 0, or drop it"),
        lambda: check(s.integer("tokenizer_worker_num", 1) != 1, None, ("tokenizer_worker_num",), detail=f"elastic EP runtime scale-up currently requires {s.flag('tokenizer_worker_num')} 1", fix=f"set {s.flag('tokenizer_worker_num')} 1, or drop it"),
        lambda: check(bool(s.get("use_ray", False)), None, ("use_ray",), detail=f"elastic EP runtime scale-up does not support {s.flag('use_ray')}", fix=f"drop {s.flag('use_ray')}"),
        lambda: check(bool(s.get("enable_elastic_expert_backup", False)), None, ("enable_elastic_expert_backup",), detail="elastic EP runtime scale-up does not support "
                 f"{s.flag('enable_elastic_expert_backup')}", fix=f"drop {s.flag('enable_elastic_expert_backup')}"),
        *_join_checks(s),
        lambda: check(_load_balance(s) != "round_robin", None, ("load_balance_method",), detail=f"elastic EP scale-up requires {s.flag('load_balance_method')} "
                 f"round_robin (got {_load_balance(s)})", fix=f"set {s.flag('load_balance_method')} round_robin"),
        lambda: check(backend != "mooncake", None, ("elastic_ep_backend",), detail=f"elastic EP runtime scale-up requires {s.flag('elastic_ep_backend')} "
                 f"mooncake (got {backend})", fix=f"set {s.flag('elastic_ep_backend')} mooncake"),
        lambda: check(attn_tp % max(dcp, 1) != 0, None, ("dcp_size",), detail=f"elastic EP scale-up requires {s.flag('dcp_size')} to divide the "
                 f"fixed attention TP width (got {s.flag('dcp_size')} {dcp}, attention TP width {attn_tp})", fix=f"set {s.flag('dcp_size')} to a divisor of the attention TP width {attn_tp}, or drop it"),
        lambda: check(decode not in (None, "disabled", "full"), None, ("cuda_graph_backend_decode",), detail="elastic EP runtime scale-up supports decode CUDA graph "
                 f"backend 'full' or 'disabled' (got {decode!r})", fix=f"set {s.flag('cuda_graph_backend_decode')} full or disabled"),
        lambda: check(prefill not in (None, "disabled"), None, ("cuda_graph_backend_prefill",), detail="elastic EP runtime scale-up requires prefill CUDA graph to be "
                 f"disabled (got {prefill!r})", fix=f"set {s.flag('cuda_graph_backend_prefill')} disabled"),
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
        lambda: check(not attn_dp, None, ("attn_dp_size", "max_ep_size"), detail=f"elastic EP scale-up requires attention DP ({s.flag('attn_dp_size')})", fix=f"add {s.flag('attn_dp_size')} > 1"),
        lambda: check(not lm_head, None, ("enable_dp_lm_head", "max_ep_size"), detail=f"elastic EP scale-up requires {s.flag('enable_dp_lm_head')}", fix=f"add {s.flag('enable_dp_lm_head')}"),
        lambda: check(cp != 1, None, ("attn_cp_size",), detail=f"elastic EP scale-up requires {s.flag('attn_cp_size')} 1 (got {cp})", fix=f"set {s.flag('attn_cp_size')} 1"),
        lambda: check(moe_dp != 1, None, ("moe_dp_size",), detail=f"elastic EP scale-up requires {s.flag('moe_dp_size')} 1 (got {moe_dp})", fix=f"set {s.flag('moe_dp_size')} 1"),
        lambda: check(ep != tp, None, ("ep_size", "tp_size"), detail=f"elastic EP scale-up requires {s.flag('ep_size')} equal to {s.flag('tp_size')} "
                           f"(got {ep} and {tp})", fix=f"set {s.flag('ep_size')} {tp}"),
        lambda: check(a2a != "nixl", None, ("moe_a2a_backend",), detail=f"elastic EP scale-up requires {s.flag('moe_a2a_backend')} nixl (got {a2a})", fix=f"set {s.flag('moe_a2a_backend')} nixl"),
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
            return Hit((name, "max_ep_size"), {"detail": f"elastic EP CUDA graph recapture does not support {what} "
                                                         f"({s.flag(name)})",
                                               "decode": s.flag("disable_decode_cuda_graph"), "flag": s.flag(name)})
    return None
