"""Predicates of SGLang's validate_buckets_rule and check_watermark_server_args (group gval).

Both are called from check_server_args. The bucket rules are read with Python's own
float()/int(), as SGLang reads them, so "1e3", "inf" or "nan" behave exactly as there.
The watermark settings come from --watermark-config: an inline JSON object is read here
(as SGLang's load_watermark_config does); a file path is read by SGLang on the host, and
the checks of its values are left to SGLang. No key value is ever printed.
"""

from __future__ import annotations

import json
from typing import Any

from generator.sglang.rules.predicates.common import algorithm
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

_BUCKET_FLAGS = (("prompt_tokens_buckets", "--prompt-tokens-buckets"),
                 ("generation_tokens_buckets", "--generation-tokens-buckets"))


def _tse(arg: str, rule: list[str]) -> tuple[str, str, str] | None:
    if len(rule) != 4:
        return (f"the tse rule takes 3 parameters, got {len(rule) - 1}",
                f"{arg} TSE rule requires exactly 4 parameters: ['tse', middle, base, count], got {len(rule)}",
                "write tse MIDDLE BASE COUNT")
    try:
        middle, base, count = float(rule[1]), float(rule[2]), int(rule[3])
    except ValueError:
        return ("the tse parameters are not numbers (middle, base: float; count: int)",
                f"{arg} TSE rule parameters must be: ['tse', <float:middle>, <float:base>, <int:count>]",
                "write tse MIDDLE BASE COUNT with a float middle and base and an integer count")
    if not base > 1:
        return f"tse base {base} is not larger than 1", f"{arg} TSE base must be larger than 1, got: {base}", \
            "use a base larger than 1"
    if not count > 0:
        return f"tse count {count} is not positive", f"{arg} TSE count must be positive, got: {count}", \
            "use a positive count"
    if not middle > 0:
        return f"tse middle {middle} is not positive", f"{arg} TSE middle must be positive, got: {middle}", \
            "use a positive middle"
    return None


def _custom(arg: str, rule: list[str]) -> tuple[str, str, str] | None:
    if len(rule) < 2:
        return ("the custom rule names no bucket", f"{arg} custom rule requires at least one bucket value: "
                "['custom', value1, ...]", "write custom VALUE [VALUE ...]")
    try:
        values = [float(x) for x in rule[1:]]
    except ValueError:
        return ("a custom bucket value is not a number", f"{arg} custom rule bucket values must be numeric",
                "write numbers after custom")
    if len(set(values)) != len(values):
        return ("the custom bucket values repeat", f"{arg} custom rule bucket values should not contain duplicates",
                "write each bucket value once")
    if not all(v >= 0 for v in values):
        return ("a custom bucket value is negative", f"{arg} custom rule bucket values should be non-negative",
                "use bucket values of 0 or more")
    return None


def _bucket_problem(arg: str, rule: list[str]) -> tuple[str, str, str] | None:
    """The first check of SGLang's validate_buckets_rule the list breaks: (detail, SGLang's words, fix)."""
    kind = rule[0]
    if kind == "tse":
        return _tse(arg, rule)
    if kind == "default":
        if len(rule) != 1:
            return (f"the default rule takes no parameters, got {len(rule) - 1}",
                    f"{arg} default rule should only have one parameter: ['default'], got {len(rule)}",
                    "write default alone")
        return None
    if kind == "custom":
        return _custom(arg, rule)
    return (f"'{kind}' is not a bucket rule (tse, default, custom)",
            f"Unsupported {arg} rule type: '{kind}'. Must be one of: 'tse', 'default', 'custom'",
            "start the list with tse, default or custom")


@predicate("buckets-rule")
def _buckets_rule(s: Settings, rule: RuleSpec) -> Hit | None:
    for name, arg in _BUCKET_FLAGS:  # SGLang validates prompt, then generation buckets
        value = s.get(name) if s.has(name) else None
        if not value:
            continue  # SGLang returns on an empty or missing list
        words = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        found = _bucket_problem(arg, words)
        if found is not None:
            detail, sglang, fix = found
            return Hit((name,), {"flag": s.flag(name), "value": " ".join(words), "detail": detail,
                                 "sglang": sglang, "fix": fix})
    return None


# SGLang's defaults of the fields --watermark-config fills (arg_groups/fields/exec_.py).
_WATERMARK_DEFAULTS: dict[str, Any] = {"key": None, "key_b": None, "context_window": 4, "mixing_probability": 0.5,
                                       "max_probability": 1.0, "default_enabled": False, "enforce_all": False}
_WATERMARK_SPEC = {None, "NGRAM", "EAGLE", "EAGLE3"}


def _key_problem(value: Any) -> str | None:
    """SGLang's parse_watermark_key, without the value: a hex string of 1 to 16 digits."""
    if value is None:
        return None
    if not isinstance(value, str):
        return "watermark key must be a hex string"
    digits = value[2:] if value.lower().startswith("0x") else value
    if not 1 <= len(digits) <= 16:
        return "watermark key must contain 1 to 16 hex digits"
    if any(c not in "0123456789abcdefABCDEF" for c in digits):
        return "watermark key must contain only hex digits"
    return None


