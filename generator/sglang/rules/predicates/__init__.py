"""One predicate per rule id, grouped by the settings they read; importing registers them."""

from generator.sglang.rules.predicates import context, parallel, serving, speculative

__all__ = ["context", "parallel", "serving", "speculative"]
