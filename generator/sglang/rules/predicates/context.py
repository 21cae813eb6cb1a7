"""Predicates of the context-parallel and MoE-data-parallel sizes (attn_cp_size, moe_dp_size).

SGLang's _handle_context_parallelism (0.5.9) / parallel_hook.handle_context_parallelism
(0.5.23) assert these; each predicate reports the first assertion the settings break, in
SGLang's order, with SGLang's own words.
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.predicates.gpar_elastic import dwdp_on
from generator.sglang.rules.registry import Hit, predicate
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


def _first_broken(checks: list[tuple[bool, str]]) -> str | None:
    return next((text for broken, text in checks if broken), None)


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
    dp_name = s.flag("attn_dp_size") if newer else s.flag("dp_size")
    detail = _first_broken([
        (tp % cp != 0, f"{s.flag('tp_size')} {tp} is not divisible by {s.flag('attn_cp_size')} {cp}"),
        (tp % (dp * cp) != 0, f"{s.flag('tp_size')} {tp} is not divisible by {dp_name} x "
                              f"{s.flag('attn_cp_size')} = {dp} x {cp}"),
        (not newer and pp > 1, f"{s.flag('pp_size')} {pp} > 1 with context parallelism"),
    ])
    if detail is None:
        return None
    return Hit(("attn_cp_size", "tp_size"), {"detail": detail, "cp": s.flag("attn_cp_size")})


@predicate("moe-dp-sizes")
def _moe_dp_sizes(s: Settings, rule: RuleSpec) -> Hit | None:
    moe_dp, tp, pp = s.integer("moe_dp_size", 1), s.integer("tp_size", 1), s.integer("pp_size", 1)
    ep = _ep_size(s)
    if moe_dp <= 1 or ep is None or dwdp_on(s):
        return None  # 0.5.23's handle_dwdp resets moe_dp_size to 1
    newer = s.has("attn_dp_size")
    cp = s.integer("attn_cp_size", 1)
    name, tp_name, ep_name = s.flag("moe_dp_size"), s.flag("tp_size"), s.flag("ep_size")
    cp_name = s.flag("attn_cp_size")
    # (broken?, SGLang's assertion, the fix for that assertion)
    checks = [
        (tp % moe_dp != 0, f"{tp_name} {tp} is not divisible by {name} {moe_dp}",
         f"set {name} to a divisor of {tp_name} {tp}, or drop {name}"),
        (ep * moe_dp > tp, f"{ep_name} x {name} = {ep} x {moe_dp} is more than {tp_name} {tp}",
         f"lower {ep_name} or {name} so that {ep_name} x {name} is at most {tp_name} {tp}"),
        (pp > 1, f"{s.flag('pp_size')} {pp} > 1 with {name} > 1", f"drop {s.flag('pp_size')} or {name}"),
        (ep > 1 and ep * moe_dp != tp, f"{ep_name} x {name} = {ep} x {moe_dp} is not {tp_name} {tp}",
         f"choose {ep_name} and {name} so that {ep_name} x {name} equals {tp_name} {tp}"),
        (newer and cp != moe_dp, f"{name} {moe_dp} > 1 needs {cp_name} equal to it (got {cp})",
         f"set {cp_name} {moe_dp} to match {name}, or drop {name}"),
    ]
    broken = next(((text, fix) for bad, text, fix in checks if bad), None)
    if broken is None:
        return None
    return Hit(("moe_dp_size", "tp_size"), {"detail": broken[0], "moe_dp": name, "fix": broken[1]})
