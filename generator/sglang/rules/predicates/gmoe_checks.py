"""Predicates of the smaller 0.5.23 validation hooks (gmoe group).

arg_groups/validation_hook.py (aux hidden-state capture, pipeline-parallel compatibility,
IB devices, prefill/decode interval, sampling mask, response store, sampling backend),
memory_hook.py (PLE offload), model_hook.py (--language-model-only), model_path_hook.py
(weight cache) and cuda_graph_hook.py. Each predicate reports the first of SGLang's
checks the settings break, in SGLang's order and words.
"""

from __future__ import annotations

import json
from typing import Any

from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

_AUX_METHODS = ("EAGLE3", "DFLASH", "DSPARK")
_GRAPH_BACKENDS = ("full", "breakable", "disabled")


def _first(checks: list[tuple[bool, str]]) -> str | None:
    return next((text for broken, text in checks if broken), None)


def _hit(blame: tuple[str, ...], detail: str | None) -> Hit | None:
    return None if detail is None else Hit(blame, {"detail": detail})


def _fix_hit(blame: tuple[str, ...], checks: list[tuple[bool, str, str]], **extra: str) -> Hit | None:
    """The first broken (broken?, SGLang's words, fix) check as a Hit with fields detail, fix and ``extra``."""
    broken = next(((text, fix) for bad, text, fix in checks if bad), None)
    return None if broken is None else Hit(blame, {"detail": broken[0], "fix": broken[1], **extra})


@predicate("aux-hidden-state-capture")
def _aux_hidden_state_capture(s: Settings, rule: RuleSpec) -> Hit | None:
    ids = s.get("return_aux_hidden_state_layer_ids")
    flag, ids_flag = s.flag("enable_return_aux_hidden_states"), s.flag("return_aux_hidden_state_layer_ids")
    if not s.get("enable_return_aux_hidden_states"):
        return _fix_hit(("return_aux_hidden_state_layer_ids",),
                        [(ids is not None, f"{ids_flag} requires {flag}", f"add {flag}, or drop {ids_flag}")])
    raw = s.get("speculative_algorithm")
    method = str(raw or "").upper()
    layers = [i for i in ids if isinstance(i, int)] if isinstance(ids, list) else None
    algo_flag, draft_flag = s.flag("speculative_algorithm"), s.flag("speculative_draft_model_path")
    return _fix_hit(("enable_return_aux_hidden_states", "speculative_algorithm"), [
        (method not in _AUX_METHODS,
         f"{flag} needs {algo_flag} EAGLE3, DFLASH or DSPARK to name the capture convention, got {raw!r}",
         f"set {algo_flag} EAGLE3, DFLASH or DSPARK, or drop {flag}"),
        (s.get("speculative_draft_model_path") is not None,
         f"{flag} captures without a draft; drop {draft_flag}", f"drop {draft_flag}, or drop {flag}"),
        (s.integer("pp_size", 1) != 1, f"{flag} only supports {s.flag('pp_size')} 1",
         f"set {s.flag('pp_size')} 1, or drop {flag}"),
        (method != "EAGLE3" and not layers, f"{flag} with {method} requires {ids_flag}",
         f"add {ids_flag} with the layer ids to capture"),
        (layers is not None and any(i < 0 for i in layers), f"{ids_flag} must be non-negative, got {layers}",
         f"give {ids_flag} layer ids of 0 or more"),
        (layers is not None and len(set(layers)) != len(layers), f"{ids_flag} must not repeat a layer, got {layers}",
         f"name each layer once in {ids_flag}"),
    ])


