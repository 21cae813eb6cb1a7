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
    flag, ids_flag = s.flag("enable_return_aux_hidden_states"), s.flag("return_aux_hidden_state_layer_ids")
    if not s.get("enable_return_aux_hidden_states"):
        return first_broken([check(ids is not None, "aux-hidden-state-capture-7", ("return_aux_hidden_state_layer_ids",), ids_flag=ids_flag, flag_=flag)])
    raw = s.get("speculative_algorithm")
    method = str(raw or "").upper()
    layers = [i for i in ids if isinstance(i, int)] if isinstance(ids, list) else None
    algo_flag, draft_flag = s.flag("speculative_algorithm"), s.flag("speculative_draft_model_path")
    return first_broken([
        check(method not in _AUX_METHODS, "aux-hidden-state-capture-1", ("enable_return_aux_hidden_states", "speculative_algorithm"), flag_=flag, algo_flag=algo_flag, raw=raw),
        check(s.get("speculative_draft_model_path") is not None, "aux-hidden-state-capture-2", ("enable_return_aux_hidden_states", "speculative_algorithm"), flag_=flag, draft_flag=draft_flag),
        check(s.integer("pp_size", 1) != 1, "aux-hidden-state-capture-3", ("enable_return_aux_hidden_states", "speculative_algorithm"), flag_=flag),
        check(method != "EAGLE3" and not layers, "aux-hidden-state-capture-4", ("enable_return_aux_hidden_states", "speculative_algorithm"), flag_=flag, method=method, ids_flag=ids_flag),
        check(layers is not None and any(i < 0 for i in layers), "aux-hidden-state-capture-5", ("enable_return_aux_hidden_states", "speculative_algorithm"), ids_flag=ids_flag, layers=layers),
        check(layers is not None and len(set(layers)) != len(layers), "aux-hidden-state-capture-6", ("enable_return_aux_hidden_states", "speculative_algorithm"), ids_flag=ids_flag, layers=layers),
    ])


# handle_speculative_decoding (0.5.23): the algorithms a decode engine's radix cache and block
# verification work with (names after SGLang's alias step, NEXTN -> EAGLE).
_RADIX_DECODE_ALGORITHMS = (None, "DSPARK", "EAGLE", "EAGLE3")


_BLOCK_VERIFY_ALGORITHMS = ("EAGLE", "EAGLE3", "DFLASH", "DSPARK")






