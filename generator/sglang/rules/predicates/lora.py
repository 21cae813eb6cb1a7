"""Predicates of LoRA: check_lora_server_args, the LoRA MoE runner, LoRA with drafting (0.5.23's lora_hook.py).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

import json
from typing import Any

from generator.sglang.argtypes import Unparsed
from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.predicates.speculative import first_text as _first, first_text_fix
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


# 0.5.23's check_lora_speculative_compatibility: algorithms with a uniform verify width.
_LORA_SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "DFLASH", "DSPARK")


def _paths(s: Settings) -> list[Any]:
    """The adapters of --lora-paths as LoRAPathAction stores them (text, or a JSON object);
    the words themselves when the action refuses them."""
    value = s.get("lora_paths")
    if value is None:
        return []
    if isinstance(value, Unparsed):
        return list(value.words)
    return list(value) if isinstance(value, list) else [value]


def _json_path_problem(paths: list[Any]) -> str | None:
    """LoRAPathAction: a word that looks like JSON must be an object with both keys."""
    for word in paths:
        text = word.strip() if isinstance(word, str) else ""
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            obj: Any = json.loads(text)
        except ValueError:
            return f"--lora-paths {text!r} looks like JSON but does not parse (json.loads raises while parsing argv)"
        if not ("lora_path" in obj and "lora_name" in obj):
            return (f"{text!r} looks like a JSON str, but it does not contain 'lora_name' and "
                    "'lora_path' keys (assert in LoRAPathAction)")
    return None


def lora_enabled(s: Settings) -> bool:
    """--enable-lora, or --lora-paths with at least one adapter (SGLang turns LoRA on then)."""
    return bool(s.get("enable_lora")) or bool(_paths(s))


def v2_mode_problem(s: Settings, option: str) -> str | None:
    """_check_v2_lora_modes (0.5.23): what the triton_v2 LoRA kernels do not support yet."""
    attn_dp = dp_attention(s)
    modes = [
        (attn_dp[0] and attn_dp[1] > 1, "DP-attention with --attn-dp-size > 1"),
        (bool(s.get("enable_pdmux")), "PD-multiplexing"),
        (bool(s.get("enable_two_batch_overlap")), "two-batch overlap"),
        (s.env_true("SGLANG_EXPERIMENTAL_LORA_OPTI"), "SGLANG_EXPERIMENTAL_LORA_OPTI"),
    ]
    mode = _first(modes)
    return None if mode is None else f"{option} does not yet support {mode}"


def _spec_problem(s: Settings) -> tuple[str, str] | None:
    """LoRA with speculative decoding (0.5.9: NGRAM only; 0.5.23: check_lora_speculative_compatibility); (text, fix)."""
    algo, algo_flag = algorithm(s), s.flag("speculative_algorithm")
    if algo in ("NGRAM", None):
        return None
    if not s.at_least(0, 5, 23):
        return ("Currently LoRA is only compatible with NGRAM speculative decoding (ValueError)",
                f"use {algo_flag} NGRAM, or drop {algo_flag}")
    if algo not in _LORA_SPEC_ALGORITHMS:
        return ("LoRA is only compatible with NGRAM, EAGLE, NEXTN, EAGLE3, DFLASH, or DSPARK "
                f"speculative decoding, not {algo}", f"use {algo_flag} NGRAM, EAGLE, NEXTN, EAGLE3, DFLASH or DSPARK")
    ragged = s.env.get("SGLANG_RAGGED_VERIFY_MODE", "static")
    prefix = "LoRA with EAGLE/NEXTN/EAGLE3 speculative decoding "
    runner, spec_runner = s.flag("moe_runner_backend"), s.flag("speculative_moe_runner_backend")
    return first_text_fix([
        (algo == "DSPARK" and ragged != "static", prefix + f"does not support SGLANG_RAGGED_VERIFY_MODE={ragged!r}",
         "unset SGLANG_RAGGED_VERIFY_MODE (or set it to static)"),
        (bool(s.get("speculative_adaptive")), prefix + f"does not support {s.flag('speculative_adaptive')}",
         f"drop {s.flag('speculative_adaptive')}"),
        ("experimental_sgl_trtllm" in (s.get("moe_runner_backend"), s.get("speculative_moe_runner_backend")),
         prefix + "does not support the experimental_sgl_trtllm MoE runner",
         f"use another {runner} / {spec_runner} than experimental_sgl_trtllm"),
        (s.env_true("SGLANG_ENABLE_OVERLAP_PLAN_STREAM"), prefix + "does not support SGLANG_ENABLE_OVERLAP_PLAN_STREAM=1",
         "unset SGLANG_ENABLE_OVERLAP_PLAN_STREAM"),
    ])


def _overlap_problem(s: Settings, per_batch: int) -> str | None:
    """Overlap loading pins adapters in CPU memory: at most twice the batch's adapters."""
    loaded, limit = s.get("max_loaded_loras"), per_batch * 2
    if not bool(s.get("enable_lora_overlap_loading")) or (isinstance(loaded, int) and loaded <= limit):
        return None
    return (f"Enabling LoRA overlap loading requires pinning LoRA adapter weights in CPU memory, so "
            f"{s.flag('max_loaded_loras')} must be less than or equal to double "
            f"{s.flag('max_loras_per_batch')}: {limit}")


