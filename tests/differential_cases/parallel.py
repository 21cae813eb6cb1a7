"""Generated differential cases of the gpar rules (elastic EP, DWDP, decode CP, CP/TP sharing, layernorm SP)."""

from __future__ import annotations

from differential_cases import FlagValue, product_cases

NEW = ("0.5.23",)
BOTH = ("0.5.9", "0.5.23")
ELASTIC = {"--elastic-ep-backend": "mooncake"}
# A primary that may scale up from 2 to 4 ranks and meets every scale-up requirement on CPU
# (the decode CUDA graph off: with 'full', SGLang on CPU stops at its CUDA-device assertion).
SCALE = {**ELASTIC, "--max-ep-size": 4, "--tp-size": 2, "--attn-dp-size": 2, "--enable-dp-lm-head": True,
         "--moe-a2a-backend": "nixl", "--disable-decode-cuda-graph": True}
JOIN = {"--elastic-ep-join-mode": "scale", "--node-rank": 1, "--nnodes": 2, "--dist-init-addr": "127.0.0.1:5000",
        "--elastic-ep-join-rank-offset": 2}

# One broken scale-up requirement each, in SGLang's order.
SCALE_BREAKS = [("--elastic-ep-scale-timeout", 0), ("--tokenizer-worker-num", 2), ("--use-ray", True),
                ("--enable-elastic-expert-backup", True), ("--load-balance-method", "total_requests"),
                ("--cuda-graph-backend-decode", "breakable"), ("--cuda-graph-backend-prefill", "breakable"),
                ("--dcp-size", 2), ("--elastic-ep-backend", "nixl"), ("--moe-a2a-backend", "deepep")]


def _without(flags: dict[str, FlagValue], *names: str) -> dict[str, FlagValue]:
    """``flags`` less ``names``."""
    return {k: v for k, v in flags.items() if k not in names}


