"""Predicates of speculative decoding: SGLang's speculative handlers (EAGLE family, NGRAM, DFLASH, UNO, DSPARK, adaptive steps, aux hidden-state capture).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.predicates.common import EAGLE_FAMILY, algorithm, dp_attention
from generator.sglang.rules.registry import Hit, check, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


_AUX_METHODS = ("EAGLE3", "DFLASH", "DSPARK")




@predicate("aux-hidden-state-capture")
def _aux_hidden_state_capture(s: Settings, rule: RuleSpec) -> Hit | None:
    ids = s.get("return_aux_hidden_state_layer_ids")
    if not s.get("enable_return_aux_hidden_states"):
        return first_broken([check(ids is not None, "layer-ids-without-capture", ("return_aux_hidden_state_layer_ids",))])
    raw = s.get("speculative_algorithm")
    method = str(raw or "").upper()
    layers = [i for i in ids if isinstance(i, int)] if isinstance(ids, list) else None
    return first_broken([
        check(method not in _AUX_METHODS, "method-not-capturing", ("enable_return_aux_hidden_states", "speculative_algorithm"), raw=raw),
        check(s.get("speculative_draft_model_path") is not None, "with-draft-model", ("enable_return_aux_hidden_states", "speculative_algorithm")),
        check(s.integer("pp_size", 1) != 1, "pp-not-one", ("enable_return_aux_hidden_states", "speculative_algorithm")),
        check(method != "EAGLE3" and not layers, "layer-ids-missing", ("enable_return_aux_hidden_states", "speculative_algorithm"), method=method),
        check(layers is not None and any(i < 0 for i in layers), "layer-ids-negative", ("enable_return_aux_hidden_states", "speculative_algorithm"), layers=layers),
        check(layers is not None and len(set(layers)) != len(layers), "layer-ids-repeated", ("enable_return_aux_hidden_states", "speculative_algorithm"), layers=layers),
    ])


# handle_speculative_decoding (0.5.23): the algorithms a decode engine's radix cache and block
# verification work with (names after SGLang's alias step, NEXTN -> EAGLE).
_RADIX_DECODE_ALGORITHMS = (None, "DSPARK", "EAGLE", "EAGLE3")


_BLOCK_VERIFY_ALGORITHMS = ("EAGLE", "EAGLE3", "DFLASH", "DSPARK")






@predicate("spec-decoding-args")
def _spec_decoding_args(s: Settings, rule: RuleSpec) -> Hit | None:
    algo = algorithm(s)
    window, sink = s.opt_int("speculative_draft_window_size"), s.opt_int("speculative_draft_sink_size")
    return first_broken([
        check(s.get("disaggregation_mode") == "decode" and bool(s.get("disaggregation_decode_enable_radix_cache"))
         and algo not in _RADIX_DECODE_ALGORITHMS, "decode-radix-algorithm", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), algo=algo, allowed=sorted(a for a in _RADIX_DECODE_ALGORITHMS if a)),
        check(bool(s.get("speculative_use_block_verification")) and algo not in _BLOCK_VERIFY_ALGORITHMS, "block-verification-algorithm", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), algo=algo),
        check(window is not None and window <= 0, "window-not-positive", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), window=window),
        check(sink is not None and sink < 0, "sink-negative", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), sink=sink),
        check(sink is not None and window is None, "sink-without-window", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache")),
    ])


def rejection_sampling(s: Settings) -> bool:
    """--speculative-use-rejection-sampling, also turned on by block verification for EAGLE/EAGLE3."""
    if bool(s.get("speculative_use_rejection_sampling")):
        return True
    return bool(s.get("speculative_use_block_verification")) and algorithm(s) in ("EAGLE", "EAGLE3")


@predicate("spec-rejection-sampling")
def _spec_rejection_sampling(s: Settings, rule: RuleSpec) -> Hit | None:
    algo = algorithm(s)
    if algo not in EAGLE_FAMILY or not rejection_sampling(s):
        return None
    topk = s.get("speculative_eagle_topk")  # unset: SGLang picks it from the model's architecture
    return first_broken([
        check(algo not in ("EAGLE", "EAGLE3"), "algorithm-not-eagle", ("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc"), algo=algo),
        check(isinstance(topk, int) and topk != 1, "topk-not-one", ("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc"), topk=topk),
        check(s.get("speculative_accept_threshold_single", 1.0) != 1.0 or s.get("speculative_accept_threshold_acc", 1.0) != 1.0, "accept-thresholds", ("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc")),
    ])


@predicate("spec-ngram-corpus")
def _spec_ngram_corpus(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "NGRAM" or s.get("speculative_ngram_external_corpus_path") is None:
        return None
    budget = s.integer("speculative_ngram_external_sam_budget", 0)
    max_tokens = s.integer("speculative_ngram_external_corpus_max_tokens", 10000000)
    draft = s.integer("speculative_num_draft_tokens", 12)  # SGLang's NGRAM default is 12
    return first_broken([
        check(budget <= 0, "sam-budget-not-positive", ("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), budget=budget),
        check(max_tokens <= 0, "max-tokens-not-positive", ("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), max_tokens=max_tokens),
        check(budget > draft - 1, "sam-budget-above-draft-tokens", ("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), most=draft - 1, budget=budget),
    ])


def _dflash_draft_tokens(s: Settings) -> int | None:
    """The DFLASH verify block as the flags fix it (block size, else draft tokens); None: from the draft's config."""
    block = s.opt_int("speculative_dflash_block_size")
    return block if block is not None else s.opt_int("speculative_num_draft_tokens")