@predicate("spec-decoding-args")
def _spec_decoding_args(s: Settings, rule: RuleSpec) -> Hit | None:
    algo = algorithm(s)
    window, sink = s.opt_int("speculative_draft_window_size"), s.opt_int("speculative_draft_sink_size")
    radix, algo_flag, block = (s.flag("disaggregation_decode_enable_radix_cache"), s.flag("speculative_algorithm"),
                               s.flag("speculative_use_block_verification"))
    win_flag, sink_flag = s.flag("speculative_draft_window_size"), s.flag("speculative_draft_sink_size")
    return first_broken([
        check(s.get("disaggregation_mode") == "decode" and bool(s.get("disaggregation_decode_enable_radix_cache"))
         and algo not in _RADIX_DECODE_ALGORITHMS, "spec-decoding-args-1", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), radix=radix, algo_flag=algo_flag, algo=algo, v0=', '.join(sorted(a for a in _RADIX_DECODE_ALGORITHMS if a))),
        check(bool(s.get("speculative_use_block_verification")) and algo not in _BLOCK_VERIFY_ALGORITHMS, "spec-decoding-args-2", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), block=block, algo=algo),
        check(window is not None and window <= 0, "spec-decoding-args-3", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), win_flag=win_flag, window=window),
        check(sink is not None and sink < 0, "spec-decoding-args-4", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), sink_flag=sink_flag, sink=sink),
        check(sink is not None and window is None, "spec-decoding-args-5", ("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), sink_flag=sink_flag, win_flag=win_flag),
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
    name = s.flag("speculative_use_rejection_sampling")
    return first_broken([
        check(algo not in ("EAGLE", "EAGLE3"), "spec-rejection-sampling-1", ("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc"), name=name, algo=algo),
        check(isinstance(topk, int) and topk != 1, "spec-rejection-sampling-2", ("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc"), name=name, topk=topk),
        check(s.get("speculative_accept_threshold_single", 1.0) != 1.0 or s.get("speculative_accept_threshold_acc", 1.0) != 1.0, "spec-rejection-sampling-3", ("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc"), name=name),
    ])


@predicate("spec-ngram-corpus")
def _spec_ngram_corpus(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "NGRAM" or s.get("speculative_ngram_external_corpus_path") is None:
        return None
    budget = s.integer("speculative_ngram_external_sam_budget", 0)
    max_tokens = s.integer("speculative_ngram_external_corpus_max_tokens", 10000000)
    draft = s.integer("speculative_num_draft_tokens", 12)  # SGLang's NGRAM default is 12
    path = s.flag("speculative_ngram_external_corpus_path")
    return first_broken([
        check(budget <= 0, "spec-ngram-corpus-1", ("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), path=path, budget=budget),
        check(max_tokens <= 0, "spec-ngram-corpus-2", ("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), path=path, max_tokens=max_tokens),
        check(budget > draft - 1, "spec-ngram-corpus-3", ("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), v0=draft - 1, budget=budget),
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
    block_flag, draft_flag = s.flag("speculative_dflash_block_size"), s.flag("speculative_num_draft_tokens")
    win_flag, cp_flag = s.flag("speculative_draft_window_size"), s.flag("attn_cp_size")
    return first_broken([
        check(dp_on and not s.get("enable_dp_lm_head"), "spec-dflash-args-1", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size")),
        check(dp_on and s.integer("attn_cp_size", 1) != 1, "spec-dflash-args-2", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), cp_flag=cp_flag, v0=s.integer('attn_cp_size', 1)),
        check(block is not None and block <= 0, "spec-dflash-args-3", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), block_flag=block_flag, block=block),
        check(block is not None and block > 0 and draft is not None and draft != block, "spec-dflash-args-4", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), draft_flag=draft_flag, block_flag=block_flag, draft=draft, block=block),
        check(window is not None and tokens is not None and window < tokens, "spec-dflash-args-5", ("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), win_flag=win_flag, v0=block_flag if block is not None else draft_flag, window=window, tokens=tokens),
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
    return Hit(("speculative_num_steps", "speculative_adaptive"), {
        "steps": s.flag("speculative_num_steps"), "value": steps,
        "candidates": "[" + ", ".join(str(c) for c in _ADAPTIVE_DEFAULT_STEPS) + "]"})


_UNO_BLAME = ("speculative_algorithm", "speculative_num_draft_tokens", "speculative_eagle_topk",
              "speculative_num_steps", "uno_lora_path", "speculative_draft_model_path")
_DSPARK_BLAME = ("speculative_dspark_block_size", "speculative_num_draft_tokens", "enable_dp_lm_head",
                 "moe_a2a_backend", "pp_size")


def _uno_tree(s: Settings, q: int, k: int) -> Hit | None:
    """UNO tree mode (top-k > 1): the verify width Q against the draft width F = steps + 1."""
    steps, steps_flag = s.opt_int("speculative_num_steps"), s.flag("speculative_num_steps")
    q_flag, k_flag = s.flag("speculative_num_draft_tokens"), s.flag("speculative_eagle_topk")
    if steps is None or steps < 1:
        return first_broken([
            check(steps is None, "uno-tree-7", _UNO_BLAME, steps_flag=steps_flag, k_flag=k_flag),
            check(True, "uno-tree-8", _UNO_BLAME, steps_flag=steps_flag, steps=steps)])
    f = steps + 1
    capacity = nodes = 1
    for _ in range(steps):
        nodes *= k
        capacity += nodes
        if capacity >= q:
            break
    parent = k * max(steps - 1, 0) + 1
    widths = f"change {q_flag} (Q), {steps_flag} (F - 1) or {k_flag} (K)"
    return first_broken([
        check(q < f, "uno-tree-1", _UNO_BLAME, q=q, q_flag=q_flag, f=f, steps_flag=steps_flag),
        check(q > 128, "uno-tree-2", _UNO_BLAME, q=q, q_flag=q_flag),
        check(q * k > 2048, "uno-tree-3", _UNO_BLAME, q=q, k=k, v0=q * k, q_flag=q_flag, k_flag=k_flag),
        check(q > capacity, None, _UNO_BLAME, detail=f"UNO tree mode cannot build the requested Q from F and K: Q={q} exceeds "
                       f"capacity={capacity} for F={f}, K={k}", fix=widths),
        check(q - 1 > parent, None, _UNO_BLAME, detail=f"UNO tree mode cannot represent the requested Q in EAGLE's parent-list ABI: "
                         f"Q-1={q - 1} exceeds K*(F-2)+1={parent} for F={f}, K={k}", fix=widths),
        check(bool(s.get("enable_pdmux")), "uno-tree-4", _UNO_BLAME, k_flag=k_flag),
        check(bool(s.get("enable_two_batch_overlap")), "uno-tree-5", _UNO_BLAME, k_flag=k_flag),
        check(s.get("speculative_accept_threshold_single", 1.0) != 1.0 or s.get("speculative_accept_threshold_acc", 1.0) != 1.0, "uno-tree-6", _UNO_BLAME),
    ])


def _uno_backends(s: Settings) -> tuple[str | None, str | None]:
    """(prefill, decode) attention backends as written; None where SGLang picks one for the GPU."""
    both = s.get("attention_backend")
    return s.get("prefill_attention_backend") or both, s.get("decode_attention_backend") or both


def _uno_rest(s: Settings) -> Hit | None:
    """The checks after the widths: parallelism, LoRA, rejection sampling, FA3; (text, fix)."""
    prefill, decode = _uno_backends(s)
    tp, pp = s.integer("tp_size", 1), s.integer("pp_size", 1)
    rejection = s.flag("speculative_use_rejection_sampling")
    return first_broken([
        check((tp, pp) != (1, 1), "uno-rest-1", _UNO_BLAME, tp=tp, pp=pp),
        check(dp_attention(s)[0] or s.integer("attn_cp_size", 1) != 1, "uno-rest-2", _UNO_BLAME, v0=s.flag('attn_dp_size') if s.has('attn_dp_size') else s.flag('enable_dp_attention')),
        check(bool(s.get("enable_lora")) or bool(s.get("lora_paths")), "uno-rest-3", _UNO_BLAME),
        check(bool(s.get("speculative_use_rejection_sampling")), "uno-rest-4", _UNO_BLAME, rejection=rejection),
        check(prefill is not None and decode is not None and (prefill, decode) != ("fa3", "fa3"), "uno-rest-5", _UNO_BLAME, prefill=prefill, decode=decode),
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
    broken = first_broken([
        check(s.get("speculative_draft_model_path") is not None, "spec-uno-args-1", _UNO_BLAME, draft=draft),
        check(s.get("uno_lora_path") is None, "spec-uno-args-2", _UNO_BLAME),
        check(bool(s.get("enable_deterministic_inference")), "spec-uno-args-3", _UNO_BLAME, det=det),
        check(bool(s.get("enable_strict_thinking")), "spec-uno-args-4", _UNO_BLAME, strict=strict),
        check(not isinstance(q, int) or q < 1, "spec-uno-args-5", _UNO_BLAME, q_flag=q_flag),
        check(k < 1, "spec-uno-args-6", _UNO_BLAME, k_flag=k_flag, k=k),
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
    a2a_flag, spec_a2a_flag = s.flag("moe_a2a_backend"), s.flag("speculative_moe_a2a_backend")
    return first_broken([
        check(not s.get("enable_dp_lm_head"), "dspark-dp-1", _DSPARK_BLAME),
        check(not npu and a2a not in ("none", "megamoe", "mori"), "dspark-dp-2", _DSPARK_BLAME, a2a_flag=a2a_flag, a2a=a2a),
        check(cp > 1, "dspark-dp-3", _DSPARK_BLAME, cp=cp),
        check(not npu and spec_a2a is not None and spec_a2a != a2a, "dspark-dp-4", _DSPARK_BLAME, spec_a2a_flag=spec_a2a_flag, a2a_flag=a2a_flag, a2a=a2a, spec_a2a=spec_a2a),
    ])


@predicate("spec-dspark-args")
def _spec_dspark_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "DSPARK":
        return None
    block, draft = s.opt_int("speculative_dspark_block_size"), s.opt_int("speculative_num_draft_tokens")
    block_flag, draft_flag = s.flag("speculative_dspark_block_size"), s.flag("speculative_num_draft_tokens")
    pp_flag = s.flag("pp_size")
    broken = _dspark_dp(s) or first_broken([
        check(s.integer("pp_size", 1) != 1 and s.get("disaggregation_mode") != "prefill", "spec-dspark-args-1", _DSPARK_BLAME, pp_flag=pp_flag),
        check(block is not None and block <= 0, "spec-dspark-args-2", _DSPARK_BLAME, block_flag=block_flag, block=block),
        check(block is not None and block > 0 and draft is not None and draft != block + 1, "spec-dspark-args-3", _DSPARK_BLAME, draft_flag=draft_flag, v0=(block or 0) + 1, block_flag=block_flag, block=block, draft=draft),
        check(block is None and draft is not None and draft < 2, "spec-dspark-args-4", _DSPARK_BLAME, draft_flag=draft_flag, block_flag=block_flag, draft=draft),
    ])
    return broken


@predicate("spec-algo-unknown")
def _spec_algo_unknown(s: Settings, rule: RuleSpec) -> Hit | None:
    raw = s.get("speculative_algorithm")
    known = rule.param("builtins", s.version) or []
    if raw is None or str(raw).upper() in known:
        return None
    return Hit(("speculative_algorithm",), {"algo": raw, "known": ", ".join(known)},
               "mtp" if str(raw).upper() == "MTP" else "unknown")


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


@predicate("spec-pp")
def _spec_pp(s: Settings, rule: RuleSpec) -> Hit | None:
    algo, pp = algorithm(s), s.integer("pp_size", 1)
    if algo in (None, "NONE") or pp <= 1:
        return None
    if s.at_least(0, 5, 23) and algo != "DFLASH":
        return None  # 0.5.23: check_pipeline_parallel_compat decides (rule pp-compat); DFLASH fails before it
    return Hit(("pp_size", "speculative_algorithm"), {"algo": algo, "pp": s.flag("pp_size"), "pp_value": pp})
