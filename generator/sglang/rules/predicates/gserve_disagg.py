"""Predicates of the PD- and encoder-disaggregation rules (group gserve).

0.5.9's ServerArgs._handle_pd_disaggregation / _handle_encoder_disaggregation and 0.5.23's
arg_groups/pd_disaggregation_hook.py; each reports the first check the settings break, in
SGLang's order and words.
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.predicates.gserve import first_broken, fix_hit, hit_of
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


def _backend(s: Settings) -> str:
    """The transfer backend after handle_pd_disaggregation's mooncake_tcp rewrite."""
    value = s.get("disaggregation_transfer_backend", "mooncake")
    return "mooncake" if value == "mooncake_tcp" else str(value)


@predicate("encoder-disagg")
def _encoder_disagg(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("encoder_only"):
        return None
    enc, lang = bool(s.get("encoder_only", False)), bool(s.get("language_only", False))
    f = s.flag
    urls = s.get("encoder_urls") or []
    return hit_of(first_broken([
        (bool(s.get("enable_prefix_mm_cache", False)) and not enc,
         f"{f('enable_prefix_mm_cache')} requires {f('encoder_only')} to be enabled", ("enable_prefix_mm_cache",)),
        (enc and lang, f"cannot set {f('encoder_only')} and {f('language_only')} together",
         ("encoder_only", "language_only")),
        (enc and s.get("disaggregation_mode", "null") != "null",
         f"cannot set {f('encoder_only')} and {f('disaggregation_mode')} prefill/decode together",
         ("encoder_only", "disaggregation_mode")),
        # 0.5.23 only logs that encoders are expected to register dynamically.
        (not s.at_least(0, 5, 23) and lang and len(urls) == 0,
         f"{f('language_only')} requires at least one encoder url set via {f('encoder_urls')}", ("language_only",)),
    ]))


@predicate("pd-decode-tp-dp")
def _pd_decode_tp_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.get("disaggregation_mode", "null") != "decode":
        return None
    return hit_of(first_broken([
        (s.get(name) is not None, f"cannot set {s.flag(name)} for the decode engine", (name,))
        for name in ("disaggregation_decode_tp", "disaggregation_decode_dp") if s.has(name)
    ]))


def _role_switch_unsupported(s: Settings) -> list[str]:
    """The features --enable-pd-role-switch does not rebuild (handle_pd_disaggregation's list)."""
    ep, a2a = s.integer("ep_size", 1), s.get("moe_a2a_backend", "none")
    out = []
    if ep > 1:
        out.append(f"expert parallelism ({s.flag('ep_size')} {ep})")
    if a2a not in (None, "none"):
        out.append(f"MoE all-to-all ({s.flag('moe_a2a_backend')} {a2a})")
    if s.integer("pp_size", 1) > 1:
        out.append(f"pipeline parallelism ({s.flag('pp_size')} {s.integer('pp_size', 1)})")
    if dp_attention(s)[0] and s.get("enable_dp_attention_local_control_broadcast", False):
        out.append("DP attention local control broadcast")
    if s.integer("dcp_size", 1) > 1:
        out.append(f"decode context parallelism ({s.flag('dcp_size')} {s.integer('dcp_size', 1)})")
    if s.get("speculative_algorithm") is not None:
        out.append(f"speculative decoding ({s.flag('speculative_algorithm')} {s.get('speculative_algorithm')})")
    return out


@predicate("pd-disagg-args")
def _pd_disagg(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("disaggregation_decode_host_receive_threshold"):
        return None
    mode, backend = s.get("disaggregation_mode", "null"), _backend(s)
    threshold = s.get("disaggregation_decode_host_receive_threshold", 1.0)
    threshold = threshold if isinstance(threshold, (int, float)) else 1.0
    hisparse, switch = bool(s.get("enable_hisparse", False)), bool(s.get("enable_pd_role_switch", False))
    radix = bool(s.get("disaggregation_decode_enable_radix_cache", False))
    f, tname = s.flag, s.flag("disaggregation_decode_host_receive_threshold")
    unsupported = _role_switch_unsupported(s) if switch and mode in ("prefill", "decode") else []
    radix_flag, transfer = f("disaggregation_decode_enable_radix_cache"), f("disaggregation_transfer_backend")
    return fix_hit([
        (not 0 <= threshold <= 1, f"{tname} must be between 0 and 1", ("disaggregation_decode_host_receive_threshold",),
         f"set {tname} between 0 and 1"),
        (threshold < 1 and (hisparse or switch),
         f"decode host receive ({tname} {threshold} < 1) does not yet support {f('enable_hisparse')} or "
         f"{f('enable_pd_role_switch')}", ("disaggregation_decode_host_receive_threshold", "enable_hisparse", "enable_pd_role_switch"),
         f"set {tname} 1, or drop {f('enable_hisparse') if hisparse else f('enable_pd_role_switch')}"),
        (threshold < 1 and s.get("disaggregation_decode_retraction_backup") == "cpu_tensor",
         f"decode host KV buffering ({tname} {threshold} < 1) requires "
         f"{f('disaggregation_decode_retraction_backup')} host_pool, not cpu_tensor",
         ("disaggregation_decode_host_receive_threshold", "disaggregation_decode_retraction_backup"),
         f"set {f('disaggregation_decode_retraction_backup')} host_pool, or {tname} 1"),
        (mode == "decode" and radix and hisparse,
         f"{radix_flag} is incompatible with {f('enable_hisparse')}",
         ("disaggregation_decode_enable_radix_cache", "enable_hisparse"), f"drop {radix_flag} or {f('enable_hisparse')}"),
        (mode == "decode" and radix and backend == "fake",
         f"{radix_flag} is incompatible with {transfer} fake",
         ("disaggregation_decode_enable_radix_cache", "disaggregation_transfer_backend"),
         f"drop {radix_flag}, or use another {transfer}"),
        (mode == "prefill" and backend == "fake",
         f"a prefill server does not support 'fake' as {transfer} (AssertionError)",
         ("disaggregation_transfer_backend", "disaggregation_mode"), f"use another {transfer} than fake"),
        (bool(unsupported), f"{f('enable_pd_role_switch')} does not rebuild role-specific state for: "
                            f"{', '.join(unsupported)}", ("enable_pd_role_switch",),
         f"drop {f('enable_pd_role_switch')}, or the features listed"),
    ])


def _prefill_complete_unsupported(s: Settings) -> list[str]:
    """_validate_prefill_complete's list, in its order and words."""
    mode = s.get("disaggregation_mode", "null")
    out: list[str] = []
    hicache = bool(s.get("enable_hierarchical_cache", False))
    pairs = [
        (mode not in ("prefill", "decode"), "aggregated serving"),
        (_backend(s) != "mooncake", "transfer backends other than Mooncake"),
        (s.integer("pp_size", 1) != 1 or s.integer("attn_cp_size", 1) != 1
         or s.integer("dcp_size", 1) != 1, "pipeline or attention context parallelism"),
        # 0.5.23 reads dp_size x enable_dp_attention after handle_deprecated_dp_attention has
        # turned enable_dp_attention off (moved to attn_dp_size): any TP > 1 counts.
        (s.integer("tp_size", 1) != 1, "attention tensor parallelism greater than one"),
        (bool(s.get("enable_pdmux", False)) or s.get("decoupled_spec_role", "null") != "null",
         "PD multiplexing or decoupled speculation"),
        (bool(s.get("enable_pd_role_switch", False)), "runtime PD role switching"),
        (bool(s.get("encoder_only", False) or s.get("language_only", False)), "encoder disaggregation"),
        (bool(s.get("enable_hisparse", False)), "HiSparse"),
        (_threshold(s) < 1, "decode host KV buffering"),
        (mode == "decode" and (bool(s.get("disaggregation_decode_enable_radix_cache", False)) or hicache),
         "decode radix cache or decode HiCache"),
        (mode == "prefill" and hicache and (s.get("hicache_storage_backend") is not None
                                            or s.get("hicache_write_policy", "write_through") != "write_back"),
         "prefill HiCache other than L2 write_back"),
        (s.env_true("SGLANG_DISAGG_STAGING_BUFFER"), "staging buffers"),
        (s.env_true("SGLANG_RUST_SERVER"), "the Rust bootstrap registry"),
    ]
    out.extend(text for broken, text in pairs if broken)
    return out


def _threshold(s: Settings) -> float:
    value = s.get("disaggregation_decode_host_receive_threshold", 1.0)
    return float(value) if isinstance(value, (int, float)) else 1.0


@predicate("prefill-complete")
def _prefill_complete(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("disaggregation_decode_allocation_policy"):
        return None
    if s.get("disaggregation_decode_allocation_policy") != "prefill_complete":
        return None
    name = s.flag("disaggregation_decode_allocation_policy")
    unsupported = _prefill_complete_unsupported(s)
    attempts = s.integer("optimistic_prefill_attempts", 0)
    # handle_pd_disaggregation turns 0 attempts into 1 on a prefill server; a negative
    # count stays, and handle_other_validations refuses it later.
    return hit_of(first_broken([
        (bool(unsupported), f"{name} prefill_complete does not yet support {', '.join(unsupported)}",
         ("disaggregation_decode_allocation_policy",)),
        (s.get("disaggregation_mode") == "prefill" and attempts < 0,
         f"{name} prefill_complete requires optimistic prefill, but {s.flag('optimistic_prefill_attempts')} "
         f"is {attempts}", ("optimistic_prefill_attempts", "disaggregation_decode_allocation_policy")),
    ]))
