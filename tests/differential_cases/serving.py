"""Generated cases of group gserve: serving options, PD/encoder disaggregation, attention backends."""

from __future__ import annotations

from differential_cases import WordCase, product_cases

BOTH = ("0.5.9", "0.5.23")
NEW = ("0.5.23",)
MULTI = {"--tp-size": 2, "--nnodes": 2, "--node-rank": 0, "--dist-init-addr": "127.0.0.1:29500"}

CASES: list[WordCase] = [
    *product_cases("grpc-sidecar-args", NEW, {}, {
        "--grpc-port": [None, 50051, 70000],
        "--sidecar|--sidecar-args": [(None, None), ("tool", None), (None, '["-v"]'), ("tool", "[1]"), (" ", None)],
    }),
    *product_cases("grpc-sidecar-args", NEW, {"--grpc-port": 50051}, {
        "--use-ray|--encoder-only|--tokenizer-worker-num|--api-key": [
            (True, None, None, None), (None, True, None, None), (None, None, 2, None), (None, None, None, "k")],
        "--smg-grpc-mode": [None, True],
    }),
    *product_cases("grpc-sidecar-args", NEW, {}, {"--grpc-response-timeout-secs": [0, 30]}),
    *product_cases("grpc-sidecar-args", NEW, {"--grpc-port": 50051}, {"--sidecar": [None]},
                   env={"SGLANG_GRPC_WORKER_THREADS": "0"}),
    *product_cases("fast-image-processor-conflict", NEW, {}, {
        "--disable-fast-image-processor": [None, True],
        "--image-processor-backend": [None, "torchvision", "pil"]}),
    *product_cases("ssl-http2-args", NEW, {}, {
        "--ssl-certfile|--ssl-keyfile": [(None, None), ("/nonexistent/c.pem", None), (None, "/nonexistent/k.pem")],
        "--ssl-ca-certs|--ssl-keyfile-password|--enable-ssl-refresh": [
            (None, None, None), ("/nonexistent/ca.pem", None, None), (None, "pw", None), (None, None, True)]}),
    *product_cases("ssl-http2-args", NEW, {}, {
        "--enable-http-worker-reuseport|--tokenizer-worker-num": [(None, None), (True, None), (True, 2)],
        "--enable-http2": [None, True]}),
    *product_cases("ssl-http2-args", NEW, {"--enable-http2": True}, {
        "--http2-max-concurrent-streams|--http2-initial-connection-window-size": [(0, None), (None, 100)]}),
    *product_cases("asr-positive", NEW, {}, {
        "--asr-max-buffer-seconds": [None, 0, 30], "--asr-max-concurrent-sessions": [None, -1]}),
    *product_cases("mm-process-config", NEW, {}, {
        "--mm-preprocess-cache-size-mb": [None, -1, 0],
        "--mm-process-config": [None, "[1]", '{"image": 3}', '{"image": {"max_pixels": 100}}']}),
    *product_cases("serving-json-values", NEW, {}, {
        "--default-chat-template-kwargs": [None, "[1]", '{"enable_thinking": false}'],
        "--preferred-sampling-params": [None, '{"watermark": {}}', '{"temperature": 0.6}']}),
    *product_cases("serving-json-values", BOTH, {}, {
        "--limit-mm-data-per-request": [None, '{"picture": 1}', '{"image": 2}']}),
    *product_cases("tokenizer-batching", BOTH, {}, {
        "--enable-tokenizer-batch-encode": [None, True], "--enable-dynamic-batch-tokenizer": [None, True]}),
    *product_cases("mm-feature-transport", NEW, {}, {
        "--mm-feature-transport": [None, "cpu", "cuda_ipc", "cuda_vmm"],
        "--pp-size": [None, 2]}),
    *product_cases("mm-feature-transport", NEW, MULTI, {"--mm-feature-transport": [None, "cpu", "cuda_ipc"]}),
    *product_cases("encoder-disagg", BOTH, {}, {
        "--enable-prefix-mm-cache": [None, True],
        "--encoder-only|--language-only|--encoder-urls": [
            (None, None, None), (True, None, None), (True, True, None), (None, True, None),
            (None, True, ["http://127.0.0.1:1"])]}),
    *product_cases("encoder-disagg", BOTH, {"--encoder-only": True}, {
        "--disaggregation-mode": ["prefill", None]}),
    *product_cases("pd-decode-tp-dp", ("0.5.9",), {}, {
        "--disaggregation-mode": ["decode", "prefill"],
        "--disaggregation-decode-tp|--disaggregation-decode-dp": [(None, None), (1, None), (None, 1)]}),
    # decode mode: SGLang turns the retraction backup into host_pool below 1, which only a
    # decode server takes (kv_cache_hook); --enable-hisparse needs a DSA model, so role switch
    *product_cases("pd-disagg-args", NEW, {"--disaggregation-mode": "decode"}, {
        "--disaggregation-decode-host-receive-threshold": [None, 1.5, 0.5],
        "--enable-pd-role-switch|--disaggregation-decode-retraction-backup": [
            (None, None), (True, None), (None, "cpu_tensor")]}),
    *product_cases("pd-disagg-args", NEW, {"--disaggregation-mode": "decode"}, {
        "--disaggregation-decode-enable-radix-cache": [None, True],
        "--disaggregation-transfer-backend": [None, "fake"]}),
    *product_cases("pd-disagg-args", NEW, {"--disaggregation-transfer-backend": "fake"}, {
        "--disaggregation-mode": ["prefill", "decode"]}),
    *product_cases("pd-disagg-args", NEW, {"--disaggregation-mode": "prefill"}, {
        "--enable-pd-role-switch": [None, True], "--pp-size": [None, 2]}),
    *product_cases("prefill-complete", NEW, {"--disaggregation-decode-allocation-policy": "prefill_complete"}, {
        "--disaggregation-mode": [None, "prefill", "decode"],
        "--optimistic-prefill-attempts": [None, -1]}),
    *product_cases("prefill-complete", NEW, {"--disaggregation-decode-allocation-policy": "prefill_complete",
                                             "--disaggregation-mode": "decode"}, {"--tp-size": [None]},
                   env={"SGLANG_RUST_SERVER": "1"}),
    # attention TP: SGLang counts DP attention from the deprecated switch, already folded
    # into --attn-dp-size, so every TP > 1 is refused
    *product_cases("prefill-complete", NEW, {"--disaggregation-decode-allocation-policy": "prefill_complete",
                                             "--disaggregation-mode": "prefill", "--tp-size": 2}, {
        "--attn-dp-size|--dp-size|--enable-dp-attention": [(None, None, None), (2, None, None), (None, 2, True)]}),
    *product_cases("linear-replayssm", NEW, {}, {
        "--linear-attn-backend|--linear-attn-decode-backend": [
            (None, None), (None, "flashkda"), ("flashkda", None), (None, "flashinfer"), ("helion", None)],
        "--enable-linear-replayssm|--enable-linear-replayssm-spec": [(None, None), (True, None), (None, True), (True, True)]}),
    *product_cases("linear-replayssm", NEW, {"--enable-linear-replayssm": True}, {
        "--mamba-radix-cache-strategy|--disable-radix-cache": [(None, None), ("extra_buffer", None), ("extra_buffer", True)],
        "--disaggregation-mode|--linear-replayssm-cache-len": [(None, None), ("decode", None), (None, 0)]}),
    *product_cases("linear-replayssm", NEW, {"--enable-linear-replayssm-spec": True}, {
        "--speculative-eagle-topk|--disaggregation-mode": [(None, "prefill"), (4, None)]}),
    *product_cases("mis-flashinfer", NEW, {}, {
        "--enable-mis": [None, True],
        "--attention-backend|--decode-attention-backend": [(None, None), ("fa3", None), ("flashinfer", None),
                                                            ("flashinfer", "triton")]}),
    *product_cases("deterministic-attn-backend", BOTH, {}, {
        "--enable-deterministic-inference": [None, True],
        "--attention-backend": [None, "triton", "fa3", "fa4", "torch_native", "flex_attention"]}),
    *product_cases("deterministic-attn-backend", BOTH, {"--rl-on-policy-target": "fsdp"}, {
        "--attention-backend": ["torch_native", "triton"]}),
    *product_cases("trtllm-mla-kv-dtype", BOTH, {}, {
        "--attention-backend": [None, "trtllm_mla"], "--kv-cache-dtype": [None, "fp8_e5m2"]}),
    *product_cases("cutedsl-mla", NEW, {}, {
        "--attention-backend|--prefill-attention-backend": [(None, None), (None, "cutedsl_mla"), (None, "tokenspeed_mla"),
                                                            ("cutedsl_mla", None), ("triton", "cutedsl_mla")],
        "--kv-cache-dtype": [None, "fp8_e5m2"]}),
    *product_cases("nvfp4-online-moe-runner", NEW, {}, {
        "--quantization": [None, "nvfp4_online"], "--moe-runner-backend": [None, "triton"]}),
    # flag-check waivers: values outside argparse choices (F003 in gen, SystemExit in SGLang)
    WordCase("flag-check", "gserve-flag-check[--disaggregation-mode=encode]", BOTH,
             (("--disaggregation-mode", "encode"),)),
    WordCase("flag-check", "gserve-flag-check[--return-hidden-states-mode=all]", NEW,
             (("--return-hidden-states-mode", "all"),)),
    WordCase("flag-check", "gserve-flag-check[--disaggregation-transfer-backend=tcp]", NEW,
             (("--disaggregation-mode", "decode"), ("--dcp-size", 2), ("--disaggregation-transfer-backend", "tcp"))),
]
