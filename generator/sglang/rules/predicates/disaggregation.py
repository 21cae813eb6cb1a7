"""Predicates of PD and encoder disaggregation, its transfer devices, and the load-publish endpoint routers read.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Hit, Item, check, first_broken, item, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec
from generator.load.json_text import loads as decode_json


def _ib_device_problem(value: str) -> tuple[str, dict[str, Any]] | None:
    """What SGLang's validate_ib_devices refuses in the value itself (not on the host): the check and its fields."""
    text = value.strip()
    if not text:
        return "empty", {}
    if text.endswith(".json"):
        return None  # a file on the host: read there
    if not text.startswith("{"):
        return None if any(d.strip() for d in text.split(",")) else ("no-device", {})
    try:
        mapping = decode_json(text)
    except ValueError:
        return "json-invalid", {}
    if not isinstance(mapping, dict) or not mapping:
        return "json-maps-nothing", {}
    for key, devices in mapping.items():
        if not isinstance(devices, str):
            return "gpu-devices-not-text", {"gpu": key, "type": type(devices).__name__}
        if not any(d.strip() for d in devices.split(",")):
            return "gpu-without-device", {"gpu": key}
    return None


def ib_device_flags(s: Settings) -> tuple[tuple[str, bool], ...]:
    """The IB device settings and whether SGLang validates each: Mooncake PD or encoder
    transfer for --disaggregation-ib-device, Mooncake elastic EP for --mooncake-ib-device."""
    disagg = (s.get("disaggregation_transfer_backend") == "mooncake"
              and s.get("disaggregation_mode", "null") in ("prefill", "decode")) \
        or s.get("encoder_transfer_backend") == "mooncake"
    return (("disaggregation_ib_device", disagg), ("mooncake_ib_device", s.get("elastic_ep_backend") == "mooncake"))


@predicate("ib-devices-value")
def _ib_devices_value(s: Settings, rule: RuleSpec) -> Hit | None:
    for name, reached in ib_device_flags(s):
        value = s.get(name)
        problem = _ib_device_problem(value) if reached and isinstance(value, str) else None
        if problem is not None:
            return Hit((name,), {"option": s.flag(name), **problem[1]}, problem[0])
    return None


@predicate("ib-devices-0509")
def _ib_devices_0509(s: Settings, rule: RuleSpec) -> Hit | None:
    """0.5.9's _validate_ib_devices: the list names a device, each once (0.5.23 deduplicates)."""
    for name, reached in ib_device_flags(s):
        value = s.text(name)
        if not reached or value is None:
            continue
        devices = [d.strip() for d in value.split(",") if d.strip()]
        hit = first_broken([check(not devices, "none", (name,)),
                            check(len(devices) != len(set(devices)), "duplicate", (name,))],
                           ib_flag=s.flag(name), written=value)
        if hit is not None:
            return hit
    return None


_WILDCARDS = ("*", "0.0.0.0", "::")  # kv_events._BIND_WILDCARD_HOSTS


_FIELDS_STR = ("publisher", "endpoint", "topic")  # KVEventsConfig's str fields


_FIELDS_INT = ("buffer_steps", "hwm", "max_queue_size")


