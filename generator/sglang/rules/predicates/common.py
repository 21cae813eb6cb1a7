"""Shared reading of speculative and parallel settings, as SGLang itself resolves them."""

from __future__ import annotations

from generator.sglang.rules.registry import Item, item
from generator.sglang.rules.settings import Settings

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")


def algorithm(s: Settings) -> str | None:
    """The speculative algorithm as SGLang resolves it: upper-cased (0.5.15+), NEXTN -> EAGLE, None for aux capture."""
    raw = s.get("speculative_algorithm")
    if raw is None or s.get("enable_return_aux_hidden_states"):
        # 0.5.23: with --enable-return-aux-hidden-states the algorithm only names the
        # capture convention; SGLang resets it to None before any speculative check
        return None
    name = str(raw).upper() if s.at_least(0, 5, 15) else str(raw)
    return "EAGLE" if name == "NEXTN" else name


def dp_attention(s: Settings) -> tuple[bool, int, Item | None]:
    """Whether DP attention is in effect, its size, and the settings that turned it on.

    0.5.23 has ``--attn-dp-size``; ``--dp-size N --enable-dp-attention`` is rewritten to
    it. Older pins turn DP attention off silently when ``--dp-size`` is 1. The settings are
    an item a text prints (``attn-dp-size`` or ``dp-size-with-dp-attention`` in the rule's
    ``items:``).
    """
    enabled = bool(s.get("enable_dp_attention", False))
    dp = s.integer("dp_size", 1)
    if s.has("attn_dp_size"):
        attn = s.integer("attn_dp_size", 1)
        if attn > 1:
            return True, attn, item("attn-dp-size")
    if enabled and dp > 1:
        return True, dp, item("dp-size-with-dp-attention")
    return False, 1, None

