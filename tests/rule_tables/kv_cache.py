"""Unit rows for gkv's rules (KV cache, KV sharding, hierarchical cache, HiSparse, mamba state)."""

from __future__ import annotations

from rule_tables import Row

SHARD = ["--enable-kv-cache-sharding", "--disaggregation-mode", "prefill", "--attention-backend", "fa3",
         "--enable-prefill-cp", "--cp-strategy", "interleave", "--attn-cp-size", "2", "--tp-size", "2", "--page-size",
         "64"]
UNIFIED = ["--enable-unified-memory", "--attention-backend", "triton"]
EMBED = ["--prefill-only-disable-kv-cache", "--is-embedding", "--chunked-prefill-size", "-1", "--disable-radix-cache",
         "--attention-backend", "fa3"]

ROWS: list[Row] = [
    # kv-cache-compat (X085)
    ("0.5.9", ["--swa-full-tokens-ratio", "1.5"], {}, ["X085"]),
    ("0.5.9", ["--swa-full-tokens-ratio", "1.0"], {}, []),
    ("0.5.9", ["--disaggregation-decode-enable-offload-kvcache"], {}, ["X085"]),
    ("0.5.9", ["--disaggregation-decode-enable-offload-kvcache", "--disaggregation-mode", "decode"],
     {"SGLANG_ENABLE_SPEC_V2": "1"}, ["X085"]),
    ("0.5.9", ["--disaggregation-decode-enable-offload-kvcache", "--disaggregation-mode", "decode"], {}, []),
    ("0.5.23", ["--disaggregation-decode-retraction-backup", "host_pool"], {}, ["X085"]),
    ("0.5.23", ["--disaggregation-mode", "decode", "--disaggregation-decode-retraction-backup", "host_pool"], {}, []),
    ("0.5.23", ["--disaggregation-mode", "decode", "--disaggregation-decode-retraction-backup", "host_pool",
                "--enable-priority-scheduling"], {}, ["X085"]),
    ("0.5.23", ["--disaggregation-mode", "decode", "--disaggregation-decode-host-receive-threshold", "0.5",
                "--disaggregation-decode-enable-offload-kvcache", "--hicache-storage-backend", "file"], {}, ["X085"]),
    ("0.5.23", ["--radix-eviction-policy", "tlru"], {}, ["X085"]),
    ("0.5.23", ["--radix-eviction-policy", "tlru", "--radix-eviction-policy-config",
                '{"threshold": 5, "next_prompt_estimate": 2}'], {}, []),
    ("0.5.23", ["--swa-prefix-tails", "-1"], {}, ["X085"]),
    ("0.5.23", ["--enable-hierarchical-cache", "--disable-radix-cache"], {}, ["X026"]),
    # ... a PD decode server has no radix cache unless it opts in (0.5.23) (found by the mixed corpus)
    ("0.5.23", ["--enable-hierarchical-cache", "--disaggregation-mode", "decode"], {}, ["X026"]),
    ("0.5.23", ["--enable-hierarchical-cache", "--disaggregation-mode", "decode",
                "--disaggregation-decode-enable-radix-cache"], {}, []),
    ("0.5.9", ["--enable-hierarchical-cache", "--disaggregation-mode", "decode"], {}, ["X026"]),
    ("0.5.9", ["--enable-hierarchical-cache", "--disaggregation-mode", "prefill"], {}, []),
    ("0.5.9", ["--enable-hierarchical-cache", "--attention-backend", "dual_chunk_flash_attn"], {}, ["X026"]),
    ("0.5.9", ["--attention-backend", "dual_chunk_flash_attn"], {}, []),
    # lmcache-compat (X086)
    ("0.5.23", ["--enable-lmcache", "--enable-streaming-session"], {}, ["X086"]),
    ("0.5.23", ["--enable-lmcache", "--tp-size", "2", "--attn-dp-size", "2"], {}, ["X086"]),
    ("0.5.23", ["--enable-lmcache"], {}, []),
    ("0.5.9", ["--enable-lmcache", "--enable-streaming-session"], {}, []),
    # prefill-only-no-kv-cache (X087)
    ("0.5.23", ["--prefill-only-disable-kv-cache"], {}, ["X087"]),
    ("0.5.23", [*EMBED[:-1], "triton"], {}, ["X087"]),
    ("0.5.23", [*EMBED, "--enable-prefill-cp", "--cp-strategy", "interleave"], {}, ["X087"]),
    ("0.5.23", EMBED, {}, []),
    # ... fa3 with an e5m2 KV cache is SGLang's triton (its FP8 fallback), a separate prefill fa3 stays
    ("0.5.23", [*EMBED, "--kv-cache-dtype", "fp8_e5m2"], {}, ["X087"]),
    ("0.5.23", [*EMBED, "--kv-cache-dtype", "fp8_e5m2", "--prefill-attention-backend", "fa3"], {}, []),
    ("0.5.23", [*EMBED, "--kv-cache-dtype", "fp8_e4m3"], {}, []),
    # mamba-state-args (X088)
    ("0.5.23", ["--mamba-max-states-per-path", "0"], {}, ["X088"]),
    ("0.5.23", ["--enable-mamba-cache-stochastic-rounding"], {}, ["X088"]),
    ("0.5.23", ["--enable-int8-mamba-checkpoint", "--radix-cache-backend", "custom"], {}, ["X088"]),
    ("0.5.23", ["--mamba-max-states-per-path", "4", "--enable-int8-mamba-checkpoint"], {}, []),
    # nvfp4-prefill-dequant (X089)
    ("0.5.23", ["--prefill-kv-cache-dequant-dtype", "fp8_e4m3"], {}, ["X089"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "triton"], {}, ["X089"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype", "fp8_e4m3",
                "--prefill-attention-backend", "trtllm_mha"], {}, ["X089"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--decode-attention-backend", "triton"], {}, ["X089"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype", "fp8_e4m3"], {}, []),
    # unified-memory-pool (X090)
    ("0.5.23", ["--enable-page-major-kv-layout"], {}, ["X090"]),
    ("0.5.23", [*UNIFIED, "--enable-two-batch-overlap"], {}, ["X029", "X090"]),
    ("0.5.23", [*UNIFIED, "--enable-lmcache"], {}, ["X090"]),
    # a draft tree (top-k > 1) is refused; a linear chain (top-k 1) is not
    ("0.5.23", [*UNIFIED, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"], {}, ["X090"]),
    ("0.5.23", [*UNIFIED, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"], {}, []),
    ("0.5.23", [*UNIFIED, "--speculative-algorithm", "DFLASH", "--attention-backend", "fa4"], {}, ["X010", "X090"]),
    ("0.5.23", [*UNIFIED, "--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl"], {},
     ["X090"]),
    ("0.5.23", [*UNIFIED, "--disaggregation-mode", "prefill"], {"SGLANG_DISABLE_LAZY_COMPACTION": "1"}, ["X090"]),
    ("0.5.23", ["--enable-unified-memory", "--attention-backend", "torch_native"], {}, ["X090"]),
    ("0.5.23", UNIFIED, {}, []),
    # kv-cache-sharding (X091)
    ("0.5.23", ["--enable-kv-cache-sharding"], {}, ["X091"]),
    ("0.5.23", [*SHARD, "--enable-flexkv"], {}, ["X091"]),
    # speculation: NGRAM/EAGLE3/... fail on any model; EAGLE top-k 1 depends on the checkpoint (GLM DSA)
    ("0.5.23", [*SHARD, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/m/d",
                "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"],
     {}, ["X091"]),
    ("0.5.23", [*SHARD, "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "/m/d",
                "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"],
     {}, []),
    # a prefill server with the fake backend: SGLang's PD handler asserts first (gserve's X287)
    ("0.5.23", [*SHARD, "--disaggregation-transfer-backend", "fake"], {}, ["X091", "X287"]),
    ("0.5.23", [*SHARD, "--chunked-prefill-size", "-1"], {}, ["X091"]),
    ("0.5.23", SHARD, {}, []),
    # hicache-config (X092)
    ("0.5.23", ["--hicache-host-memory-fraction", "1.5"], {}, ["X092"]),
    ("0.5.23", ["--enable-unified-cache-external-linker", "--hicache-storage-backend", "file"], {}, ["X092"]),
    ("0.5.23", ["--enable-hierarchical-cache", "--hicache-host-memory-mode", "buffer_only"], {}, ["X092"]),
    ("0.5.23", ["--disaggregation-mode", "decode", "--disaggregation-decode-host-receive-threshold", "0.5",
                "--hicache-storage-backend", "mooncake"], {}, ["X092"]),
    ("0.5.23", ["--enable-hierarchical-cache", "--dcp-size", "2", "--tp-size", "2", "--speculative-algorithm",
                "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                "--speculative-num-draft-tokens", "4"], {}, ["X092"]),
    ("0.5.23", ["--enable-hierarchical-cache", "--hicache-host-memory-mode", "buffer_only",
                "--hicache-storage-backend", "file"], {}, []),
    # hisparse-args (X264)
    ("0.5.23", ["--enable-hisparse"], {}, ["X264"]),
    ("0.5.23", ["--enable-hisparse", "--disable-radix-cache", "--enable-mixed-chunk"], {}, ["X264"]),
    ("0.5.23", ["--enable-hisparse", "--disable-radix-cache"], {}, []),
]