def _host_port(endpoint: Any) -> tuple[str, int] | None:
    """(host, port) of a tcp:// endpoint with a legal port, as NetworkAddress.parse reads it."""
    if not isinstance(endpoint, str) or not endpoint.startswith("tcp://"):
        return None
    addr = endpoint[len("tcp://"):]
    if addr.startswith("["):
        host, _, rest = addr[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = addr.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        return None
    return (host, port) if host and 0 < port <= 65535 else None


def _port(endpoint: Any) -> int | None:
    found = _host_port(endpoint)
    return found[1] if found else None


def _bindable(endpoint: Any) -> tuple[str, int] | None:
    found = _host_port(endpoint)
    return found if found and found[0] in _WILDCARDS else None


def _overlaps(a: int, b: int, width: int) -> bool:
    return a < b + width and b < a + width


Problem = tuple[str, dict[str, Any]]  # a check of load-publish-endpoint and its fields


def _range_problem(mode: str, kv: Any, replay: Any, dp: int) -> Problem | None:
    """resolve_load_pub_range's reason, or None when the range resolves."""
    if mode.lower() == "auto":
        found = _bindable(kv)
        if found is None:
            return "auto-endpoint-not-bindable", {"kv": kv}
        base = found[1] + dp
        replay_base = _port(replay)
        if replay_base is not None and _overlaps(base, replay_base, dp):
            base = replay_base + dp
    else:
        if _port(kv) is None:
            return "kv-endpoint-not-routable", {"mode": mode, "kv": kv}
        found = _bindable(mode)
        if found is None:
            return "not-bindable", {"mode": mode}
        base = found[1]
        for port in (_port(kv), _port(replay)):
            if port is not None and _overlaps(base, port, dp):
                return "range-overlaps", {"base": base, "end": base + dp, "port": port, "port_end": port + dp}
    if base + dp - 1 > 65535:
        return "range-past-last-port", {"base": base}
    return None


def _fields_ok(config: dict[str, Any]) -> bool:
    """Whether pydantic would validate KVEventsConfig's typed fields (extra keys are ignored)."""
    if any(k in config and not isinstance(config[k], str) for k in _FIELDS_STR):
        return False
    if config.get("replay_endpoint") is not None and not isinstance(config["replay_endpoint"], str):
        return False
    if "format" in config and config["format"] not in ("default", "dynamo"):
        return False
    return all(isinstance(config[k], int) or (isinstance(config[k], str) and config[k].strip().lstrip("-").isdigit())
               for k in _FIELDS_INT if k in config)


def _config_problem(raw: Any) -> tuple[Problem | None, dict[str, Any]]:
    if not raw:
        return ("config-missing", {}), {}
    try:
        config = decode_json(raw) if isinstance(raw, str) else None
    except ValueError:
        config = None
    if not isinstance(config, dict) or not _fields_ok(config):
        return ("config-unparsable", {}), {}
    if config.get("publisher", "null") == "null" or not config.get("endpoint", "tcp://*:5557"):
        return ("publisher-inactive", {}), {}
    return None, config


@predicate("load-publish-endpoint")
def _load_publish_endpoint(s: Settings, rule: RuleSpec) -> Hit | None:
    mode = str(s.get("load_publish_endpoint") or "").strip()
    if not mode or mode.lower() == "off":
        return None
    problem, config = _config_problem(s.get("kv_events_config"))
    if problem is None:
        dp_on, attn_dp, _ = dp_attention(s)
        # num_dp_ranks: replicas x attention-DP groups (--dp-size N --enable-dp-attention is
        # rewritten to --attn-dp-size N, so one of the two is 1)
        dp = attn_dp if dp_on else s.integer("dp_size", 1)
        problem = _range_problem(mode, config.get("endpoint", "tcp://*:5557"), config.get("replay_endpoint"), dp)
    if problem is None:
        return None
    return Hit(("load_publish_endpoint", "kv_events_config"), problem[1], problem[0])


def _backend(s: Settings) -> str:
    """The transfer backend after handle_pd_disaggregation's mooncake_tcp rewrite."""
    value = s.get("disaggregation_transfer_backend", "mooncake")
    return "mooncake" if value == "mooncake_tcp" else str(value)


@predicate("encoder-disagg")
def _encoder_disagg(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("encoder_only"):
        return None
    enc, lang = bool(s.get("encoder_only", False)), bool(s.get("language_only", False))
    urls = s.get("encoder_urls") or []
    return first_broken([
        check(bool(s.get("enable_prefix_mm_cache", False)) and not enc, "prefix-mm-cache-without-encoder-only", ("enable_prefix_mm_cache",)),
        check(enc and lang, "encoder-only-with-language-only", ("encoder_only", "language_only")),
        check(enc and s.get("disaggregation_mode", "null") != "null", "encoder-only-with-pd", ("encoder_only", "disaggregation_mode")),
        # 0.5.23 only logs that encoders are expected to register dynamically.
        check(not s.at_least(0, 5, 23) and lang and len(urls) == 0, "language-only-without-encoder-urls", ("language_only",)),
    ])


@predicate("pd-decode-tp-dp")
def _pd_decode_tp_dp(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.get("disaggregation_mode", "null") != "decode":
        return None
    return first_broken([
        check(s.get(name) is not None, "set-on-decode", (name,), option=s.flag(name))
        for name in ("disaggregation_decode_tp", "disaggregation_decode_dp") if s.has(name)
    ])


def _role_switch_unsupported(s: Settings) -> list[Item]:
    """The features --enable-pd-role-switch does not rebuild (handle_pd_disaggregation's list)."""
    ep, a2a = s.integer("ep_size", 1), s.get("moe_a2a_backend", "none")
    out = []
    if ep > 1:
        out.append(item("expert-parallelism", ep=ep))
    if a2a not in (None, "none"):
        out.append(item("moe-all-to-all", a2a=a2a))
    if s.integer("pp_size", 1) > 1:
        out.append(item("pipeline-parallelism", pp=s.integer("pp_size", 1)))
    if dp_attention(s)[0] and s.get("enable_dp_attention_local_control_broadcast", False):
        out.append(item("dp-local-control-broadcast"))
    if s.integer("dcp_size", 1) > 1:
        out.append(item("decode-context-parallelism", dcp=s.integer("dcp_size", 1)))
    if s.get("speculative_algorithm") is not None:
        out.append(item("speculative-decoding", algo=s.get("speculative_algorithm")))
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
    unsupported = _role_switch_unsupported(s) if switch and mode in ("prefill", "decode") else []
    return first_broken([
        check(not 0 <= threshold <= 1, "threshold-out-of-range", ("disaggregation_decode_host_receive_threshold",)),
        check(threshold < 1 and (hisparse or switch), "host-receive-with-feature", ("disaggregation_decode_host_receive_threshold", "enable_hisparse", "enable_pd_role_switch"),
              threshold=threshold, feature=s.flag("enable_hisparse") if hisparse else s.flag("enable_pd_role_switch")),
        check(threshold < 1 and s.get("disaggregation_decode_retraction_backup") == "cpu_tensor", "host-buffering-cpu-tensor", ("disaggregation_decode_host_receive_threshold", "disaggregation_decode_retraction_backup"), threshold=threshold),
        check(mode == "decode" and radix and hisparse, "decode-radix-with-hisparse", ("disaggregation_decode_enable_radix_cache", "enable_hisparse")),
        check(mode == "decode" and radix and backend == "fake", "decode-radix-with-fake-transfer", ("disaggregation_decode_enable_radix_cache", "disaggregation_transfer_backend")),
        check(mode == "prefill" and backend == "fake", "prefill-fake-transfer", ("disaggregation_transfer_backend", "disaggregation_mode")),
        check(bool(unsupported), "role-switch-unsupported", ("enable_pd_role_switch",), unsupported=unsupported),
    ])


def _prefill_complete_unsupported(s: Settings) -> list[Item]:
    """_validate_prefill_complete's list, in its order (its words are the rule's items)."""
    mode = s.get("disaggregation_mode", "null")
    out: list[Item] = []
    hicache = bool(s.get("enable_hierarchical_cache", False))
    pairs = [
        (mode not in ("prefill", "decode"), "aggregated-serving"),
        (_backend(s) != "mooncake", "not-mooncake"),
        (s.integer("pp_size", 1) != 1 or s.integer("attn_cp_size", 1) != 1
         or s.integer("dcp_size", 1) != 1, "pp-or-cp"),
        # 0.5.23 reads dp_size x enable_dp_attention after handle_deprecated_dp_attention has
        # turned enable_dp_attention off (moved to attn_dp_size): any TP > 1 counts.
        (s.integer("tp_size", 1) != 1, "attention-tp"),
        (bool(s.get("enable_pdmux", False)) or s.get("decoupled_spec_role", "null") != "null",
         "pdmux-or-decoupled-spec"),
        (bool(s.get("enable_pd_role_switch", False)), "role-switch"),
        (bool(s.get("encoder_only", False) or s.get("language_only", False)), "encoder-disaggregation"),
        (bool(s.get("enable_hisparse", False)), "hisparse"),
        (_threshold(s) < 1, "host-kv-buffering"),
        (mode == "decode" and (bool(s.get("disaggregation_decode_enable_radix_cache", False)) or hicache),
         "decode-radix-or-hicache"),
        (mode == "prefill" and hicache and (s.get("hicache_storage_backend") is not None
                                            or s.get("hicache_write_policy", "write_through") != "write_back"),
         "prefill-hicache-not-write-back"),
        (s.env_true("SGLANG_DISAGG_STAGING_BUFFER"), "staging-buffers"),
        (s.env_true("SGLANG_RUST_SERVER"), "rust-bootstrap-registry"),
    ]
    out.extend(item(name) for broken, name in pairs if broken)
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
    unsupported = _prefill_complete_unsupported(s)
    attempts = s.integer("optimistic_prefill_attempts", 0)
    # handle_pd_disaggregation turns 0 attempts into 1 on a prefill server; a negative
    # count stays, and handle_other_validations refuses it later.
    return first_broken([
        check(bool(unsupported), "unsupported-features", ("disaggregation_decode_allocation_policy",), unsupported=unsupported),
        check(s.get("disaggregation_mode") == "prefill" and attempts < 0, "attempts-negative", ("optimistic_prefill_attempts", "disaggregation_decode_allocation_policy"), attempts=attempts),
    ])
