"""Predicates of the serving rules: model name, memory fraction, ports, parsers."""

from __future__ import annotations

from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


@predicate("served-model-colon")
def _served_colon(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("served_model_name")
    if value is None or ":" not in str(value):
        return None
    return Hit(("served_model_name",), {"name": s.flag("served_model_name"), "value": value,
                                        "suggestion": str(value).replace(":", "-")})


@predicate("mem-fraction")
def _mem_fraction(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("mem_fraction_static")
    if not isinstance(value, (int, float)) or 0 < value < 1:
        return None
    return Hit(("mem_fraction_static",), {"mem": s.flag("mem_fraction_static"), "value": value})


@predicate("port-range")
def _port_range(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("port")
    if not isinstance(value, int) or 1 <= value <= 65535:
        return None
    return Hit(("port",), {"port": s.flag("port"), "value": value})


@predicate("port-grpc-0515")
def _port_grpc(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("port")
    if not isinstance(value, int) or value > 65535 or value + 10000 <= 65535 or "SGLANG_GRPC_PORT" in s.env:
        return None
    return Hit(("port",), {"port": s.flag("port"), "value": value, "grpc": value + 10000})


@predicate("tool-call-parser-qwen3")
def _tool_qwen3(s: Settings, rule: RuleSpec) -> Hit | None:
    return Hit(("tool_call_parser",), {}) if s.get("tool_call_parser") == "qwen3" else None


@predicate("hicache-needs-radix")
def _hicache_needs_radix(s: Settings, rule: RuleSpec) -> Hit | None:
    if not (s.get("enable_hierarchical_cache", False) and s.get("disable_radix_cache", False)):
        return None
    return Hit(("enable_hierarchical_cache", "disable_radix_cache"), {
        "hicache": s.flag("enable_hierarchical_cache"), "no_radix": s.flag("disable_radix_cache")})
