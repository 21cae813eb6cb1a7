"""One predicate per rule id, grouped by the settings they read; importing registers them."""

from generator.sglang.rules.predicates import (context, gkv, gkv_hicache, gkv_pool, gmoe, gmoe_checks, gmoe_publish,
                                               gpar, gpar_elastic, gserve, gserve_attn, gserve_disagg, gspec,
                                               gspec_lora, gspec_uno, gval, gval_watermark, parallel, serving,
                                               speculative)

__all__ = ["context", "gkv", "gkv_hicache", "gkv_pool", "gmoe", "gmoe_checks", "gmoe_publish", "gpar", "gpar_elastic",
           "gserve", "gserve_attn", "gserve_disagg", "gspec", "gspec_lora", "gspec_uno", "gval", "gval_watermark",
           "parallel", "serving", "speculative"]