def _loaded_problem(s: Settings, per_batch: int, paths: list[Any]) -> tuple[str, str] | None:
    """--max-loaded-loras against the batch's adapters and the initial paths; (text, fix)."""
    loaded = s.get("max_loaded_loras")
    if not isinstance(loaded, int):
        return None
    loaded_name, batch_name = s.flag("max_loaded_loras"), s.flag("max_loras_per_batch")
    return first_text_fix([
        (loaded < per_batch, f"{loaded_name} {loaded} is less than {batch_name} {per_batch} (SGLang: "
                             "'max_loaded_loras should be greater than or equal to max_loras_per_batch')",
         f"raise {loaded_name} to {per_batch} or more, or lower {batch_name}"),
        (len(paths) > loaded, f"{len(paths)} adapters in {s.flag('lora_paths')} exceed {loaded_name} {loaded} "
                              "(SGLang: 'The number of LoRA paths should not exceed max_loaded_loras')",
         f"raise {loaded_name} to {len(paths)} or more, or list fewer {s.flag('lora_paths')}"),
    ])


def _enabled_problem(s: Settings, per_batch: int, paths: list[Any]) -> tuple[str, str] | None:
    """The checks check_lora_server_args makes once LoRA is on, in its order; (text, fix)."""
    backend = s.flag("lora_backend")
    if s.at_least(0, 5, 23) and s.get("lora_backend") == "triton_v2" \
            and not str(s.get("moe_runner_backend", "auto")).startswith("lora"):
        problem = v2_mode_problem(s, f"{backend} triton_v2")
        if problem:
            return problem, f"use another {backend} than triton_v2, or turn that feature off"
    modules = s.get("lora_target_modules") or []
    modules = modules if isinstance(modules, list) else [modules]
    threshold = s.get("lora_drain_wait_threshold", 0.0) if s.has("lora_drain_wait_threshold") else 0.0
    overlap, spec, loaded = _overlap_problem(s, per_batch), _spec_problem(s), _loaded_problem(s, per_batch, paths)
    rank, targets = s.flag("max_lora_rank"), s.flag("lora_target_modules")
    return first_text_fix([
        (overlap is not None, overlap or "", f"lower {s.flag('max_loaded_loras')} to {per_batch * 2} or less, or drop "
                                             f"{s.flag('enable_lora_overlap_loading')}"),
        (spec is not None, spec[0] if spec else "", spec[1] if spec else ""),
        ("all" in modules and len(set(modules)) != 1,
         "If 'all' is specified in --lora-target-modules, it should be the only module specified.",
         f"give {targets} all alone, or list the modules without all"),
        (not paths and not (s.get("max_lora_rank") and modules),
         "When no initial --lora-paths is provided, you need to specify both --max-lora-rank and "
         "--lora-target-modules for LoRA initialization.",
         f"add {s.flag('lora_paths')}, or both {rank} and {targets}"),
        (loaded is not None, loaded[0] if loaded else "", loaded[1] if loaded else ""),
        (isinstance(threshold, (int, float)) and threshold < 0.0,
         f"{s.flag('lora_drain_wait_threshold')} must be non-negative.",
         f"set {s.flag('lora_drain_wait_threshold')} to 0 or more"),
    ])


