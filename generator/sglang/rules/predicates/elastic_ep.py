"""Predicates of elastic expert parallelism (SGLang's handle_elastic_ep / _handle_elastic_ep).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Callable

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


# A check: (broken?, SGLang's message, the settings to blame, the fix for that check).
Check = tuple[bool, str, tuple[str, ...], str]


def _first(s: Settings, checks: list[Callable[[], Check]]) -> Hit | None:
    """The first broken check as a Hit; checks are thunks so a later one may assume the earlier held."""
    for thunk in checks:
        broken, text, blame, fix = thunk()
        if broken:
            return Hit(blame, {"detail": text, "fix": fix, "max_ep": s.flag("max_ep_size"), "tp": s.flag("tp_size")})
    return None


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
    return (elastic_on(s) and bool(s.get("enable_eplb", False)) and algo not in allowed, text,
            ("eplb_algorithm", "enable_eplb", "elastic_ep_backend"),
            f"set {s.flag('eplb_algorithm')} auto or {' or '.join(allowed)}, or drop {s.flag('enable_eplb')}")


def _setup_checks(s: Settings) -> list[Callable[[], Check]]:
    """0.5.23's checks before the scale-up block, in its order."""
    on, mode = elastic_on(s), s.get("ep_join_mode")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.opt_int("max_ep_size")
    backend = s.flag("elastic_ep_backend")
    return [
        lambda: (on and s.integer("pp_size", 1) != 1, "PP size should be set to 1 under elastic EP",
                 ("pp_size", "elastic_ep_backend"), f"set {s.flag('pp_size')} 1, or drop {backend}"),
        lambda: (mode is not None and not on, f"{s.flag('ep_join_mode')} requires {backend} to be set",
                 ("ep_join_mode",), f"add {backend}, or drop {s.flag('ep_join_mode')}"),
        lambda: (mode == "scale" and s.integer("node_rank", 0) != 1,
                 f"elastic EP scale-up requires one joining TP group at {s.flag('node_rank')} 1 "
                 f"(got {s.integer('node_rank', 0)})", ("ep_join_mode", "node_rank"),
                 f"set {s.flag('node_rank')} 1 on the joining group"),
        lambda: (mode == "scale" and offset <= 0,
                 f"elastic EP scale joiners require {s.flag('ep_join_rank_offset')} set to the current "
                 f"effective EP size (got {offset})", ("ep_join_mode", "ep_join_rank_offset"),
                 f"set {s.flag('ep_join_rank_offset')} to the running deployment's EP size"),
        lambda: (offset != 0 and mode != "scale",
                 f"{s.flag('ep_join_rank_offset')} is only valid with {s.flag('ep_join_mode')} scale",
                 ("ep_join_rank_offset",), f"add {s.flag('ep_join_mode')} scale, or drop {s.flag('ep_join_rank_offset')}"),
        lambda: (offset < 0, "elastic EP join rank offset must be >= 0", ("ep_join_rank_offset",),
                 f"set {s.flag('ep_join_rank_offset')} to 0 or more"),
        lambda: (max_ep is not None and not on, f"{s.flag('max_ep_size')} requires {backend} to be set",
                 ("max_ep_size",), f"add {backend}, or drop {s.flag('max_ep_size')}"),
        lambda: (max_ep is not None and max_ep <= 0, f"{s.flag('max_ep_size')} must be a positive integer",
                 ("max_ep_size",), f"set {s.flag('max_ep_size')} to 1 or more"),
        lambda: (s.opt_int("elastic_ep_initial_size") is not None and not scaling_active(s),
                 f"{s.flag('elastic_ep_initial_size')} is only valid for an elastic EP deployment with "
                 f"{s.flag('max_ep_size')} larger than its local TP size", ("elastic_ep_initial_size",),
                 f"drop {s.flag('elastic_ep_initial_size')}, or add {backend} with {s.flag('max_ep_size')} "
                 f"above {s.flag('tp_size')}"),
    ]


