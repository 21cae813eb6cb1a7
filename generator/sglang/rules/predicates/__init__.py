"""One predicate per rule id, grouped by the settings they read; importing registers them."""

from generator.sglang.rules.predicates import (context, gkv, gmoe, gpar, gserve, gspec, gval, parallel, serving,
                                               speculative)

__all__ = ["context", "gkv", "gmoe", "gpar", "gserve", "gspec", "gval", "parallel", "serving", "speculative"]
from generator.sglang.rules.predicates import gkv_hicache, gkv_pool  # gkv's split modules (register on import)

__all__ += ["gkv_hicache", "gkv_pool"]
from generator.sglang.rules.predicates import gspec_lora, gspec_uno  # gspec's split modules (register on import)

__all__ += ["gspec_lora", "gspec_uno"]
from generator.sglang.rules.predicates import gmoe_checks, gmoe_publish  # gmoe's split modules (register on import)

__all__ += ["gmoe_checks", "gmoe_publish"]
from generator.sglang.rules.predicates import gserve_attn, gserve_disagg  # noqa: E402  (group gserve, split by topic)

__all__ += ["gserve_attn", "gserve_disagg"]
from generator.sglang.rules.predicates import gval_watermark  # gval's split module (registers on import)

__all__ += ["gval_watermark"]
from generator.sglang.rules.predicates import gpar_elastic  # gpar's split module (registers on import)

__all__ += ["gpar_elastic"]