@predicate("spec-dflash-args")
def _spec_dflash_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "DFLASH":
        return None
    dp_on = dp_attention(s)[0] and s.get("device") != "npu"
    block, draft = s.opt_int("speculative_dflash_block_size"), s.opt_int("speculative_num_draft_tokens")
    window, tokens = s.opt_int("speculative_draft_window_size"), _dflash_draft_tokens(s)
    block_option = s.flag("speculative_dflash_block_size") if block is not None else s.flag("speculative_num_draft_tokens")
    return first_broken([
        check(dp_on and not s.get("enable_dp_lm_head"), "dp-without-dp-lm-head", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size")),
        check(dp_on and s.integer("attn_cp_size", 1) != 1, "dp-with-cp", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), cp=s.integer("attn_cp_size", 1)),
        check(block is not None and block <= 0, "block-size-not-positive", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), block=block),
        check(block is not None and block > 0 and draft is not None and draft != block, "draft-tokens-not-block-size", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), draft=draft, block=block),
        check(window is not None and tokens is not None and window < tokens, "window-below-block", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), block_option=block_option, window=window, tokens=tokens),
    ])


# DEFAULT_ADAPTIVE_CONFIG of 0.5.23's adaptive_spec_params: the union of its candidate steps.
_ADAPTIVE_DEFAULT_STEPS = (0, 1, 3, 5, 7)


def _adaptive_applies(s: Settings) -> bool:
    """SGLang keeps --speculative-adaptive on (adaptive_unsupported_reason finds nothing)."""
    topk = s.get("speculative_eagle_topk")
    return (bool(s.get("speculative_adaptive")) and algorithm(s) in ("EAGLE", "EAGLE3") and topk in (None, 1)
            and not dp_attention(s)[0] and not s.get("enable_multi_layer_eagle")
            and not s.get("enable_two_batch_overlap") and not s.get("enable_pdmux"))


@predicate("spec-adaptive-steps")
def _spec_adaptive_steps(s: Settings, rule: RuleSpec) -> Hit | None:
    steps = s.opt_int("speculative_num_steps")
    if not _adaptive_applies(s) or s.get("speculative_adaptive_config") is not None or steps is None:
        return None  # a config file of the host's names its own candidates
    if steps in _ADAPTIVE_DEFAULT_STEPS:
        return None
    return Hit(("speculative_num_steps", "speculative_adaptive"), {"steps": steps, "candidates": list(_ADAPTIVE_DEFAULT_STEPS)})


_UNO_BLAME = ("speculative_algorithm", "speculative_num_draft_tokens", "speculative_eagle_topk",
              "speculative_num_steps", "uno_lora_path", "speculative_draft_model_path")
_DSPARK_BLAME = ("speculative_dspark_block_size", "speculative_num_draft_tokens", "enable_dp_lm_head",
                 "moe_a2a_backend", "pp_size")