def _inline_config(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The inline --watermark-config object with SGLang's defaults, or the error SGLang raises reading it."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        return None, "failed to read watermark config JSON"
    if not isinstance(raw, dict):
        return None, "watermark config must be a JSON object"
    if set(raw) - set(_WATERMARK_DEFAULTS):
        return None, "watermark config contains unknown fields"
    for name in ("key", "key_b"):
        problem = _key_problem(raw.get(name))
        if problem is not None:
            return None, problem
    window = raw.get("context_window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= 64):
        return None, "watermark config context_window must be an integer from 1 to 64"
    for name in ("mixing_probability", "max_probability"):
        value = raw.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return None, f"watermark config {name} must be a number"
    for name in ("default_enabled", "enforce_all"):
        if raw.get(name) is not None and not isinstance(raw[name], bool):
            return None, f"watermark config {name} must be a boolean"
    return {**_WATERMARK_DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}, None


def _config_problem(cfg: dict[str, Any]) -> str | None:
    """The first check of check_watermark_server_args on the config's values (SGLang's words)."""
    mixing, top = cfg["mixing_probability"], cfg["max_probability"]
    checks = [
        (cfg["key_b"] is not None and cfg["key"] is None, "watermark key_b requires a server key"),
        (not 0 < mixing < 1, "watermark mixing_probability must be strictly between 0 and 1"),
        (cfg["key_b"] is None and mixing != 0.5, "watermark mixing_probability requires key_b"),
        (not 0 < top <= 1, "watermark max_probability must be greater than 0 and at most 1"),
        ((cfg["default_enabled"] or cfg["enforce_all"]) and cfg["key"] is None,
         "watermark default_enabled and enforce_all require a server key"),
    ]
    return next((text for broken, text in checks if broken), None)


def _flag_problem(s: Settings) -> tuple[str, str] | None:
    """The first flag --enable-watermark cannot go with: (what, SGLang's words)."""
    algo = None if s.get("enable_return_aux_hidden_states", False) else algorithm(s)
    mode = s.get("disaggregation_mode", "null")
    checks = [
        (bool(s.get("enable_custom_logit_processor", False)), s.flag("enable_custom_logit_processor"),
         "--enable-watermark is incompatible with --enable-custom-logit-processor"),
        (s.get("dllm_algorithm") is not None, s.flag("dllm_algorithm"),
         "--enable-watermark is not supported with diffusion LLM"),
        (mode != "null", f"{s.flag('disaggregation_mode')} {mode}",
         "--enable-watermark is not supported with PD disaggregation"),
        (algo not in _WATERMARK_SPEC, f"{s.flag('speculative_algorithm')} {algo}",
         f"--enable-watermark supports speculative algorithms NGRAM, EAGLE, and EAGLE3, got {algo!r}"),
        (s.integer("pp_size", 1) > 1 and algo is not None, f"{s.flag('pp_size')} > 1 with speculative decoding",
         "--enable-watermark is not supported with pipeline-parallel speculative decoding"),
        (bool(s.get("speculative_use_rejection_sampling", False)), s.flag("speculative_use_rejection_sampling"),
         "--enable-watermark is incompatible with --speculative-use-rejection-sampling"),
    ]
    return next(((what, text) for broken, what, text in checks if broken), None)


@predicate("watermark-args")
def _watermark_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("enable_watermark"):
        return None
    enabled, config = bool(s.get("enable_watermark", False)), s.get("watermark_config")
    mark, conf = s.flag("enable_watermark"), s.flag("watermark_config")
    if config is not None and str(config).lstrip().startswith("{"):
        values, error = _inline_config(str(config))
        if error is None and values is not None and enabled:
            error = _config_problem(values)
        if error is not None:  # SGLang reads the config before it checks --enable-watermark
            return Hit(("watermark_config",), {"detail": f"{conf} (inline JSON)", "sglang": error,
                                               "fix": f"correct the {conf} object (fields: "
                                                      f"{', '.join(_WATERMARK_DEFAULTS)})"})
    if config is not None and not enabled:
        return Hit(("watermark_config",), {"detail": f"{conf} without {mark}",
                                           "sglang": "--watermark-config requires --enable-watermark",
                                           "fix": f"add {mark}, or remove {conf}"})
    found = _flag_problem(s) if enabled else None
    if found is None:
        return None
    what, sglang = found
    return Hit(("enable_watermark",), {"detail": f"{mark} with {what}", "sglang": sglang,
                                       "fix": f"remove {mark} or {what.split()[0]}"})


@predicate("watermark-key-in-argv")
def _watermark_key_in_argv(s: Settings, rule: RuleSpec) -> Hit | None:
    config = s.get("watermark_config") if s.has("watermark_config") else None
    if config is None or not str(config).lstrip().startswith("{"):
        return None  # a file path: the key stays on the host
    try:
        raw = json.loads(str(config))
    except json.JSONDecodeError:
        return None  # watermark-args reports it
    keys = [k for k in ("key", "key_b") if isinstance(raw, dict) and raw.get(k) is not None]
    if not keys:
        return None
    return Hit(("watermark_config",), {"conf": s.flag("watermark_config"), "which": " and ".join(keys)})
