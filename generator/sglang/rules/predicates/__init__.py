"""The predicates of the rules that are not declarative, one module per SGLang topic; importing registers them.

speculative, lora, parallel, elastic_ep, moe, kv_cache, hicache, attention, disaggregation,
serving, validation (check_server_args' own checks), cuda_graph, gpu (the G rules: the declared GPU), model (the
checkpoint's facts); common holds the readings
of SGLang's resolution several topics share (the speculative algorithm, DP attention).
"""

from generator.sglang.rules.predicates import (attention, common, cuda_graph, disaggregation, elastic_ep, gpu,
                                               hicache, kv_cache, lora, model, moe, parallel, serving, speculative,
                                               validation)

__all__ = ["attention", "common", "cuda_graph", "disaggregation", "elastic_ep", "gpu", "hicache", "kv_cache", "lora", "model", "moe",
           "parallel", "serving", "speculative", "validation"]
