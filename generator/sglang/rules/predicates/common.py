"""Shared reading of speculative and parallel settings, as SGLang itself resolves them."""

from __future__ import annotations

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


def dp_attention(s: Settings) -> tuple[bool, int, str]:
    """Whether DP attention is in effect, its size, and the setting that turned it on.

    0.5.23 has ``--attn-dp-size``; ``--dp-size N --enable-dp-attention`` is rewritten to
    it. Older pins turn DP attention off silently when ``--dp-size`` is 1.
    """
    enabled = bool(s.get("enable_dp_attention", False))
    dp = s.integer("dp_size", 1)
    if s.has("attn_dp_size"):
        attn = s.integer("attn_dp_size", 1)
        if attn > 1:
            return True, attn, f"{s.flag('attn_dp_size')} {attn}"
    if enabled and dp > 1:
        return True, dp, f"{s.flag('enable_dp_attention')} with {s.flag('dp_size')} {dp}"
    return False, 1, ""

