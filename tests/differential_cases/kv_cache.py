"""Generated cases for gkv's rules: KV cache compatibility, LMCache, prefill-only KV pool, mamba
state, NVFP4 dequant, unified memory pool, KV sharding, HiCache and HiSparse."""

from __future__ import annotations

from differential_cases import WordCase, product_cases

BOTH = ("0.5.9", "0.5.23")
NEW = ("0.5.23",)
TLRU = ('{"threshold": 1, "next_prompt_estimate": 2}', '{"threshold": -1}', '{"threshold": 5, "next_prompt_estimate": 2}')
PREFILL_SHARD = {"--disaggregation-mode": "prefill", "--page-size": 64}
# The stand-in Llama is a GQA model: SGLang shards its KV across attention-CP ranks only.
SHARD_GQA = {"--enable-kv-cache-sharding": True, "--attention-backend": "fa3", "--enable-prefill-cp": True,
             "--attn-cp-size": 2, "--tp-size": 2, "--cp-strategy": "interleave", "--page-size": 64}
EMBED = {"--prefill-only-disable-kv-cache": True, "--is-embedding": True, "--chunked-prefill-size": -1,
         "--disable-radix-cache": True, "--attention-backend": "fa3"}
UNIFIED = {"--enable-unified-memory": True, "--attention-backend": "triton"}



def one_of(rule: str, pins: tuple[str, ...], base: dict[str, object], switches: list[str],
           axes: dict[str, list[object]] | None = None) -> list[WordCase]:
    """product_cases over ``axes`` with none, then each one, of ``switches`` turned on."""
    out = product_cases(rule, pins, base, dict(axes or {"--page-size": [None]}))
    for switch in switches:
        out += product_cases(rule, pins, base, {switch: [True], **(axes or {})})
    return out