def _uno_tree(s: Settings, q: int, k: int) -> Hit | None:
    """UNO tree mode (top-k > 1): the verify width Q against the draft width F = steps + 1."""
    steps = s.opt_int("speculative_num_steps")
    if steps is None or steps < 1:
        return first_broken([
            check(steps is None, "tree-steps-missing", _UNO_BLAME),
            check(True, "tree-steps-not-positive", _UNO_BLAME, steps=steps)])
    f = steps + 1
    capacity = nodes = 1
    for _ in range(steps):
        nodes *= k
        capacity += nodes
        if capacity >= q:
            break
    parent = k * max(steps - 1, 0) + 1
    return first_broken([
        check(q < f, "tree-q-below-f", _UNO_BLAME, q=q, f=f),
        check(q > 128, "tree-q-too-wide", _UNO_BLAME, q=q),
        check(q * k > 2048, "tree-q-times-k-too-wide", _UNO_BLAME, q=q, k=k, qk=q * k),
        check(q > capacity, "tree-capacity", _UNO_BLAME, q=q, capacity=capacity, f=f, k=k),
        check(q - 1 > parent, "tree-parent-list", _UNO_BLAME, q_minus_one=q - 1, parent=parent, f=f, k=k),
        check(bool(s.get("enable_pdmux")), "tree-pdmux", _UNO_BLAME),
        check(bool(s.get("enable_two_batch_overlap")), "tree-two-batch-overlap", _UNO_BLAME),
        check(s.get("speculative_accept_threshold_single", 1.0) != 1.0 or s.get("speculative_accept_threshold_acc", 1.0) != 1.0, "tree-accept-thresholds", _UNO_BLAME),
    ])


def _uno_backends(s: Settings) -> tuple[str | None, str | None]:
    """(prefill, decode) attention backends as written; None where SGLang picks one for the GPU."""
    both = s.get("attention_backend")
    return s.get("prefill_attention_backend") or both, s.get("decode_attention_backend") or both


def _uno_rest(s: Settings) -> Hit | None:
    """The checks after the widths: parallelism, LoRA, rejection sampling, FA3; (text, fix)."""
    prefill, decode = _uno_backends(s)
    tp, pp = s.integer("tp_size", 1), s.integer("pp_size", 1)
    return first_broken([
        check((tp, pp) != (1, 1), "tp-pp-not-one", _UNO_BLAME, tp=tp, pp=pp),
        check(dp_attention(s)[0] or s.integer("attn_cp_size", 1) != 1, "dp-attention-or-cp", _UNO_BLAME,
              dp_option=s.flag("attn_dp_size") if s.has("attn_dp_size") else s.flag("enable_dp_attention")),
        check(bool(s.get("enable_lora")) or bool(s.get("lora_paths")), "lora", _UNO_BLAME),
        check(bool(s.get("speculative_use_rejection_sampling")), "rejection-sampling", _UNO_BLAME),
        check(prefill is not None and decode is not None and (prefill, decode) != ("fa3", "fa3"), "not-fa3", _UNO_BLAME, prefill=prefill, decode=decode),
    ])


@predicate("spec-uno-args")
def _spec_uno_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "UNO":
        return None
    q, topk = s.get("speculative_num_draft_tokens"), s.get("speculative_eagle_topk")
    k = topk if isinstance(topk, int) else 1
    broken = first_broken([
        check(s.get("speculative_draft_model_path") is not None, "draft-model", _UNO_BLAME),
        check(s.get("uno_lora_path") is None, "uno-lora-path-missing", _UNO_BLAME),
        check(bool(s.get("enable_deterministic_inference")), "deterministic-inference", _UNO_BLAME),
        check(bool(s.get("enable_strict_thinking")), "strict-thinking", _UNO_BLAME),
        check(not isinstance(q, int) or q < 1, "q-not-positive", _UNO_BLAME),
        check(k < 1, "k-below-one", _UNO_BLAME, k=k),
    ])
    if broken is None and isinstance(q, int) and k > 1:
        broken = _uno_tree(s, q, k)
    broken = broken or _uno_rest(s)
    return broken