CASES = [
    *product_cases("elastic-ep-setup", BOTH, {**ELASTIC, "--enable-eplb": True, "--tp-size": 2, "--ep-size": 2},
                   {"--eplb-algorithm": [None, "deepseek", "elasticity_aware"]}),
    *product_cases("elastic-ep-setup", NEW, {},
                   {"--elastic-ep-backend": [None, "mooncake", "none"],
                    "--pp-size|--elastic-ep-join-mode|--elastic-ep-join-rank-offset|--max-ep-size": [
                        (None, None, None, None), (2, None, None, None), (None, "recover", None, None),
                        (None, "scale", 2, None), (None, None, 2, None), (None, None, None, 0)]}),
    *product_cases("elastic-ep-setup", NEW, {}, {"--elastic-ep-initial-size": [2]}),
    # eplb-needs-ep (X025): 0.5.23 does not assert ep_size > 1 for an elastic EP scale joiner
    *product_cases("eplb-needs-ep", NEW, {**ELASTIC, "--enable-eplb": True, "--tp-size": 2},
                   {"--elastic-ep-join-mode|--node-rank|--nnodes|--dist-init-addr|--elastic-ep-join-rank-offset": [
                       None, ("scale", 1, 2, "127.0.0.1:5000", 2)]}),
    *product_cases("elastic-ep-scale-up", NEW, SCALE, {"--elastic-ep-initial-size": [None, 4, 2]}),
    *(case for flag, value in SCALE_BREAKS for case in product_cases("elastic-ep-scale-up", NEW, SCALE, {flag: [value]})),
    *product_cases("elastic-ep-scale-up", NEW, _without(SCALE, "--enable-dp-lm-head"), {"--attn-dp-size": [2]}),
    *product_cases("elastic-ep-scale-up", NEW, _without(SCALE, "--attn-dp-size", "--enable-dp-lm-head"),
                   {"--moe-dense-tp-size": [1]}),
    *product_cases("elastic-ep-scale-up", NEW, {**SCALE, **JOIN},
                   {"--elastic-ep-initial-size|--elastic-ep-join-rank-offset": [
                       (None, 2), (2, 2), (4, 2), (0, 2), (2, 4)]}),
    *product_cases("elastic-ep-scale-up", NEW, {**ELASTIC, "--max-ep-size": 8, "--tp-size": 4, "--attn-dp-size": 2,
                                                "--enable-dp-lm-head": True, "--moe-a2a-backend": "nixl",
                                                "--disable-decode-cuda-graph": True},
                   {"--moe-dense-tp-size": [None, 1], "--dcp-size": [None, 2, 4]}),
    *product_cases("elastic-ep-scale-up", NEW, _without(SCALE, "--attn-dp-size"),
                   {"--dp-size|--enable-dp-attention": [(2, True)], "--dcp-size": [None, 2]}),
    *product_cases("elastic-ep-graph-recapture", NEW, SCALE,
                   {"--cuda-graph-backend-decode": [None, "full"],
                    "--is-embedding": [True]}),
    *product_cases("dwdp-layout", NEW, {"--dwdp-size": 2},
                   {"--tp-size": [2, 4], "--disaggregation-mode": [None, "prefill", "decode"]}),
    *(case for flag, value in (("--enable-eplb", True), ("--speculative-algorithm", "NGRAM"), ("--pp-size", 2),
                               ("--enable-two-batch-overlap", True))
      for case in product_cases("dwdp-layout", NEW, {"--dwdp-size": 2, "--tp-size": 2}, {flag: [value]})),
    *product_cases("dcp-flags", NEW, {}, {"--dcp-size": [0, 1, 2], "--tp-size": [2],
                                         "--dcp-comm-backend": [None, "a2a", "ag_rs"],
                                         "--dcp-replicate-q-proj": [None, True]}),
    *product_cases("dcp-flags", NEW, {"--dcp-size": 2, "--tp-size": 2, "--cp-strategy": "zigzag"},
                   {"--enable-prefill-cp": [True]}),
    *product_cases("prefill-cp-strategy", NEW, {"--enable-prefill-cp": True},
                   {"--cp-strategy": [None, "zigzag", "interleave"]}),
    *product_cases("cp-aiter-fusion", NEW, {"--tp-size": 2},
                   {"--enable-aiter-allreduce-fusion": [None, True], "--attn-cp-size|--moe-dp-size": [
                       (None, None), (2, None), (2, 2)]}),
    *product_cases("attn-dp-size-positive", NEW, {}, {"--attn-dp-size": [-1, 0, 1]}),
    *product_cases("ep-dispatch-needs-a2a", BOTH, {"--tp-size": 2},
                   {"--ep-dispatch-algorithm": ["static", "lp", "dynamic"], "--moe-a2a-backend": [None, "deepep"]}),
    *product_cases("shared-experts-tp-divides", NEW, {"--tp-size": 4},
                   {"--shared-experts-tp-size": [None, 0, 3], "--attn-dp-size": [None, 4]}),
    *product_cases("layernorm-sp-megamoe", NEW, {}, {"--enable-megamoe-for-layernorm-sp": [None, True]}),
    *product_cases("layernorm-sp-layout", NEW, {"--enable-layernorm-sp": True},
                   {"--tp-size|--attn-dp-size|--pp-size": [(None, None, None), (2, 2, None), (2, None, 2)]}),
    *product_cases("layernorm-sp-layout", NEW, {}, {"--tp-size": [2]}),
    *product_cases("tp-lm-head-a2a", NEW, {"--enable-tp-lm-head-all-to-all": True},
                   {"--tp-size|--attn-dp-size": [(None, None), (2, 2), (4, 2)], "--enable-dp-lm-head": [None, True]}),
    # DWDP sets attention DP, the DP LM head and 'none' a2a before these handlers run
    *product_cases("ep-dispatch-needs-a2a", NEW, {"--tp-size": 2, "--moe-a2a-backend": "deepep"},
                   {"--dwdp-size": [None, 2], "--ep-dispatch-algorithm": ["static"]}),
    # Waterfill switches the a2a backend to deepep before the dispatch check (found by the mixed corpus)
    *product_cases("ep-dispatch-needs-a2a", NEW, {"--tp-size": 2},
                   {"--enable-waterfill": [None, True], "--dwdp-size": [None, 2], "--ep-dispatch-algorithm": ["static", "lp"]}),
    *product_cases("tp-lm-head-a2a", NEW, {"--tp-size": 2}, {"--dwdp-size": [2], "--enable-tp-lm-head-all-to-all": [True]}),
    *product_cases("moe-dp-sizes", NEW, {"--tp-size": 2, "--moe-dp-size": 2}, {"--dwdp-size": [None, 2]}),
    *product_cases("attn-cp-sizes", NEW, {"--tp-size": 2, "--attn-cp-size": 2}, {"--dwdp-size": [None, 2]}),
    *product_cases("dp-lm-head", NEW, {"--tp-size": 2, "--enable-dp-lm-head": True}, {"--dwdp-size": [None, 2]}),
    *product_cases("disagg-decode-tp-divides", ("0.5.9",), {"--disaggregation-decode-tp": 3},
                   {"--disaggregation-mode": ["prefill", "null"], "--tp-size": [2, 3]}),
]
