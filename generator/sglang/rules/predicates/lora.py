"""Predicates of LoRA: check_lora_server_args, the LoRA MoE runner, LoRA with drafting (0.5.23's lora_hook.py).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Any

from generator.sglang.argtypes import Unparsed
from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.registry import Hit, check, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec
from generator.load.json_text import loads as decode_json


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


_BLAME = ("lora_paths", "max_loras_per_batch", "max_loaded_loras", "enable_lora", "lora_target_modules",
          "speculative_algorithm")
_RUNNER_BLAME = ("moe_runner_backend", "lora_backend", "enable_lora")


def _json_path(paths: list[Any]) -> Hit | None:
    """LoRAPathAction: a word that looks like JSON must be an object with both keys."""
    for word in paths:
        text = word.strip() if isinstance(word, str) else ""
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            obj: Any = decode_json(text)
        except ValueError:
            return Hit(_BLAME, {"word": text}, "json-unparsed")
        if not ("lora_path" in obj and "lora_name" in obj):
            return Hit(_BLAME, {"word": text}, "json-keys")
    return None


def lora_enabled(s: Settings) -> bool:
    """--enable-lora, or --lora-paths with at least one adapter (SGLang turns LoRA on then)."""
    return bool(s.get("enable_lora")) or bool(_paths(s))


def v2_mode(s: Settings) -> str | None:
    """_check_v2_lora_modes (0.5.23): the check of the first feature the triton_v2 LoRA kernels do not support yet."""
    attn_dp = dp_attention(s)
    modes = [("v2-dp-attention", attn_dp[0] and attn_dp[1] > 1), ("v2-pdmux", bool(s.get("enable_pdmux"))),
             ("v2-tbo", bool(s.get("enable_two_batch_overlap"))),
             ("v2-lora-opti", s.env_true("SGLANG_EXPERIMENTAL_LORA_OPTI"))]
    return next((name for name, on in modes if on), None)


def _spec(s: Settings) -> Hit | None:
    """LoRA with speculative decoding (0.5.9: NGRAM only; 0.5.23: check_lora_speculative_compatibility)."""
    algo = algorithm(s)
    if algo in ("NGRAM", None):
        return None
    if not s.at_least(0, 5, 23):
        return Hit(_BLAME, {}, "spec-not-ngram")
    if algo not in _LORA_SPEC_ALGORITHMS:
        return Hit(_BLAME, {"algo": algo}, "spec-algorithm")
    ragged = s.env.get("SGLANG_RAGGED_VERIFY_MODE", "static")
    return first_broken([
        check(algo == "DSPARK" and ragged != "static", "spec-ragged", _BLAME, ragged=ragged),
        check(bool(s.get("speculative_adaptive")), "spec-adaptive", _BLAME),
        check("experimental_sgl_trtllm" in (s.get("moe_runner_backend"), s.get("speculative_moe_runner_backend")),
              "spec-sgl-trtllm", _BLAME),
        check(s.env_true("SGLANG_ENABLE_OVERLAP_PLAN_STREAM"), "spec-overlap-plan", _BLAME),
    ])


def _loaded(s: Settings, per_batch: int, paths: list[Any]) -> Hit | None:
    """--max-loaded-loras against the batch's adapters and the initial paths."""
    loaded = s.get("max_loaded_loras")
    if not isinstance(loaded, int):
        return None
    return first_broken([check(loaded < per_batch, "loaded-below-batch", _BLAME),
                         check(len(paths) > loaded, "paths-above-loaded", _BLAME, count=len(paths))],
                        loaded=loaded, per_batch=per_batch)


def _enabled(s: Settings, per_batch: int, paths: list[Any]) -> Hit | None:
    """The checks check_lora_server_args makes once LoRA is on, in its order."""
    mode = v2_mode(s) if s.at_least(0, 5, 23) and s.get("lora_backend") == "triton_v2" \
        and not str(s.get("moe_runner_backend", "auto")).startswith("lora") else None
    if mode is not None:
        return Hit(_BLAME, {}, mode)
    modules = s.get("lora_target_modules") or []
    modules = modules if isinstance(modules, list) else [modules]
    threshold = s.get("lora_drain_wait_threshold", 0.0) if s.has("lora_drain_wait_threshold") else 0.0
    loaded, limit = s.get("max_loaded_loras"), per_batch * 2
    overlap = bool(s.get("enable_lora_overlap_loading")) and not (isinstance(loaded, int) and loaded <= limit)
    return (first_broken([check(overlap, "overlap-loading", _BLAME, limit=limit)])
            or _spec(s)
            or first_broken([check("all" in modules and len(set(modules)) != 1, "all-modules", _BLAME),
                             check(not paths and not (s.get("max_lora_rank") and modules), "no-initial-paths", _BLAME)])
            or _loaded(s, per_batch, paths)
            or first_broken([check(isinstance(threshold, (int, float)) and threshold < 0.0, "drain-threshold", _BLAME)]))


@predicate("lora-args")
def _lora_args(s: Settings, rule: RuleSpec) -> Hit | None:
    paths = _paths(s)
    per_batch = s.integer("max_loras_per_batch", 8)
    found = _json_path(paths)
    if found is None and per_batch <= 0:
        found = Hit(_BLAME, {"per_batch": per_batch}, "per-batch")
    if found is None and lora_enabled(s):
        found = _enabled(s, per_batch, paths)
    return found


@predicate("lora-moe-runner")
def _lora_moe_runner(s: Settings, rule: RuleSpec) -> Hit | None:
    spec_backend = str(s.get("speculative_moe_runner_backend") or "")
    backend = str(s.get("moe_runner_backend", "auto"))
    if algorithm(s) is not None and spec_backend.startswith("lora"):
        return Hit(("speculative_moe_runner_backend",), {"spec_backend": spec_backend}, "draft-runner")
    if not backend.startswith("lora"):
        return None
    quant, mode = s.get("quantization"), v2_mode(s)
    return first_broken([
        check(not lora_enabled(s), "needs-lora", _RUNNER_BLAME),
        check(s.get("lora_backend") != "triton_v2", "needs-triton-v2", _RUNNER_BLAME),
        check(mode is not None, mode, _RUNNER_BLAME),
        check(quant not in (None, "fp8", "modelopt_fp4"), "quantization", _RUNNER_BLAME, quant=quant),
        check(quant == "modelopt_fp4" and backend != "lora_marlin", "nvfp4-needs-marlin", _RUNNER_BLAME),
        check(s.get("moe_a2a_backend", "none") != "none", "standard-dispatch", _RUNNER_BLAME),
        check(s.get("ep_join_mode") is not None, "elastic-ep", _RUNNER_BLAME),
        check(bool(s.get("enable_eplb")) or s.get("init_expert_location", "trivial") != "trivial"
              or s.integer("ep_num_redundant_experts", 0) > 0, "expert-placement", _RUNNER_BLAME),
    ], backend=backend)
