"""Predicate of --load-publish-endpoint (0.5.23's validation_hook.check_load_publish_args).

SGLang resolves the load-publish port range with disaggregation/kv_events.py's
resolve_load_pub_range and refuses a value the scheduler would decline; this module
mirrors that resolver for the values gen sees (the endpoints, the DP rank count).
"""

from __future__ import annotations

import json
from typing import Any

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

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


def _range_problem(mode: str, kv: Any, replay: Any, dp: int) -> str | None:
    """resolve_load_pub_range's reason, or None when the range resolves."""
    if mode.lower() == "auto":
        found = _bindable(kv)
        if found is None:
            return f"=auto needs a bindable wildcard-host tcp:// --kv-events-config endpoint, got {kv!r}"
        base = found[1] + dp
        replay_base = _port(replay)
        if replay_base is not None and _overlaps(base, replay_base, dp):
            base = replay_base + dp
    else:
        if _port(kv) is None:
            return f"={mode!r} needs a routable tcp:// --kv-events-config endpoint, got {kv!r}"
        found = _bindable(mode)
        if found is None:
            return f"={mode!r} is not a bindable tcp:// address (a wildcard host and a port)"
        base = found[1]
        for port in (_port(kv), _port(replay)):
            if port is not None and _overlaps(base, port, dp):
                return f" range [{base}, {base + dp}) overlaps the kv-events range [{port}, {port + dp})"
    if base + dp - 1 > 65535:
        return f" range from {base} would run past port 65535"
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


def _config_problem(raw: Any) -> tuple[str | None, dict[str, Any]]:
    if not raw:
        return "requires --kv-events-config (routers find the load range through it)", {}
    try:
        config = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        config = None
    if not isinstance(config, dict) or not _fields_ok(config):
        return "needs a --kv-events-config SGLang can parse (a JSON object of KVEventsConfig fields)", {}
    if config.get("publisher", "null") == "null" or not config.get("endpoint", "tcp://*:5557"):
        return "needs an active --kv-events-config publisher; got publisher 'null' or an empty endpoint", {}
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
    flag = s.flag("load_publish_endpoint")
    sep = "" if problem.startswith(("=", " ")) else " "
    return Hit(("load_publish_endpoint", "kv_events_config"), {"detail": f"{flag}{sep}{problem}", "flag": flag})
