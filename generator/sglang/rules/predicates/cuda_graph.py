"""Predicates of CUDA graphs: the --cuda-graph-config values (0.5.23's cuda_graph_hook).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.registry import Check, Hit, check, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec


_GRAPH_BACKENDS = ("full", "breakable", "disabled")


def _graph_config(s: Settings) -> dict[str, Any]:
    data = s.get("cuda_graph_config")  # parse_cuda_graph_config_arg's dict (argparse refuses the rest)
    return data if isinstance(data, dict) else {}


def _graph_checks(s: Settings) -> list[Check]:
    """handle_cuda_graph's value checks, in its order: each phase's backend, then the prefill max context."""
    config = _graph_config(s)
    checks: list[Check] = []
    for phase in ("decode", "prefill"):
        section = config.get(phase)
        backend = section.get("backend") if isinstance(section, dict) else None
        checks.append(check(backend is not None and backend not in _GRAPH_BACKENDS, "backend", _BLAME,
                            phase=phase, backend=backend))
    prefill = config.get("prefill")
    size = s.number("cuda_graph_prefill_max_context")  # human_readable_int: "4k" is 4000
    if isinstance(prefill, dict) and "max_context_size" in prefill:
        size = prefill["max_context_size"]
    checks.append(check(isinstance(size, (int, float)) and not isinstance(size, bool) and size <= 0, "max-context",
                        _BLAME, size=size))
    return checks


_BLAME = ("cuda_graph_config", "cuda_graph_prefill_max_context")


@predicate("cuda-graph-config-values")
def _cuda_graph_config_values(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.get("cuda_graph_config") is None and s.get("cuda_graph_prefill_max_context") is None:
        return None
    return first_broken(_graph_checks(s))