def _pp_spec_checks(s: Settings, algo: str) -> list[tuple[bool, str, str]]:
    mode, prefill = s.get("disaggregation_mode", "null"), f"{s.flag('disaggregation_mode')} prefill"
    algo_flag, mode_flag = s.flag("speculative_algorithm"), s.flag("disaggregation_mode")
    if algo == "DSPARK":
        return [(mode != "prefill", f"pipeline-parallel DSPARK requires {prefill}",
                 f"run this as a {prefill} server, or drop {algo_flag}")]
    multi = s.flag("enable_multi_layer_eagle")
    checks = [(algo != "EAGLE" or bool(s.get("enable_multi_layer_eagle")),
               f"pipeline parallelism only supports EAGLE (non-multi-layer) speculative decoding, got {algo}"
               + (f" with {multi}" if s.get("enable_multi_layer_eagle") else ""),
               f"drop {multi}" if algo == "EAGLE" else f"set {algo_flag} EAGLE, or drop it")]
    if s.env_true("SGLANG_ENABLE_PP_SPEC"):
        return checks + [
            (mode != "null", f"SGLANG_ENABLE_PP_SPEC is not compatible with {mode_flag} {mode}",
             f"drop {mode_flag}, or unset SGLANG_ENABLE_PP_SPEC"),
            (bool(s.get("speculative_adaptive")),
             f"SGLANG_ENABLE_PP_SPEC is not compatible with {s.flag('speculative_adaptive')}",
             f"drop {s.flag('speculative_adaptive')}, or unset SGLANG_ENABLE_PP_SPEC"),
            (dp_attention(s)[0], f"SGLANG_ENABLE_PP_SPEC is not compatible with attention DP ({dp_attention(s)[2]})",
             f"drop {dp_attention(s)[2]}, or unset SGLANG_ENABLE_PP_SPEC")]
    return checks + [(mode != "prefill", f"PP + speculative decoding is only supported on prefill nodes ({prefill})",
                      f"run this as a {prefill} server"
                      + (", set SGLANG_ENABLE_PP_SPEC=1" if mode == "null" else "") + f", or drop {algo_flag}")]


@predicate("pp-compat")
def _pp_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.integer("pp_size", 1) <= 1:
        return None
    algo = algorithm(s)  # upper-cased, NEXTN -> EAGLE, None under aux-hidden-state capture
    # DFLASH is refused before, by its own handler (rule spec-pp)
    checks = _pp_spec_checks(s, algo) if algo not in (None, "DFLASH") else []
    checks.append((s.get("min_free_slots_delay") is not None,
                   f"{s.flag('min_free_slots_delay')} is not supported with pipeline parallelism",
                   f"drop {s.flag('min_free_slots_delay')}"))
    return _fix_hit(("pp_size", "speculative_algorithm", "min_free_slots_delay"), checks, pp=s.flag("pp_size"))


def _ib_device_problem(value: str) -> str | None:
    """What SGLang's validate_ib_devices refuses in the value itself (not on the host)."""
    text = value.strip()
    if not text:
        return "is empty"
    if text.endswith(".json"):
        return None  # a file on the host: read there
    if not text.startswith("{"):
        return None if any(d.strip() for d in text.split(",")) else "names no device"
    try:
        mapping = json.loads(text)
    except ValueError:
        return "is not a valid JSON mapping"
    if not isinstance(mapping, dict) or not mapping:
        return "maps no GPU to devices"
    for key, devices in mapping.items():
        if not isinstance(devices, str):
            return f"maps GPU {key} to a {type(devices).__name__}, not a comma-separated string"
        if not any(d.strip() for d in devices.split(",")):
            return f"names no device for GPU {key}"
    return None


@predicate("ib-devices-value")
def _ib_devices_value(s: Settings, rule: RuleSpec) -> Hit | None:
    disagg = (s.get("disaggregation_transfer_backend") == "mooncake"
              and s.get("disaggregation_mode", "null") in ("prefill", "decode")) \
        or s.get("encoder_transfer_backend") == "mooncake"
    elastic = s.get("elastic_ep_backend") == "mooncake"
    for name, reached in (("disaggregation_ib_device", disagg), ("mooncake_ib_device", elastic)):
        value = s.get(name)
        problem = _ib_device_problem(value) if reached and isinstance(value, str) else None
        if problem is not None:
            return Hit((name,), {"detail": f"{s.flag(name)} {problem}"})
    return None


