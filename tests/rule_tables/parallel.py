"""Unit rows of the gpar rules: elastic EP, DWDP, decode context parallelism, CP/TP sharing, layernorm SP, LM head."""

from __future__ import annotations

from rule_tables import Row

NEW = "0.5.23"
ELASTIC = ["--elastic-ep-backend", "mooncake"]
# A primary that may scale up from 2 to 4 ranks and meets every scale-up requirement on CPU.
SCALE = ELASTIC + ["--max-ep-size", "4", "--tp-size", "2", "--attn-dp-size", "2", "--enable-dp-lm-head",
                   "--moe-a2a-backend", "nixl", "--disable-decode-cuda-graph"]
JOIN = ["--elastic-ep-join-mode", "scale", "--node-rank", "1", "--nnodes", "2", "--dist-init-addr", "127.0.0.1:5000",
        "--elastic-ep-join-rank-offset", "2"]

ROWS: list[Row] = [
    # elastic-ep-setup (X046)
    ("0.5.9", ELASTIC + ["--enable-eplb", "--eplb-algorithm", "deepseek", "--tp-size", "2", "--ep-size", "2"], {},
     ["X046"]),
    ("0.5.9", ELASTIC + ["--enable-eplb", "--tp-size", "2", "--ep-size", "2"], {}, []),
    ("0.5.9", ELASTIC + ["--enable-eplb", "--eplb-algorithm", "elasticity_aware_hierarchical", "--tp-size", "2",
                         "--ep-size", "2"], {}, ["X046"]),
    (NEW, ELASTIC + ["--enable-eplb", "--eplb-algorithm", "elasticity_aware_hierarchical", "--tp-size", "2",
                     "--ep-size", "2"], {}, []),
    (NEW, ["--elastic-ep-backend", "none", "--pp-size", "2"], {}, ["X046"]),  # 'none' is not None to SGLang
    (NEW, ELASTIC, {}, []),
    (NEW, ["--elastic-ep-join-mode", "recover"], {}, ["X046"]),
    (NEW, ELASTIC + ["--elastic-ep-join-mode", "recover"], {}, []),
    (NEW, ELASTIC + ["--elastic-ep-join-mode", "scale", "--elastic-ep-join-rank-offset", "2"], {}, ["X046"]),
    (NEW, ELASTIC + ["--elastic-ep-join-rank-offset", "2"], {}, ["X046"]),
    (NEW, ["--max-ep-size", "4"], {}, ["X046"]),
    (NEW, ELASTIC + ["--max-ep-size", "0"], {}, ["X046"]),
    (NEW, ["--elastic-ep-initial-size", "2"], {}, ["X046"]),
    # eplb-needs-ep (X025) exempts an elastic EP scale joiner on 0.5.23, as SGLang does
    (NEW, ELASTIC + ["--enable-eplb", "--tp-size", "2"], {}, ["X025"]),
    (NEW, ELASTIC + ["--enable-eplb", "--tp-size", "2"] + JOIN, {}, []),
    # elastic-ep-scale-up (X047)
    (NEW, SCALE, {}, []),
    (NEW, SCALE + ["--elastic-ep-initial-size", "4"], {}, ["X047"]),
    (NEW, SCALE + ["--elastic-ep-initial-size", "2"], {}, []),
    (NEW, SCALE + ["--elastic-ep-scale-timeout", "0"], {}, ["X047"]),
    (NEW, SCALE + ["--tokenizer-worker-num", "2"], {}, ["X047"]),
    (NEW, SCALE + ["--use-ray"], {}, ["X047"]),
    (NEW, SCALE + ["--load-balance-method", "total_requests"], {}, ["X047"]),
    (NEW, SCALE + ["--cuda-graph-backend-prefill", "breakable"], {}, ["X047"]),
    (NEW, SCALE + ["--dcp-size", "2"], {}, ["X047"]),
    (NEW, SCALE + JOIN, {}, ["X047"]),
    (NEW, SCALE + JOIN + ["--elastic-ep-initial-size", "2"], {}, []),
    (NEW, SCALE + JOIN + ["--elastic-ep-initial-size", "0"], {}, ["X047"]),
    (NEW, ELASTIC + ["--max-ep-size", "4", "--tp-size", "2"], {}, ["X047"]),
    (NEW, ELASTIC + ["--max-ep-size", "8", "--tp-size", "4", "--attn-dp-size", "2", "--enable-dp-lm-head",
                     "--moe-a2a-backend", "nixl", "--disable-decode-cuda-graph", "--moe-dense-tp-size", "1"], {}, []),
    (NEW, ELASTIC + ["--max-ep-size", "4", "--tp-size", "2", "--attn-dp-size", "2", "--enable-dp-lm-head",
                     "--disable-decode-cuda-graph"], {}, ["X047"]),
    (NEW, ELASTIC + ["--max-ep-size", "2", "--tp-size", "2", "--use-ray"], {}, []),  # no scale-up: not checked
    # --dp-size N --enable-dp-attention is SGLang's old spelling of --attn-dp-size N (X105 says so)
    (NEW, ELASTIC + ["--max-ep-size", "4", "--tp-size", "2", "--dp-size", "2", "--enable-dp-attention",
                     "--enable-dp-lm-head", "--moe-a2a-backend", "nixl", "--disable-decode-cuda-graph"], {}, ["X105"]),
    (NEW, ELASTIC + ["--max-ep-size", "8", "--tp-size", "4", "--dp-size", "4", "--enable-dp-attention",
                     "--enable-dp-lm-head", "--moe-a2a-backend", "nixl", "--disable-decode-cuda-graph", "--dcp-size",
                     "2"], {}, ["X105", "X047"]),
    # elastic-ep-graph-recapture (X048)
    (NEW, SCALE + ["--cuda-graph-backend-decode", "full", "--is-embedding"], {}, ["X048"]),
    (NEW, SCALE + ["--is-embedding"], {}, []),
    (NEW, SCALE + ["--cuda-graph-backend-decode", "full"], {}, []),
    # dwdp-layout (X049)
    (NEW, ["--dwdp-size", "2", "--tp-size", "2"], {}, []),
    (NEW, ["--dwdp-size", "2", "--tp-size", "4"], {}, ["X049"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--disaggregation-mode", "decode"], {}, ["X049"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--pp-size", "2"], {}, ["X049"]),
    (NEW, ["--dwdp-size", "1", "--tp-size", "4"], {}, []),
    # dcp-flags (X050)
    (NEW, ["--dcp-size", "0"], {}, ["X050"]),
    (NEW, ["--dcp-comm-backend", "a2a"], {}, ["X050"]),
    (NEW, ["--dcp-comm-backend", "ag_rs"], {}, []),
    (NEW, ["--dcp-replicate-q-proj", "--dcp-size", "2", "--tp-size", "2", "--dcp-comm-backend", "ag_rs"], {}, ["X050"]),
    (NEW, ["--dcp-replicate-q-proj", "--dcp-size", "2", "--tp-size", "2", "--dcp-comm-backend", "a2a"], {}, []),
    # prefill-cp-strategy (X051), cp-aiter-fusion (X052)
    (NEW, ["--enable-prefill-cp"], {}, ["X051"]),
    (NEW, ["--enable-prefill-cp", "--cp-strategy", "zigzag"], {}, []),
    (NEW, ["--attn-cp-size", "2", "--tp-size", "2", "--enable-aiter-allreduce-fusion"], {}, ["X052"]),
    (NEW, ["--enable-aiter-allreduce-fusion"], {}, []),
    # attn-dp-size-positive (X053), ep-dispatch-needs-a2a (X054), shared-experts-tp-divides (X055)
    (NEW, ["--attn-dp-size", "0"], {}, ["X053"]),
    (NEW, ["--attn-dp-size", "1"], {}, []),
    (NEW, ["--ep-dispatch-algorithm", "static"], {}, ["X054"]),
    (NEW, ["--ep-dispatch-algorithm", "dynamic"], {}, []),
    (NEW, ["--ep-dispatch-algorithm", "static", "--enable-waterfill"], {}, []),
    (NEW, ["--ep-dispatch-algorithm", "static", "--moe-a2a-backend", "deepep", "--tp-size", "2"], {}, []),
    ("0.5.9", ["--ep-dispatch-algorithm", "static"], {}, []),
    (NEW, ["--shared-experts-tp-size", "3", "--tp-size", "2"], {}, ["X055"]),
    (NEW, ["--shared-experts-tp-size", "2", "--tp-size", "4", "--attn-dp-size", "4"], {}, ["X055"]),
    (NEW, ["--shared-experts-tp-size", "2", "--tp-size", "4"], {}, []),
    # layernorm-sp-megamoe (X056), layernorm-sp-layout (X057)
    (NEW, ["--enable-megamoe-for-layernorm-sp"], {}, ["X056"]),
    (NEW, ["--enable-megamoe-for-layernorm-sp", "--enable-layernorm-sp", "--tp-size", "4"], {}, []),
    (NEW, ["--enable-layernorm-sp"], {}, ["X057"]),
    (NEW, ["--enable-layernorm-sp", "--tp-size", "2", "--attn-dp-size", "2"], {}, ["X057"]),
    (NEW, ["--enable-layernorm-sp", "--tp-size", "2", "--pp-size", "2"], {}, ["X057"]),
    (NEW, ["--enable-layernorm-sp", "--tp-size", "2"], {}, []),
    # tp-lm-head-a2a (X058)
    (NEW, ["--enable-tp-lm-head-all-to-all"], {}, ["X058"]),
    (NEW, ["--enable-tp-lm-head-all-to-all", "--tp-size", "2", "--attn-dp-size", "2"], {}, []),
    (NEW, ["--enable-tp-lm-head-all-to-all", "--tp-size", "2", "--attn-dp-size", "2", "--enable-dp-lm-head"], {},
     ["X058"]),
    (NEW, ["--enable-tp-lm-head-all-to-all", "--tp-size", "4", "--attn-dp-size", "2"], {}, ["X058"]),
    # DWDP sets attention DP, the DP LM head and 'none' a2a before these handlers run
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--ep-dispatch-algorithm", "static", "--moe-a2a-backend", "deepep"], {},
     ["X054"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--shared-experts-tp-size", "2"], {}, ["X055"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--enable-layernorm-sp"], {}, ["X057"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--enable-tp-lm-head-all-to-all"], {}, ["X058"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--shared-experts-tp-size", "1"], {}, []),
    # ... and the context-parallel, MoE-DP and DP LM-head rules of context.py/parallel.py read it too
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--moe-dp-size", "2"], {}, []),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--attn-cp-size", "2"], {}, ["X031"]),
    (NEW, ["--dwdp-size", "2", "--tp-size", "2", "--enable-dp-lm-head"], {}, []),
    (NEW, ["--dwdp-size", "2", "--tp-size", "4", "--moe-dp-size", "2"], {}, ["X032", "X049"]),
    # disagg-decode-tp-divides (X216)
    ("0.5.9", ["--disaggregation-mode", "prefill", "--disaggregation-decode-tp", "3", "--tp-size", "2"], {}, ["X216"]),
    ("0.5.9", ["--disaggregation-mode", "prefill", "--disaggregation-decode-tp", "4", "--tp-size", "2"], {}, []),
    ("0.5.9", ["--disaggregation-mode", "null", "--disaggregation-decode-tp", "3", "--tp-size", "2"], {}, []),
]