CASES = [
    *product_cases("kv-cache-compat", BOTH, {},
                   {"--swa-full-tokens-ratio": [None, 0.5, 1.5, 0],
                    "--disaggregation-decode-enable-offload-kvcache|--disaggregation-mode":
                        [None, (True, None), (True, "decode")]}),
    *product_cases("kv-cache-compat", ("0.5.9",), {"--disaggregation-decode-enable-offload-kvcache": True,
                                                   "--disaggregation-mode": "decode"},
                   {"--swa-full-tokens-ratio": [None]}, env={"SGLANG_ENABLE_SPEC_V2": "1"}),
    *product_cases("kv-cache-compat", NEW, {"--disaggregation-mode": "decode"},
                   {"--disaggregation-decode-retraction-backup": [None, "host_pool"],
                    "--enable-priority-scheduling|--disable-priority-preemption": [None, (True, None), (True, True)],
                    "--disaggregation-decode-enable-offload-kvcache|--hicache-storage-backend": [None, (True, "file")]}),
    *product_cases("kv-cache-compat", NEW, {},
                   {"--disaggregation-decode-retraction-backup|--disaggregation-mode":
                        [(None, None), ("host_pool", None), ("cpu_tensor", None)],
                    "--radix-eviction-policy|--radix-eviction-policy-config":
                        [(None, None), ("tlru", None), *(("tlru", c) for c in TLRU)],
                    "--swa-prefix-tails": [None, -1, 2]}),
    *one_of("lmcache-compat", NEW, {"--enable-lmcache": True},
            ["--enable-hierarchical-cache", "--disable-radix-cache", "--enable-streaming-session",
             "--enable-unified-cache-external-linker"]),
    *product_cases("lmcache-compat", NEW, {"--enable-lmcache": True},
                   {"--hicache-host-memory-mode": ["cache", "buffer_only"], "--dcp-size|--tp-size": [None, (2, 2)]}),
    *product_cases("prefill-only-no-kv-cache", NEW, {"--prefill-only-disable-kv-cache": True},
                   {"--is-embedding": [None, True], "--chunked-prefill-size": [None, -1],
                    "--disable-radix-cache": [None, True], "--attention-backend": ["fa3", "triton"]}),
    *product_cases("prefill-only-no-kv-cache", NEW, EMBED,
                   {"--kv-cache-dtype": [None, "mxfp8", "fp4_mx_block16"], "--enable-hisparse": [None, True]}),
    *product_cases("mamba-state-args", NEW, {},
                   {"--mamba-cache-philox-rounds": [None, -1, 2], "--mamba-max-states-per-path": [None, 0, -2, 4]}),
    *one_of("mamba-state-args", NEW, {}, ["--enable-hierarchical-cache", "--enable-lmcache"],
            {"--enable-mamba-cache-stochastic-rounding": [None, True], "--enable-int8-mamba-checkpoint": [None, True]}),
    *product_cases("nvfp4-prefill-dequant", NEW, {},
                   {"--prefill-kv-cache-dequant-dtype": [None, "auto", "fp8_e4m3"],
                    "--kv-cache-dtype": [None, "fp8_e4m3"]}),
    *one_of("unified-memory-pool", NEW, {"--enable-unified-memory": True},
            ["--enable-two-batch-overlap", "--enable-lmcache"], {"--attention-backend": ["triton", "fa3", "torch_native"]}),
    *product_cases("unified-memory-pool", NEW, UNIFIED,
                   {"--speculative-algorithm": [None, "NGRAM"], "--mamba-backend": [None, "flashinfer"],
                    "--linear-attn-prefill-backend": [None, "ptx_kda"]}),
    *product_cases("unified-memory-pool", NEW, UNIFIED,
                   {"--disaggregation-mode|--pp-size": [None, ("prefill", 2), ("prefill", None)],
                    "--disaggregation-transfer-backend": [None, "nixl"]}),
    *product_cases("unified-memory-pool", NEW, {},
                   {"--enable-page-major-kv-layout": [None, True], "--attention-backend": ["triton"]}),
    *product_cases("kv-cache-sharding", NEW, SHARD_GQA,
                   {"--disaggregation-mode": [None, "prefill"], "--attention-backend": ["triton", "fa3"]}),
    *one_of("kv-cache-sharding", NEW, {**SHARD_GQA, **PREFILL_SHARD},
            ["--enable-streaming-session", "--enable-lmcache", "--enable-two-batch-overlap", "--enable-flexkv",
             "--enable-unified-memory", "--enable-session-radix-cache", "--enable-hisparse",
             "--enable-unified-cache-external-linker"], {"--disaggregation-transfer-backend": [None, "fake"]}),
    *product_cases("kv-cache-sharding", NEW, {**SHARD_GQA, **PREFILL_SHARD},
                   {"--dllm-algorithm": [None, "LowConfidence"], "--enable-dynamic-chunking|--pp-size": [None, (True, 2)],
                    "--enable-hierarchical-cache|--hicache-storage-backend": [None, (True, None), (True, "file")]}),
    *product_cases("kv-cache-sharding", NEW, {**SHARD_GQA, **PREFILL_SHARD},
                   {"--dcp-size": [None, 2], "--radix-cache-backend": [None, "custom"]}),
    *product_cases("kv-cache-sharding", NEW, {**SHARD_GQA, **PREFILL_SHARD},
                   {"--page-size": [1, 64], "--chunked-prefill-size": [None, -1, 4096]}),
    *product_cases("hicache-config", NEW, {},
                   {"--hicache-host-memory-fraction": [None, 0.5, 2.0],
                    "--unified-cache-external-linker-config": [None, "[1]", '{"a": 1}']}),
    *one_of("hicache-config", NEW, {}, ["--enable-hierarchical-cache", "--disable-radix-cache",
                                        "--enable-linker-mla-dedup"],
            {"--enable-unified-cache-external-linker": [None, True], "--hicache-storage-backend": [None, "file"]}),
    *product_cases("hicache-config", NEW, {"--enable-hierarchical-cache": True},
                   {"--hicache-host-memory-mode": [None, "buffer_only"], "--hicache-storage-backend": [None, "file"]}),
    *product_cases("hicache-config", NEW, {"--disaggregation-mode": "decode"},
                   {"--disaggregation-decode-host-receive-threshold": [None, 0.5],
                    "--hicache-storage-backend": [None, "file", "mooncake"], "--hicache-io-backend": [None, "direct"]}),
    *product_cases("hicache-config", NEW, {"--disaggregation-mode": "decode"},
                   {"--hicache-host-memory-mode|--hicache-storage-backend": [None, ("buffer_only", "file")]}),
    *product_cases("hisparse-args", NEW, {},
                   {"--enable-hisparse": [None, True], "--disable-radix-cache": [None, True],
                    "--enable-mixed-chunk": [None, True]}),
    *product_cases("flag-check", NEW, {"--enable-hierarchical-cache": True},
                   {"--hicache-host-memory-mode": ["host_only"]}),
    *product_cases("kv-cache-sharding", NEW, {**SHARD_GQA, **PREFILL_SHARD, "--attention-backend": "trtllm_mla"},
                   {"--disable-chunked-prefix-cache": [None, True]}),
    *product_cases("unified-memory-pool", NEW, UNIFIED,
                   {"--dcp-size|--tp-size": [(2, 2)], "--linear-attn-decode-backend": [None, "ptx_kda"]}),
    *product_cases("lmcache-compat", NEW, {"--enable-lmcache": True},
                   {"--speculative-algorithm": ["NGRAM"], "--disaggregation-mode": [None, "prefill"]}),
    *product_cases("hisparse-args", NEW, {"--enable-hisparse": True, "--speculative-algorithm": "NGRAM"},
                   {"--speculative-eagle-topk": [None, 2], "--speculative-adaptive": [None, True]}),
    *product_cases("prefill-only-no-kv-cache", NEW, EMBED,
                   {"--attn-cp-size|--tp-size": [None, (2, 2)]}),
    # speculation with KV sharding: these algorithms fail on any model (found by the mixed corpus)
    *product_cases("kv-cache-sharding", NEW, {**SHARD_GQA, **PREFILL_SHARD},
                   {"--speculative-algorithm|--speculative-draft-model-path": [("NGRAM", None), ("EAGLE3", "fake_draft_model"),
                                                                              ("STANDALONE", "fake_draft_model")]}),
    # a PD decode server runs without the radix cache unless it opts in (found by the mixed corpus)
    *product_cases("hicache-needs-radix", BOTH, {"--enable-hierarchical-cache": True},
                   {"--disaggregation-mode": [None, "prefill", "decode"]}),
    *product_cases("hicache-needs-radix", ("0.5.9",), {"--attention-backend": "dual_chunk_flash_attn"},
                   {"--enable-hierarchical-cache": [None, True]}),
    *product_cases("hicache-needs-radix", NEW, {"--enable-hierarchical-cache": True, "--disaggregation-mode": "decode"},
                   {"--disaggregation-decode-enable-radix-cache": [None, True]}),
    # fa3 with an e5m2 KV cache becomes triton in SGLang (found by the mixed corpus)
    *product_cases("prefill-only-no-kv-cache", NEW, EMBED,
                   {"--kv-cache-dtype": ["fp8_e5m2", "fp8_e4m3"], "--prefill-attention-backend": [None, "fa3"]}),
    # Only refusals here: a HiCache + DCP set that passes these checks meets SGLang's MLA-model check.
    *product_cases("hicache-config", NEW, {"--enable-hierarchical-cache": True, "--dcp-size": 2, "--tp-size": 2},
                   {"--hicache-host-memory-mode|--hicache-storage-backend": [("buffer_only", "file")],
                    "--enable-lmcache": [None, True], "--enable-hisparse": [None, True]}),
]
