"""One predicate per rule id, grouped by the settings they read; importing registers them."""

from generator.sglang.rules.predicates import parallel, serving, speculative

__all__ = ["parallel", "serving", "speculative"]