def _dspark_dp(s: Settings) -> Hit | None:
    """DSPARK with DP attention (a device other than NPU): LM-head DP, the a2a backends, no CP; (text, fix)."""
    on, size, _ = dp_attention(s)
    if not on or size <= 1:
        return None
    npu = str(s.get("device") or "").startswith("npu")
    a2a, spec_a2a = s.get("moe_a2a_backend", "none"), s.get("speculative_moe_a2a_backend")
    cp = s.integer("attn_cp_size", 1)
    return first_broken([
        check(not s.get("enable_dp_lm_head"), "dp-without-dp-lm-head", _DSPARK_BLAME),
        check(not npu and a2a not in ("none", "megamoe", "mori"), "dp-a2a-backend", _DSPARK_BLAME, a2a=a2a),
        check(cp > 1, "dp-with-cp", _DSPARK_BLAME, cp=cp),
        check(not npu and spec_a2a is not None and spec_a2a != a2a, "dp-spec-a2a-backend", _DSPARK_BLAME, a2a=a2a, spec_a2a=spec_a2a),
    ])


@predicate("spec-dspark-args")
def _spec_dspark_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "DSPARK":
        return None
    block, draft = s.opt_int("speculative_dspark_block_size"), s.opt_int("speculative_num_draft_tokens")
    broken = _dspark_dp(s) or first_broken([
        check(s.integer("pp_size", 1) != 1 and s.get("disaggregation_mode") != "prefill", "pp-not-prefill", _DSPARK_BLAME),
        check(block is not None and block <= 0, "block-size-not-positive", _DSPARK_BLAME, block=block),
        check(block is not None and block > 0 and draft is not None and draft != block + 1, "draft-tokens-not-block-plus-one", _DSPARK_BLAME, expected=(block or 0) + 1, block=block, draft=draft),
        check(block is None and draft is not None and draft < 2, "draft-tokens-below-two", _DSPARK_BLAME, draft=draft),
    ])
    return broken


@predicate("spec-algo-unknown")
def _spec_algo_unknown(s: Settings, rule: RuleSpec) -> Hit | None:
    raw = s.get("speculative_algorithm")
    known = rule.param("builtins", s.version) or []
    if raw is None or str(raw).upper() in known:
        return None
    return Hit(("speculative_algorithm",), {"algo": raw, "known": list(known)},
               "mtp" if str(raw).upper() == "MTP" else "unknown")


@predicate("spec-steps-all-or-none")
def _spec_steps_all_or_none(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) not in EAGLE_FAMILY or s.get("speculative_num_steps") is not None:
        return None
    given = [n for n in ("speculative_eagle_topk", "speculative_num_draft_tokens") if s.get(n) is not None]
    if not given:
        return None
    return Hit(tuple(given), {"given": [s.flag(n) for n in given]})


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
    return {"topk": topk, "page": page, "allowed": allowed, "first": allowed[0], "got": s.get("attention_backend")}


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
            return Hit((name, "speculative_eagle_topk"), {"which": s.flag(name), "topk": topk})
    return None


@predicate("spec-topk1-draft-tokens")
def _spec_topk1_draft(s: Settings, rule: RuleSpec) -> Hit | None:
    steps, topk, draft = (s.get("speculative_num_steps"), s.get("speculative_eagle_topk"),
                          s.get("speculative_num_draft_tokens"))
    if algorithm(s) not in EAGLE_FAMILY or topk != 1 or not isinstance(steps, int) or draft is None:
        return None
    if draft == steps + 1:
        return None
    return Hit(("speculative_num_draft_tokens",), {"forced": steps + 1, "written": draft})


@predicate("spec-pp")
def _spec_pp(s: Settings, rule: RuleSpec) -> Hit | None:
    algo, pp = algorithm(s), s.integer("pp_size", 1)
    if algo in (None, "NONE") or pp <= 1:
        return None
    if s.at_least(0, 5, 23) and algo != "DFLASH":
        return None  # 0.5.23: check_pipeline_parallel_compat decides (rule pp-compat); DFLASH fails before it
    return Hit(("pp_size", "speculative_algorithm"), {"algo": algo, "pp": s.flag("pp_size"), "pp_value": pp})