@predicate("elastic-ep-setup")
def _elastic_ep_setup(s: Settings, rule: RuleSpec) -> Hit | None:
    first = _first(s, [lambda: _eplb_algorithm(s)])
    if first is not None or not s.has("max_ep_size"):
        return first  # 0.5.9's handler has the EPLB check only
    return _first(s, _setup_checks(s))


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
        return True, (f"invalid attention topology: {s.flag('tp_size')} {tp}, {s.flag('attn_dp_size')} "
                      f"{attn_dp_of(s)}, {s.flag('attn_cp_size')} {cp}"), blame, \
            f"make {s.flag('attn_dp_size')} x {s.flag('attn_cp_size')} divide {s.flag('tp_size')}"
    replica = attn_tp * cp
    sizes = [(s.flag("max_ep_size"), s.integer("max_ep_size", 0)),
             (s.flag("elastic_ep_initial_size"), s.opt_int("elastic_ep_initial_size") or tp)]
    if s.get("ep_join_mode") == "scale":
        sizes.append((s.flag("ep_join_rank_offset"), s.integer("ep_join_rank_offset", 0)))
    for name, size in sizes:
        if size <= 0 or size % replica:
            return True, f"EP size {size} ({name}) must be divisible by attention replica size {replica}", blame, \
                f"set {name} to a multiple of {replica}"
    return False, "", blame, ""


