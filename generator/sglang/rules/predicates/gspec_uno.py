"""Predicates of the UNO and DSPARK speculative-decoding rules (0.5.23's _handle_uno, _handle_dspark).

Each reports the first of SGLang's own checks the settings break, in SGLang's order and
words. Checks on the device kind (UNO needs CUDA) and on the checkpoint (a DSPARK draft
bundled in the target) are left to their coverage waivers.
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.predicates.gspec import first_broken_fix
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def _uno_tree(s: Settings, q: int, k: int) -> tuple[str, str] | None:
    """UNO tree mode (top-k > 1): the verify width Q against the draft width F = steps + 1; (text, fix)."""
    steps, steps_flag = s.opt_int("speculative_num_steps"), s.flag("speculative_num_steps")
    q_flag, k_flag = s.flag("speculative_num_draft_tokens"), s.flag("speculative_eagle_topk")
    if steps is None:
        return (f"UNO tree mode requires {steps_flag} so its draft width F can be derived as {steps_flag} + 1",
                f"add {steps_flag}, or set {k_flag} 1")
    if steps < 1:
        return (f"UNO tree mode requires {steps_flag} to be positive, got {steps}", f"set {steps_flag} to 1 or more")
    f = steps + 1
    capacity = nodes = 1
    for _ in range(steps):
        nodes *= k
        capacity += nodes
        if capacity >= q:
            break
    parent = k * max(steps - 1, 0) + 1
    widths = f"change {q_flag} (Q), {steps_flag} (F - 1) or {k_flag} (K)"
    return first_broken_fix([
        (q < f, f"UNO tree mode requires Q >= F; got Q={q} ({q_flag}), F={f} ({steps_flag} + 1)",
         f"raise {q_flag} to {f} or more, or lower {steps_flag}"),
        (q > 128, f"UNO tree mode currently supports at most Q=128 verify nodes, got Q={q} ({q_flag})",
         f"set {q_flag} 128 or less"),
        (q * k > 2048, f"UNO tree mode currently supports Q*K <= 2048; got Q*K={q}*{k}={q * k} ({q_flag} x {k_flag})",
         f"lower {q_flag} or {k_flag}"),
        (q > capacity, f"UNO tree mode cannot build the requested Q from F and K: Q={q} exceeds "
                       f"capacity={capacity} for F={f}, K={k}", widths),
        (q - 1 > parent, f"UNO tree mode cannot represent the requested Q in EAGLE's parent-list ABI: "
                         f"Q-1={q - 1} exceeds K*(F-2)+1={parent} for F={f}, K={k}", widths),
        (bool(s.get("enable_pdmux")), "UNO tree mode does not yet support PDMux",
         f"drop {s.flag('enable_pdmux')}, or set {k_flag} 1"),
        (bool(s.get("enable_two_batch_overlap")), "UNO tree mode does not yet support two-batch overlap",
         f"drop {s.flag('enable_two_batch_overlap')}, or set {k_flag} 1"),
        (s.get("speculative_accept_threshold_single", 1.0) != 1.0 or s.get("speculative_accept_threshold_acc", 1.0) != 1.0,
         "UNO tree mode reuses EAGLE target-only sampling and requires both speculative accept thresholds to be 1.0",
         f"set {s.flag('speculative_accept_threshold_single')} and {s.flag('speculative_accept_threshold_acc')} "
         "1.0, or drop them"),
    ])


def _uno_backends(s: Settings) -> tuple[str | None, str | None]:
    """(prefill, decode) attention backends as written; None where SGLang picks one for the GPU."""
    both = s.get("attention_backend")
    return s.get("prefill_attention_backend") or both, s.get("decode_attention_backend") or both


def _uno_rest(s: Settings) -> tuple[str, str] | None:
    """The checks after the widths: parallelism, LoRA, rejection sampling, FA3; (text, fix)."""
    prefill, decode = _uno_backends(s)
    tp, pp = s.integer("tp_size", 1), s.integer("pp_size", 1)
    rejection = s.flag("speculative_use_rejection_sampling")
    return first_broken_fix([
        ((tp, pp) != (1, 1), f"UNO requires TP=PP=1 (got {s.flag('tp_size')} {tp}, {s.flag('pp_size')} {pp})",
         f"set {s.flag('tp_size')} 1 and {s.flag('pp_size')} 1"),
        (dp_attention(s)[0] or s.integer("attn_cp_size", 1) != 1,
         "UNO does not support DP attention or context parallelism",
         f"drop attention DP ({s.flag('attn_dp_size') if s.has('attn_dp_size') else s.flag('enable_dp_attention')}) "
         f"and {s.flag('attn_cp_size')}"),
        (bool(s.get("enable_lora")) or bool(s.get("lora_paths")), "UNO does not support public Multi-LoRA serving",
         f"drop {s.flag('enable_lora')} and {s.flag('lora_paths')} (UNO's adapter goes in {s.flag('uno_lora_path')})"),
        (bool(s.get("speculative_use_rejection_sampling")),
         f"UNO manages its own stochastic verification and does not use {rejection}", f"drop {rejection}"),
        (prefill is not None and decode is not None and (prefill, decode) != ("fa3", "fa3"),
         f"UNO requires FA3 for both prefill and decode attention; got prefill={prefill!r}, decode={decode!r}",
         f"set {s.flag('attention_backend')} fa3 (and no other prefill/decode attention backend)"),
    ])


@predicate("spec-uno-args")
def _spec_uno_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "UNO":
        return None
    q, topk = s.get("speculative_num_draft_tokens"), s.get("speculative_eagle_topk")
    k = topk if isinstance(topk, int) else 1
    q_flag, k_flag = s.flag("speculative_num_draft_tokens"), s.flag("speculative_eagle_topk")
    draft, det, strict = (s.flag("speculative_draft_model_path"), s.flag("enable_deterministic_inference"),
                          s.flag("enable_strict_thinking"))
    broken = first_broken_fix([
        (s.get("speculative_draft_model_path") is not None,
         f"UNO reuses the target model and does not accept {draft}", f"drop {draft}"),
        (s.get("uno_lora_path") is None, f"UNO requires {s.flag('uno_lora_path')}",
         f"add {s.flag('uno_lora_path')} with the UNO adapter"),
        (bool(s.get("enable_deterministic_inference")), f"UNO does not support {det}", f"drop {det}"),
        (bool(s.get("enable_strict_thinking")), f"UNO does not support {strict}", f"drop {strict}"),
        (not isinstance(q, int) or q < 1,
         f"UNO requires {q_flag} to be a positive integer denoting the linear width or tree verify width Q",
         f"set {q_flag} to 1 or more"),
        (k < 1, f"UNO requires {k_flag} to be at least 1, got {k}", f"set {k_flag} to 1 or more"),
    ])
    if broken is None and isinstance(q, int) and k > 1:
        broken = _uno_tree(s, q, k)
    broken = broken or _uno_rest(s)
    if broken is None:
        return None
    return Hit(("speculative_algorithm", "speculative_num_draft_tokens", "speculative_eagle_topk",
                "speculative_num_steps", "uno_lora_path", "speculative_draft_model_path"),
               {"detail": broken[0], "fix": broken[1]})


def _dspark_dp(s: Settings) -> tuple[str, str] | None:
    """DSPARK with DP attention (a device other than NPU): LM-head DP, the a2a backends, no CP; (text, fix)."""
    on, size, _ = dp_attention(s)
    if not on or size <= 1:
        return None
    npu = str(s.get("device") or "").startswith("npu")
    a2a, spec_a2a = s.get("moe_a2a_backend", "none"), s.get("speculative_moe_a2a_backend")
    cp = s.integer("attn_cp_size", 1)
    a2a_flag, spec_a2a_flag = s.flag("moe_a2a_backend"), s.flag("speculative_moe_a2a_backend")
    return first_broken_fix([
        (not s.get("enable_dp_lm_head"), f"DSpark with dp attention requires {s.flag('enable_dp_lm_head')}",
         f"add {s.flag('enable_dp_lm_head')}"),
        (not npu and a2a not in ("none", "megamoe", "mori"),
         f"DSpark with dp attention supports {a2a_flag} none (built-in TP MoE), megamoe or mori, got {a2a!r}",
         f"set {a2a_flag} none, megamoe or mori"),
        (cp > 1, f"DSpark with dp attention does not support context parallel ({s.flag('attn_cp_size')} {cp})",
         f"set {s.flag('attn_cp_size')} 1"),
        (not npu and spec_a2a is not None and spec_a2a != a2a,
         f"DSpark ignores {spec_a2a_flag}; with dp attention it must match the target {a2a_flag} {a2a!r} "
         f"(got {spec_a2a!r})", f"drop {spec_a2a_flag}, or set it to {a2a}"),
    ])


@predicate("spec-dspark-args")
def _spec_dspark_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "DSPARK":
        return None
    block, draft = s.opt_int("speculative_dspark_block_size"), s.opt_int("speculative_num_draft_tokens")
    block_flag, draft_flag = s.flag("speculative_dspark_block_size"), s.flag("speculative_num_draft_tokens")
    pp_flag = s.flag("pp_size")
    broken = _dspark_dp(s) or first_broken_fix([
        (s.integer("pp_size", 1) != 1 and s.get("disaggregation_mode") != "prefill",
         f"DSpark pipeline parallelism requires PD prefill; decode and non-disaggregated serving require {pp_flag} 1",
         f"set {pp_flag} 1, or run this as a {s.flag('disaggregation_mode')} prefill server"),
        (block is not None and block <= 0, f"DSpark requires {block_flag} (gamma) to be positive, got {block}",
         f"set {block_flag} to 1 or more"),
        (block is not None and block > 0 and draft is not None and draft != block + 1,
         f"DSpark {draft_flag} must equal gamma + 1 (= {(block or 0) + 1} for {block_flag} {block}), "
         f"but got {draft_flag} {draft}", f"set {draft_flag} {(block or 0) + 1}, or drop it"),
        (block is None and draft is not None and draft < 2,
         f"DSpark {draft_flag} must be >= 2 (= gamma + 1, gamma being {block_flag}), got {draft}",
         f"set {draft_flag} 2 or more, or drop it"),
    ])
    if broken is None:
        return None
    return Hit(("speculative_dspark_block_size", "speculative_num_draft_tokens", "enable_dp_lm_head",
                "moe_a2a_backend", "pp_size"), {"detail": broken[0], "fix": broken[1]})
