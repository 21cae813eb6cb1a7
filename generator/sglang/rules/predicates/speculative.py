"""Predicates of the speculative-decoding rules (spec-*)."""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.predicates.common import EAGLE_FAMILY, algorithm, dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


@predicate("spec-algo-unknown")
def _spec_algo_unknown(s: Settings, rule: RuleSpec) -> Hit | None:
    raw = s.get("speculative_algorithm")
    known = rule.param("builtins", s.version) or []
    if raw is None or str(raw).upper() in known:
        return None
    fix = ("write EAGLE: SGLang runs a model's own MTP heads as EAGLE (model cards say NEXTN)"
           if str(raw).upper() == "MTP" else "use one of " + ", ".join(known))
    return Hit(("speculative_algorithm",), {"algo": raw, "known": ", ".join(known), "fix": fix})


@predicate("spec-steps-all-or-none")
def _spec_steps_all_or_none(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) not in EAGLE_FAMILY or s.get("speculative_num_steps") is not None:
        return None
    given = [n for n in ("speculative_eagle_topk", "speculative_num_draft_tokens") if s.get(n) is not None]
    if not given:
        return None
    return Hit(tuple(given), {"given": " and ".join(s.flag(n) for n in given),
                              "steps": s.flag("speculative_num_steps")})


def _topk_page(s: Settings, rule: RuleSpec) -> tuple[int, int, list[str]] | None:
    """(top-k, page size, allowed backends) when top-k > 1 meets page size > 1."""
    algo = algorithm(s)
    if algo in EAGLE_FAMILY:
        topk = s.get("speculative_eagle_topk")
    elif algo == "NGRAM":
        topk = s.get("speculative_ngram_max_bfs_breadth")
    else:
        return None
    page = s.get("page_size", 1)
    allowed = rule.param("backends", s.version)
    if not isinstance(topk, int) or not isinstance(page, int) or topk <= 1 or page <= 1 or not allowed:
        return None
    if algo == "NGRAM":
        allowed = rule.param("ngram_backends", s.version) or allowed
    return topk, page, list(allowed)


def _topk_page_fields(s: Settings, topk: int, page: int, allowed: list[str]) -> dict[str, Any]:
    return {"topk": s.flag("speculative_eagle_topk"), "topk_value": topk, "page": s.flag("page_size"),
            "page_value": page, "backend": s.flag("attention_backend"),
            "allowed": "|".join(allowed), "first": allowed[0], "got": s.get("attention_backend")}


@predicate("spec-topk-page")
def _spec_topk_page(s: Settings, rule: RuleSpec) -> Hit | None:
    found = _topk_page(s, rule)
    if found is None or s.get("attention_backend") is None or s.get("attention_backend") in found[2]:
        return None
    return Hit(("attention_backend", "page_size", "speculative_eagle_topk"), _topk_page_fields(s, *found))


@predicate("spec-topk-page-auto-backend")
def _spec_topk_page_auto(s: Settings, rule: RuleSpec) -> Hit | None:
    found = _topk_page(s, rule)
    if found is None or s.get("attention_backend") is not None:
        return None
    return Hit(("page_size", "speculative_eagle_topk"), _topk_page_fields(s, *found))


@predicate("spec-topk-trtllm")
def _spec_topk_trtllm(s: Settings, rule: RuleSpec) -> Hit | None:
    topk = s.get("speculative_eagle_topk")
    if algorithm(s) not in EAGLE_FAMILY or not isinstance(topk, int) or topk <= 1:
        return None
    for name in ("attention_backend", "decode_attention_backend", "prefill_attention_backend"):
        if s.get(name) == "trtllm_mha":
            return Hit((name, "speculative_eagle_topk"), {"which": s.flag(name), "topk_value": topk,
                                                          "topk": s.flag("speculative_eagle_topk")})
    return None


@predicate("spec-topk1-draft-tokens")
def _spec_topk1_draft(s: Settings, rule: RuleSpec) -> Hit | None:
    steps, topk, draft = (s.get("speculative_num_steps"), s.get("speculative_eagle_topk"),
                          s.get("speculative_num_draft_tokens"))
    if algorithm(s) not in EAGLE_FAMILY or topk != 1 or not isinstance(steps, int) or draft is None:
        return None
    if draft == steps + 1:
        return None
    return Hit(("speculative_num_draft_tokens",), {
        "topk": s.flag("speculative_eagle_topk"), "draft": s.flag("speculative_num_draft_tokens"),
        "steps": s.flag("speculative_num_steps"), "forced": steps + 1, "written": draft})


def _spec_with_dp(s: Settings, algo: str) -> Hit | None:
    on, _, text = dp_attention(s)
    if algorithm(s) != algo or not on:
        return None
    return Hit(("attn_dp_size", "enable_dp_attention", "dp_size", "speculative_algorithm"), {"dp_text": text})


@predicate("spec-pp")
def _spec_pp(s: Settings, rule: RuleSpec) -> Hit | None:
    algo, pp = algorithm(s), s.integer("pp_size", 1)
    if algo in (None, "NONE") or pp <= 1:
        return None
    if s.at_least(0, 5, 23) and algo != "DFLASH":
        return None  # 0.5.23: check_pipeline_parallel_compat decides (rule pp-compat); DFLASH fails before it
    return Hit(("pp_size", "speculative_algorithm"), {"algo": algo, "pp": s.flag("pp_size"), "pp_value": pp})