def _join_checks(s: Settings) -> list[Callable[[], Check]]:
    """The scale joiner's checks, or the primary's (initial size equals the TP size)."""
    tp, initial = s.integer("tp_size", 1), s.opt_int("elastic_ep_initial_size")
    offset, max_ep = s.integer("ep_join_rank_offset", 0), s.integer("max_ep_size", 0)
    init_flag = s.flag("elastic_ep_initial_size")
    if s.get("ep_join_mode") != "scale":
        return [lambda: (initial is not None and initial != tp,
                         f"the primary {init_flag} must equal its launch-time TP size ({tp}), got {initial}",
                         ("elastic_ep_initial_size", "tp_size"), f"set {init_flag} {tp}, or drop it")]
    return [
        lambda: (initial is None, f"elastic EP scale joiners require {init_flag} set to the primary "
                                  "deployment's launch-time EP size", ("ep_join_mode",),
                 f"add {init_flag} with the primary's launch-time EP size"),
        lambda: (initial is not None and initial > offset, f"{init_flag} cannot exceed the current EP size (initial={initial}, "
                                   f"current={offset})", ("elastic_ep_initial_size", "ep_join_rank_offset"),
                 f"set {init_flag} at most {s.flag('ep_join_rank_offset')} {offset}"),
        lambda: (offset + tp > max_ep, f"elastic EP joining group exceeds {s.flag('max_ep_size')} "
                                       f"(join_target={offset + tp}, max_ep_size={max_ep})",
                 ("ep_join_rank_offset", "max_ep_size"),
                 f"raise {s.flag('max_ep_size')} to {offset + tp} or more, or lower {s.flag('ep_join_rank_offset')}"),
        lambda: (tp == 1 and s.get("moe_dense_tp_size") != 1,
                 f"a single-rank elastic EP joining group requires {s.flag('moe_dense_tp_size')} 1",
                 ("moe_dense_tp_size",), f"set {s.flag('moe_dense_tp_size')} 1"),
        lambda: (initial is not None and initial <= 0, f"{init_flag} must be positive (got {initial})", ("elastic_ep_initial_size",),
                 f"set {init_flag} to 1 or more"),
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
        lambda: (attn_tp > 1 and dense != 1, f"elastic EP scale-up with attention TP greater than one requires "
                                             f"{s.flag('moe_dense_tp_size')} 1 (got {dense})", ("moe_dense_tp_size",),
                 f"set {s.flag('moe_dense_tp_size')} 1"),
        lambda: (isinstance(timeout, (int, float)) and timeout <= 0,
                 f"{s.flag('elastic_ep_scale_timeout')} must be greater than zero", ("elastic_ep_scale_timeout",),
                 f"set {s.flag('elastic_ep_scale_timeout')} above 0, or drop it"),
        lambda: (s.integer("tokenizer_worker_num", 1) != 1,
                 f"elastic EP runtime scale-up currently requires {s.flag('tokenizer_worker_num')} 1",
                 ("tokenizer_worker_num",), f"set {s.flag('tokenizer_worker_num')} 1, or drop it"),
        lambda: (bool(s.get("use_ray", False)), f"elastic EP runtime scale-up does not support {s.flag('use_ray')}",
                 ("use_ray",), f"drop {s.flag('use_ray')}"),
        lambda: (bool(s.get("enable_elastic_expert_backup", False)), "elastic EP runtime scale-up does not support "
                 f"{s.flag('enable_elastic_expert_backup')}", ("enable_elastic_expert_backup",),
                 f"drop {s.flag('enable_elastic_expert_backup')}"),
        *_join_checks(s),
        lambda: (_load_balance(s) != "round_robin", f"elastic EP scale-up requires {s.flag('load_balance_method')} "
                 f"round_robin (got {_load_balance(s)})", ("load_balance_method",),
                 f"set {s.flag('load_balance_method')} round_robin"),
        lambda: (backend != "mooncake", f"elastic EP runtime scale-up requires {s.flag('elastic_ep_backend')} "
                 f"mooncake (got {backend})", ("elastic_ep_backend",), f"set {s.flag('elastic_ep_backend')} mooncake"),
        lambda: (attn_tp % max(dcp, 1) != 0, f"elastic EP scale-up requires {s.flag('dcp_size')} to divide the "
                 f"fixed attention TP width (got {s.flag('dcp_size')} {dcp}, attention TP width {attn_tp})", ("dcp_size",),
                 f"set {s.flag('dcp_size')} to a divisor of the attention TP width {attn_tp}, or drop it"),
        lambda: (decode not in (None, "disabled", "full"), "elastic EP runtime scale-up supports decode CUDA graph "
                 f"backend 'full' or 'disabled' (got {decode!r})", ("cuda_graph_backend_decode",),
                 f"set {s.flag('cuda_graph_backend_decode')} full or disabled"),
        lambda: (prefill not in (None, "disabled"), "elastic EP runtime scale-up requires prefill CUDA graph to be "
                 f"disabled (got {prefill!r})", ("cuda_graph_backend_prefill",),
                 f"set {s.flag('cuda_graph_backend_prefill')} disabled"),
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
        lambda: (not attn_dp, f"elastic EP scale-up requires attention DP ({s.flag('attn_dp_size')})",
                 ("attn_dp_size", "max_ep_size"), f"add {s.flag('attn_dp_size')} > 1"),
        lambda: (not lm_head, f"elastic EP scale-up requires {s.flag('enable_dp_lm_head')}",
                 ("enable_dp_lm_head", "max_ep_size"), f"add {s.flag('enable_dp_lm_head')}"),
        lambda: (cp != 1, f"elastic EP scale-up requires {s.flag('attn_cp_size')} 1 (got {cp})", ("attn_cp_size",),
                 f"set {s.flag('attn_cp_size')} 1"),
        lambda: (moe_dp != 1, f"elastic EP scale-up requires {s.flag('moe_dp_size')} 1 (got {moe_dp})",
                 ("moe_dp_size",), f"set {s.flag('moe_dp_size')} 1"),
        lambda: (ep != tp, f"elastic EP scale-up requires {s.flag('ep_size')} equal to {s.flag('tp_size')} "
                           f"(got {ep} and {tp})", ("ep_size", "tp_size"), f"set {s.flag('ep_size')} {tp}"),
        lambda: (a2a != "nixl", f"elastic EP scale-up requires {s.flag('moe_a2a_backend')} nixl (got {a2a})",
                 ("moe_a2a_backend",), f"set {s.flag('moe_a2a_backend')} nixl"),
    ]


@predicate("elastic-ep-scale-up")
def _elastic_ep_scale_up(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("max_ep_size") or not scaling_active(s) or _elastic_ep_setup(s, rule) is not None:
        return None  # the setup rule reports what SGLang stops at first
    return _first(s, _scale_checks(s) + _layout_checks(s))


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