@predicate("lora-args")
def _lora_args(s: Settings, rule: RuleSpec) -> Hit | None:
    paths = _paths(s)
    per_batch = s.integer("max_loras_per_batch", 8)
    json_problem = _json_path_problem(paths)
    broken: tuple[str, str] | None = None
    if json_problem is not None:
        broken = (json_problem, f"write each {s.flag('lora_paths')} adapter as name=path or as a JSON object with "
                                "lora_name and lora_path")
    elif per_batch <= 0:
        broken = (f"{s.flag('max_loras_per_batch')} must be positive, got {per_batch}",
                  f"set {s.flag('max_loras_per_batch')} to 1 or more")
    elif lora_enabled(s):
        broken = _enabled_problem(s, per_batch, paths)
    if broken is None:
        return None
    return Hit(("lora_paths", "max_loras_per_batch", "max_loaded_loras", "enable_lora", "lora_target_modules",
                "speculative_algorithm"), {"detail": broken[0], "fix": broken[1]})


@predicate("lora-moe-runner")
def _lora_moe_runner(s: Settings, rule: RuleSpec) -> Hit | None:
    spec_backend = str(s.get("speculative_moe_runner_backend") or "")
    backend = str(s.get("moe_runner_backend", "auto"))
    option = f"{s.flag('moe_runner_backend')} {backend}"
    if algorithm(s) is not None and spec_backend.startswith("lora"):
        detail: str | None = (f"{s.flag('speculative_moe_runner_backend')} {spec_backend} is not supported: the "
                              "LoRA MoE runner serves adapter traffic on the target model")
        return Hit(("speculative_moe_runner_backend",), {"detail": detail})
    if not backend.startswith("lora"):
        return None
    quant = s.get("quantization")
    detail = _first([
        (not lora_enabled(s), f"{option} requires {s.flag('enable_lora')} (or {s.flag('lora_paths')})"),
        (s.get("lora_backend") != "triton_v2", f"{option} requires {s.flag('lora_backend')} triton_v2"),
        (v2_mode_problem(s, option) is not None, v2_mode_problem(s, option) or ""),
        (quant not in (None, "fp8", "modelopt_fp4"),
         f"{option} supports unquantized BF16, 128-block FP8 and ModelOpt NVFP4 MoE, got "
         f"{s.flag('quantization')} {quant}"),
        (quant == "modelopt_fp4" and backend != "lora_marlin",
         f"{option} cannot run ModelOpt NVFP4 MoE; use {s.flag('moe_runner_backend')} lora_marlin"),
        (s.get("moe_a2a_backend", "none") != "none",
         f"{option} requires Standard dispatch, got {s.flag('moe_a2a_backend')} {s.get('moe_a2a_backend')}"),
        (s.get("ep_join_mode") is not None, f"{option} does not yet support elastic EP"),
        (bool(s.get("enable_eplb")) or s.get("init_expert_location", "trivial") != "trivial"
         or s.integer("ep_num_redundant_experts", 0) > 0,
         f"{option} currently requires trivial expert placement without EPLB or redundant experts"),
    ])
    if detail is None:
        return None
    return Hit(("moe_runner_backend", "lora_backend", "enable_lora"), {"detail": detail})
