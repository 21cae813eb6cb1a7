"""Predicates of attention backends: linear attention / ReplaySSM, multi-item scoring, deterministic inference, TRTLLM and CuteDSL MLA, deprecated backend names.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from generator.sglang.rules.registry import Hit, check, first_broken, item, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


# 0.5.23's handle_deprecated_args renames these attention backends before any check.
_ALIASES: dict[str | None, str] = {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"}


def backends(s: Settings) -> tuple[str | None, str | None, str | None]:
    """(attention, decode, prefill) backends as written, after 0.5.23's alias renames."""
    base = s.get("attention_backend")
    decode = s.get("decode_attention_backend") if s.has("decode_attention_backend") else None
    prefill = s.get("prefill_attention_backend") if s.has("prefill_attention_backend") else None
    if s.at_least(0, 5, 23):
        base, decode = _ALIASES.get(base, base), _ALIASES.get(decode, decode)
        # A renamed prefill tokenspeed_mla becomes trtllm_mla (cutedsl_mla is decode-only).
        prefill = "trtllm_mla" if prefill == "tokenspeed_mla" else _ALIASES.get(prefill, prefill)
    return base, decode, prefill


@predicate("linear-replayssm")
def _linear_replayssm(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("enable_linear_replayssm"):
        return None
    explicit = s.get("linear_attn_decode_backend")
    decode = explicit or s.get("linear_attn_backend", "triton")
    if decode == "flashkda" and explicit != "flashkda":
        decode = "triton"  # inherited from the base backend: SGLang falls back to triton
    replay, spec = bool(s.get("enable_linear_replayssm", False)), bool(s.get("enable_linear_replayssm_spec", False))
    mode = s.get("disaggregation_mode", "null")
    # A decode server runs without the radix cache unless it enables its own, and without
    # the radix cache there is no extra buffer (mamba_extra_buffer_of).
    radix = not s.get("disable_radix_cache", False) and (
        mode != "decode" or bool(s.get("disaggregation_decode_enable_radix_cache", False)))
    extra = radix and s.get("mamba_radix_cache_strategy") in ("extra_buffer", "extra_buffer_lazy")
    length = s.get("linear_replayssm_cache_len", 16)
    topk = s.get("speculative_eagle_topk")
    return first_broken([
        check(explicit == "flashkda", "flashkda-decode", ("linear_attn_decode_backend",)),
        check(replay and decode not in ("triton", "helion"), "replayssm-decode-backend", ("enable_linear_replayssm", "linear_attn_decode_backend", "linear_attn_backend"), decode=decode),
        check(replay and extra, "replayssm-extra-buffer", ("enable_linear_replayssm", "mamba_radix_cache_strategy")),
        check(replay and mode != "null", "replayssm-with-pd", ("enable_linear_replayssm", "disaggregation_mode"), mode=mode),
        check(replay and isinstance(length, int) and length < 1, "cache-len-below-one", ("linear_replayssm_cache_len",), length=length),
        check(spec and topk not in (None, 1), "spec-topk-not-one", ("enable_linear_replayssm_spec", "speculative_eagle_topk"), topk=topk),
        check(spec and decode not in ("triton", "flashinfer"), "spec-decode-backend", ("enable_linear_replayssm_spec", "linear_attn_decode_backend", "linear_attn_backend"), decode=decode),
        check(spec and mode == "prefill", "spec-on-pd-prefill", ("enable_linear_replayssm_spec", "disaggregation_mode")),
        check(spec and replay, "spec-with-replayssm", ("enable_linear_replayssm_spec", "enable_linear_replayssm")),
    ])


@predicate("mis-flashinfer")
def _mis_flashinfer(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("enable_mis") or not s.get("enable_mis", False):
        return None
    base, decode, prefill = backends(s)
    phases = {"prefill": prefill or base, "decode": decode or base}
    wrong = {k: v for k, v in phases.items() if v is not None and v != "flashinfer"}
    if not wrong:
        return None  # flashinfer, or left to SGLang's choice by GPU and model
    return Hit(("enable_mis", "attention_backend", "prefill_attention_backend", "decode_attention_backend"), {
        "got": [item("phase", phase=k, backend=v) for k, v in sorted(wrong.items())]})


@predicate("deterministic-attn-backend")
def _deterministic_backend(s: Settings, rule: RuleSpec) -> Hit | None:
    on = bool(s.get("enable_deterministic_inference", False)) or s.get("rl_on_policy_target") is not None
    base = backends(s)[0]
    allowed = rule.param("backends", s.version) or []
    if not on or base is None or base in allowed:
        return None  # unset: SGLang picks fa3, flashinfer or triton by GPU
    return Hit(("attention_backend", "enable_deterministic_inference", "rl_on_policy_target"), {
        "backend": base, "allowed": list(allowed)})


@predicate("trtllm-mla-kv-dtype")
def _trtllm_mla_kv(s: Settings, rule: RuleSpec) -> Hit | None:
    base, decode, _prefill = backends(s)
    if "trtllm_mla" not in (base, decode):
        return None
    allowed = rule.param("kv_dtypes", s.version) or []
    kv = s.get("kv_cache_dtype", "auto")
    if s.at_least(0, 5, 23) and "tokenspeed_mla" in (s.get("attention_backend"), s.get("decode_attention_backend")):
        kv = "fp8_e4m3"  # the alias implied an FP8 KV cache; SGLang sets it
    if kv in allowed:
        return None
    return Hit(("kv_cache_dtype", "attention_backend", "decode_attention_backend"), {"kv": kv, "allowed": list(allowed)})


@predicate("cutedsl-mla")
def _cutedsl_mla(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.at_least(0, 5, 23):
        return None
    base, decode, prefill = backends(s)
    if "cutedsl_mla" not in (base, decode, prefill):
        return None
    kv = s.get("kv_cache_dtype", "auto")
    if "tokenspeed_mla" in (s.get("attention_backend"), s.get("decode_attention_backend")):
        kv = "fp8_e4m3"  # the alias implied an FP8 KV cache; SGLang sets it
    return first_broken([
        check(prefill == "cutedsl_mla", "prefill-backend", ("prefill_attention_backend",)),
        check(kv not in ("fp8_e4m3", "bf16", "bfloat16", "auto"), "kv-cache-dtype", ("kv_cache_dtype", "attention_backend", "decode_attention_backend"), kv=kv),
    ])


@predicate("deprecated-choice-alias")
def _deprecated_alias(s: Settings, rule: RuleSpec) -> Hit | None:
    """Choice values SGLang's handle_deprecated_args renames with a warning (no F code: they
    are still in the pin's argparse choices)."""
    aliases = rule.param("aliases", s.version) or {}
    found: list[tuple[str, str, str]] = []
    for dest, table in sorted(aliases.items()):
        value = s.get(dest) if s.has(dest) else None
        if isinstance(value, str) and value in table:
            found.append((dest, value, table[value]))
    if not found:
        return None
    renamed = [item("renamed", option=s.flag(d), old=old, new=new) for d, old, new in found]
    return Hit(tuple(d for d, _o, _n in found), {"renamed": renamed, "first": s.flag(found[0][0]), "new": found[0][2]})


@predicate("mis-backend-auto")
def _mis_backend_auto(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("enable_mis") or not s.get("enable_mis", False):
        return None
    base, decode, prefill = backends(s)
    if (prefill or base) is not None and (decode or base) is not None:
        return None  # both phases written: the error rule decides
    return Hit(("enable_mis",))