@predicate("prefill-decode-interval")
def _prefill_decode_interval(s: Settings, rule: RuleSpec) -> Hit | None:
    for name in ("prefill_decode_interval", "prefill_decode_interval_min_bs"):
        value = s.get(name)
        if isinstance(value, int) and value < 0:
            return Hit((name,), {"flag": s.flag(name), "value": value})
    return None


@predicate("sampling-backend-xpu")
def _sampling_backend_xpu(s: Settings, rule: RuleSpec) -> Hit | None:
    device = s.get("device")
    if s.get("sampling_backend") != "intel_xpu" or device == "xpu":
        return None
    return Hit(("sampling_backend", "device"),
               {"backend": s.flag("sampling_backend"), "device": s.flag("device"),
                "got": device if device is not None else "auto-detected (CUDA on gen's hosts)"})


@predicate("ple-offload")
def _ple_offload(s: Settings, rule: RuleSpec) -> Hit | None:
    embedding = s.get("ple_offload_embedding") if s.is_set("ple_offload_embedding") else None
    if embedding is None:
        return None  # both checks need the flag written (True, or False by --no-...)
    gb, group = s.integer("cpu_offload_gb", 0), s.integer("offload_group_size", -1)
    e = s.flag("ple_offload_embedding")
    detail = _first([
        (embedding is True and (gb > 0 or group > 0),
         f"{e} cannot be combined with {s.flag('cpu_offload_gb')} or {s.flag('offload_group_size')}"),
        (s.get("ple_offload_backend") == "file" and embedding is False,
         f"{s.flag('ple_offload_backend')} file requires {e} (written as --no-{e[2:]})"),
    ])
    return _hit(("ple_offload_embedding", "ple_offload_backend", "cpu_offload_gb", "offload_group_size"), detail)


_LMO_CONFLICTS = ("encoder_only", "language_only", "enable_prefix_mm_cache", "enable_broadcast_mm_inputs_process",
                  "mm_enable_dp_encoder")


@predicate("language-model-only-combo")
def _language_model_only(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("language_model_only"):
        return None
    for name in _LMO_CONFLICTS:
        if s.has(name) and s.get(name):
            return Hit(("language_model_only", name), {"lmo": s.flag("language_model_only"), "other": s.flag(name)})
    return None


def _graph_config(s: Settings) -> dict[str, Any]:
    data = s.get("cuda_graph_config")  # parse_cuda_graph_config_arg's dict (argparse refuses the rest)
    return data if isinstance(data, dict) else {}


def _graph_problems(s: Settings) -> list[tuple[bool, str]]:
    config, c = _graph_config(s), s.flag("cuda_graph_config")
    checks: list[tuple[bool, str]] = []
    for phase in ("decode", "prefill"):
        section = config.get(phase)
        backend = section.get("backend") if isinstance(section, dict) else None
        checks.append((backend is not None and backend not in _GRAPH_BACKENDS,
                       f"{c}[{phase}].backend={backend!r} is not one of {', '.join(_GRAPH_BACKENDS)}"))
    prefill = config.get("prefill")
    size = s.number("cuda_graph_prefill_max_context")  # human_readable_int: "4k" is 4000
    if isinstance(prefill, dict) and "max_context_size" in prefill:
        size = prefill["max_context_size"]
    checks.append((isinstance(size, (int, float)) and not isinstance(size, bool) and size <= 0,
                   f"{s.flag('cuda_graph_prefill_max_context')} must be a positive integer, got {size}"))
    return checks


@predicate("cuda-graph-config-values")
def _cuda_graph_config_values(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.get("cuda_graph_config") is None and s.get("cuda_graph_prefill_max_context") is None:
        return None
    return _hit(("cuda_graph_config", "cuda_graph_prefill_max_context"), _first(_graph_problems(s)))
