"""Model rules: the checkpoint (``Settings.model``, ``Settings.draft``: generator/checkpoint/)
against the flags, as SGLang decides when it builds the model and its ModelConfig.

These checks fire minutes into a start, after the weights are read (``divide()`` in the
attention layers, the FP8 methods' shape checks, ``ModelConfig._derive_context_length``), so no
ServerArgs oracle sees them; tests/test_model_oracle.py runs the pinned SGLang's own code on
real config.json shapes against these predicates. Each is silent when the fact it needs is
absent (no snapshot, or a key the snapshot lacks).
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Hit, Item, check, first_broken, item, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def attention_tp(s: Settings) -> tuple[int, list[Item]]:
    """The attention-TP width (TP divided by the DP-attention and attention-CP sizes), and the
    settings it came from as items (``tp``, the DP-attention items of common.dp_attention,
    ``attn-cp`` in the rule's ``items:``)."""
    tp = s.integer("tp_size", 1)
    on, dp, dp_item = dp_attention(s)
    cp = s.integer("attn_cp_size", 1) if s.has("attn_cp_size") else 1
    width = max(1, tp // (dp if on else 1) // max(1, cp))
    parts = [item("tp")] + ([dp_item] if dp_item is not None else []) + ([item("attn-cp")] if cp > 1 else [])
    return width, parts


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _kv_misfit(heads: int, width: int) -> bool:
    """QKVParallelLinear: more KV heads than ranks are divided, fewer are replicated; either must be even."""
    return bool(heads % width) if heads >= width else bool(width % heads)


@predicate("tp-attention-heads")
def _tp_heads(s: Settings, rule: RuleSpec) -> Hit | None:
    """The query heads, the KV heads (unless MLA) and a vision tower's heads per attention-TP rank."""
    m = s.model
    if m is None:
        return None
    width, how = attention_tp(s)
    blame = ("tp_size", "dp_size")
    heads, kv, vision = m.attention_heads, m.kv_heads, m.vision_heads
    return first_broken([
        check(heads is not None and heads % width != 0, "heads", blame, heads=heads, divisors=_divisors(heads or 1)),
        check(kv is not None and not m.uses_mla and _kv_misfit(kv, width), "kv-heads", blame, heads=kv,
              divisors=_divisors(kv or 1)),
        check(vision is not None and vision % width != 0, "vision-heads", blame, heads=vision,
              divisors=_divisors(vision or 1)),
    ], width=width, how=how)


@predicate("fp8-block-per-rank")
def _fp8_blocks(s: Settings, rule: RuleSpec) -> Hit | None:
    """Block-wise FP8: each rank's slice of the MLP (Fp8LinearMethod) and of every expert
    (Fp8MoEMethod, over TP / EP ranks) is a whole number of [block_n, block_k] blocks."""
    m = s.model
    block = m.weight_block_size if m is not None else None
    tp = s.integer("tp_size", 1)
    if m is None or block is None or tp <= 1:
        return None
    ep = s.integer("ep_size", 1)
    dense, moe = m.int_of("intermediate_size"), m.int_of("moe_intermediate_size")
    checks = []
    if dense:
        part = dense // tp
        checks += [check(part % block[0] != 0, "dense", ("tp_size",), size=dense, ways=tp, part=part, block=block[0],
                         side="block_n"),
                   check(part % block[1] != 0, "dense", ("tp_size",), size=dense, ways=tp, part=part, block=block[1],
                         side="block_k")]
    if moe and m.experts:
        ways = max(1, tp // max(1, ep))
        part = moe // ways
        checks += [check(part % block[0] != 0, "experts", ("tp_size", "ep_size"), size=moe, ways=ways, part=part,
                         block=block[0], side="block_n"),
                   check(ways > 1 and part % block[1] != 0, "experts", ("tp_size", "ep_size"), size=moe, ways=ways,
                         part=part, block=block[1], side="block_k")]
    return first_broken(checks, block_n=block[0], block_k=block[1])


@predicate("context-length-limit")
def _context(s: Settings, rule: RuleSpec) -> Hit | None:
    """ModelConfig._derive_context_length: longer than the checkpoint's needs SGLang's override variable."""
    m = s.model
    wanted = s.opt_int("context_length")
    if m is None or wanted is None:
        return None
    limit = m.context_limit(s.rope_scaling_applies)
    allowed = s.env_true("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN") or s.env_true("SGLANG_IS_IN_CI")
    return first_broken([check(wanted > limit and not allowed, None, ("context_length",), wanted=wanted, limit=limit)])
