"""Predicates of the speculative-decoding checks the coverage inventory found (gspec group).

Here: 0.5.23's handle_speculative_decoding (draft window/sink, block verification, a decode
engine's radix cache), rejection sampling in _handle_eagle_family, the NGRAM external corpus,
_handle_dflash, the adaptive candidate steps, and 0.5.9's draft MoE runner assert. UNO and
DSPARK are in gspec_uno.py, LoRA in gspec_lora.py. Each predicate reports the first of
SGLang's own checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import EAGLE_FAMILY, algorithm, dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

# handle_speculative_decoding (0.5.23): the algorithms a decode engine's radix cache and block
# verification work with (names after SGLang's alias step, NEXTN -> EAGLE).
_RADIX_DECODE_ALGORITHMS = (None, "DSPARK", "EAGLE", "EAGLE3")
_BLOCK_VERIFY_ALGORITHMS = ("EAGLE", "EAGLE3", "DFLASH", "DSPARK")


def first_broken(checks: list[tuple[bool, str]]) -> str | None:
    """The text of the first check that is broken, in the order SGLang makes them."""
    return next((text for broken, text in checks if broken), None)


def first_broken_fix(checks: list[tuple[bool, str, str]]) -> tuple[str, str] | None:
    """(text, fix) of the first broken check (broken?, text, fix), in the order SGLang makes them."""
    return next(((text, fix) for broken, text, fix in checks if broken), None)


@predicate("spec-decoding-args")
def _spec_decoding_args(s: Settings, rule: RuleSpec) -> Hit | None:
    algo = algorithm(s)
    window, sink = s.opt_int("speculative_draft_window_size"), s.opt_int("speculative_draft_sink_size")
    radix, algo_flag, block = (s.flag("disaggregation_decode_enable_radix_cache"), s.flag("speculative_algorithm"),
                               s.flag("speculative_use_block_verification"))
    win_flag, sink_flag = s.flag("speculative_draft_window_size"), s.flag("speculative_draft_sink_size")
    broken = first_broken_fix([
        (s.get("disaggregation_mode") == "decode" and bool(s.get("disaggregation_decode_enable_radix_cache"))
         and algo not in _RADIX_DECODE_ALGORITHMS,
         f"{radix} is incompatible with speculative decoding ({algo_flag} {algo})",
         f"drop {radix}, or use {algo_flag} {', '.join(sorted(a for a in _RADIX_DECODE_ALGORITHMS if a))}"),
        (bool(s.get("speculative_use_block_verification")) and algo not in _BLOCK_VERIFY_ALGORITHMS,
         f"{block} only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK (got {algo})", f"drop {block}"),
        (window is not None and window <= 0, f"{win_flag} must be positive, got {window}",
         f"set {win_flag} to 1 or more"),
        (sink is not None and sink < 0, f"{sink_flag} must be non-negative, got {sink}", f"set {sink_flag} to 0 or more"),
        (sink is not None and window is None, f"{sink_flag} requires {win_flag}", f"add {win_flag}, or drop {sink_flag}"),
    ])
    if broken is None:
        return None
    return Hit(("speculative_use_block_verification", "speculative_draft_sink_size", "speculative_draft_window_size",
                "disaggregation_decode_enable_radix_cache"), {"detail": broken[0], "fix": broken[1]})


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
    detail = first_broken([
        (algo not in ("EAGLE", "EAGLE3"),
         f"{name} is only supported for EAGLE / EAGLE3 / NEXTN, not {s.flag('speculative_algorithm')} {algo} "
         "(NotImplementedError)"),
        (isinstance(topk, int) and topk != 1, f"{name} requires {s.flag('speculative_eagle_topk')}=1 (got {topk})"),
        (s.get("speculative_accept_threshold_single", 1.0) != 1.0 or s.get("speculative_accept_threshold_acc", 1.0) != 1.0,
         f"{name} is incompatible with {s.flag('speculative_accept_threshold_single')} / "
         f"{s.flag('speculative_accept_threshold_acc')}; rejection sampling ignores the accept thresholds"),
    ])
    if detail is None:
        return None
    return Hit(("speculative_use_rejection_sampling", "speculative_use_block_verification", "speculative_eagle_topk",
                "speculative_accept_threshold_single", "speculative_accept_threshold_acc"), {"detail": detail})


@predicate("spec-ngram-corpus")
def _spec_ngram_corpus(s: Settings, rule: RuleSpec) -> Hit | None:
    if algorithm(s) != "NGRAM" or s.get("speculative_ngram_external_corpus_path") is None:
        return None
    budget = s.integer("speculative_ngram_external_sam_budget", 0)
    max_tokens = s.integer("speculative_ngram_external_corpus_max_tokens", 10000000)
    draft = s.integer("speculative_num_draft_tokens", 12)  # SGLang's NGRAM default is 12
    path = s.flag("speculative_ngram_external_corpus_path")
    detail = first_broken([
        (budget <= 0, f"{s.flag('speculative_ngram_external_sam_budget')} must be positive when {path} is set "
                      f"(got {budget}; its default is 0)"),
        (max_tokens <= 0, f"{s.flag('speculative_ngram_external_corpus_max_tokens')} must be positive when "
                          f"{path} is set (got {max_tokens})"),
        (budget > draft - 1, f"{s.flag('speculative_ngram_external_sam_budget')} must be at most "
                             f"{s.flag('speculative_num_draft_tokens')} - 1 ({draft - 1}); got {budget}"),
    ])
    if detail is None:
        return None
    return Hit(("speculative_ngram_external_sam_budget", "speculative_ngram_external_corpus_max_tokens",
                "speculative_ngram_external_corpus_path"), {"detail": detail})


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
    broken = first_broken_fix([
        (dp_on and not s.get("enable_dp_lm_head"), f"DFLASH with dp attention requires {s.flag('enable_dp_lm_head')}",
         f"add {s.flag('enable_dp_lm_head')}"),
        (dp_on and s.integer("attn_cp_size", 1) != 1,
         f"DFLASH with dp attention does not support context parallel ({cp_flag} {s.integer('attn_cp_size', 1)})",
         f"set {cp_flag} 1"),
        (block is not None and block <= 0, f"DFLASH requires {block_flag} to be positive, got {block}",
         f"set {block_flag} to 1 or more"),
        (block is not None and block > 0 and draft is not None and draft != block,
         f"Both {draft_flag} and {block_flag} are set but they differ ({draft} and {block}). For DFLASH they must match",
         f"set {draft_flag} {block}, or drop one of the two"),
        (window is not None and tokens is not None and window < tokens,
         f"{win_flag} must be >= the DFLASH block size ({block_flag if block is not None else draft_flag}); "
         f"got {window} and {tokens}", f"set {win_flag} {tokens} or more"),
    ])
    if broken is None:
        return None
    return Hit(("speculative_dflash_block_size", "speculative_num_draft_tokens", "speculative_draft_window_size",
                "enable_dp_lm_head", "attn_cp_size"), {"detail": broken[0], "fix": broken[1]})


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
