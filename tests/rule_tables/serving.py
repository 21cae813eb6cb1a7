"""Unit rows of group gserve: serving options, PD/encoder disaggregation, attention backends."""

from __future__ import annotations

from rule_tables import Row

NEW = "0.5.23"
OLD = "0.5.9"
DECODE = ["--disaggregation-mode", "decode"]
SSL = ["--ssl-certfile", "/c.pem", "--ssl-keyfile", "/k.pem"]

ROWS: list[Row] = [
    # X093 grpc-sidecar-args: handle_deprecated_args, in SGLang's order
    (NEW, ["--grpc-port", "50051"], {}, []),
    (NEW, ["--grpc-response-timeout-secs", "0"], {}, ["X093"]),
    (NEW, ["--grpc-port", "70000"], {}, ["X093"]),
    (NEW, [], {"SGLANG_GRPC_PORT": "0"}, ["X093"]),
    (NEW, ["--grpc-port", "50051"], {"SGLANG_GRPC_WORKER_THREADS": "0"}, ["X093"]),
    (NEW, [], {"SGLANG_GRPC_WORKER_THREADS": "0"}, []),  # read only with a gRPC port
    (NEW, ["--sidecar-args", '["-v"]'], {}, ["X093"]),
    (NEW, ["--sidecar", "tool", "--grpc-port", "50051", "--sidecar-args", '[1, 2]'], {}, ["X093"]),
    (NEW, ["--sidecar", "tool", "--grpc-port", "50051", "--sidecar-args", '["-v"]'], {}, []),
    (NEW, ["--sidecar", " ", "--grpc-port", "50051"], {}, ["X093"]),
    (NEW, ["--sidecar", "tool", "--smg-grpc-mode"], {}, ["X093"]),
    (NEW, ["--sidecar", "tool"], {}, ["X093"]),
    (NEW, ["--grpc-port", "50051", "--use-ray"], {}, ["X093"]),
    (NEW, ["--grpc-port", "50051", "--encoder-only"], {}, ["X093"]),
    (NEW, ["--grpc-port", "50051", "--tokenizer-worker-num", "2"], {}, ["X093"]),
    (NEW, ["--grpc-port", "50051", "--api-key", "k"], {}, ["X093"]),
    (NEW, ["--grpc-port", "50051", "--smg-grpc-mode", "--api-key", "k"], {}, []),  # legacy server: allowed
    (NEW, ["--grpc-mode", "--port", "60000"], {}, ["X093"]),  # legacy port = port + 10000
    # X094 fast-image-processor-conflict
    (NEW, ["--disable-fast-image-processor", "--image-processor-backend", "torchvision"], {}, ["X094"]),
    (NEW, ["--disable-fast-image-processor", "--image-processor-backend", "pil"], {}, []),
    (NEW, ["--disable-fast-image-processor"], {}, []),
    # X095 ssl-http2-args
    (NEW, SSL, {}, []),
    (NEW, ["--ssl-keyfile", "/k.pem"], {}, ["X095"]),
    (NEW, ["--ssl-certfile", "/c.pem"], {}, ["X095"]),
    (NEW, ["--ssl-ca-certs", "/ca.pem"], {}, ["X095"]),
    (NEW, ["--ssl-keyfile-password", "pw"], {}, ["X095"]),
    (NEW, ["--enable-ssl-refresh"], {}, ["X095"]),
    (NEW, SSL + ["--enable-ssl-refresh"], {}, []),
    (NEW, ["--enable-http-worker-reuseport"], {}, ["X095"]),
    (NEW, ["--enable-http-worker-reuseport", "--tokenizer-worker-num", "2"], {}, []),
    (NEW, ["--enable-http2", "--http2-max-concurrent-streams", "0"], {}, ["X095"]),
    (NEW, ["--enable-http2", "--http2-initial-connection-window-size", "100"], {}, ["X095"]),
    (NEW, ["--http2-initial-connection-window-size", "100"], {}, []),
    (NEW, SSL + ["--enable-http2", "--enable-ssl-refresh"], {}, ["X095"]),
    # X096 asr-positive
    (NEW, ["--asr-max-buffer-seconds", "0"], {}, ["X096"]),
    (NEW, ["--asr-max-concurrent-sessions", "-1"], {}, ["X096"]),
    (NEW, ["--asr-max-buffer-seconds", "30"], {}, []),
    # X097 mm-process-config
    (NEW, ["--mm-preprocess-cache-size-mb", "-1"], {}, ["X097"]),
    (NEW, ["--mm-preprocess-cache-size-mb", "0"], {}, []),
    (NEW, ["--mm-process-config", "[1]"], {}, ["X097"]),
    (NEW, ["--mm-process-config", '{"image": 3}'], {}, ["X097"]),
    (NEW, ["--mm-process-config", '{"image": {"max_pixels": 100}}'], {}, []),
    # X098 serving-json-values
    (NEW, ["--default-chat-template-kwargs", "[1]"], {}, ["X098"]),
    (NEW, ["--default-chat-template-kwargs", '{"enable_thinking": false}'], {}, []),
    (NEW, ["--limit-mm-data-per-request", '{"picture": 1}'], {}, ["X098"]),
    (OLD, ["--limit-mm-data-per-request", '{"picture": 1}'], {}, ["X098"]),
    (OLD, ["--limit-mm-data-per-request", '{"image": 2}'], {}, []),
    (NEW, ["--preferred-sampling-params", '{"watermark": {}}'], {}, ["X098"]),
    (NEW, ["--preferred-sampling-params", '{"temperature": 0.6}'], {}, []),
    # X099 tokenizer-batching
    (OLD, ["--enable-tokenizer-batch-encode", "--enable-dynamic-batch-tokenizer"], {}, ["X099"]),
    (NEW, ["--enable-tokenizer-batch-encode", "--enable-dynamic-batch-tokenizer"], {}, ["X099"]),
    (NEW, ["--enable-dynamic-batch-tokenizer"], {}, []),
    # X284 mm-feature-transport
    (NEW, ["--mm-feature-transport", "cuda_ipc", "--nnodes", "2", "--tp-size", "2", "--dist-init-addr", "h:5000"], {}, ["X284"]),
    (NEW, ["--mm-feature-transport", "cuda_vmm", "--pp-size", "2"], {}, ["X284"]),
    (NEW, ["--mm-feature-transport", "cuda_vmm", "--pp-size", "2", "--encoder-only"], {}, []),
    (NEW, ["--nnodes", "2", "--tp-size", "2", "--dist-init-addr", "h:5000"], {"SGLANG_USE_CUDA_IPC_TRANSPORT": "1"}, ["X284"]),
    (NEW, ["--mm-feature-transport", "cpu", "--nnodes", "2", "--tp-size", "2", "--dist-init-addr", "h:5000"], {"SGLANG_USE_CUDA_IPC_TRANSPORT": "1"}, []),
    # X285 encoder-disagg
    (OLD, ["--enable-prefix-mm-cache"], {}, ["X285"]),
    (NEW, ["--enable-prefix-mm-cache", "--encoder-only"], {}, []),
    (NEW, ["--encoder-only", "--language-only"], {}, ["X285"]),
    (OLD, ["--encoder-only", "--disaggregation-mode", "prefill"], {}, ["X285"]),
    (OLD, ["--language-only"], {}, ["X285"]),
    (OLD, ["--language-only", "--encoder-urls", "http://e:1"], {}, []),
    (NEW, ["--language-only"], {}, []),
    # X286 pd-decode-tp-dp
    (OLD, ["--disaggregation-mode", "decode", "--disaggregation-decode-tp", "2"], {}, ["X286"]),
    (OLD, ["--disaggregation-mode", "decode", "--disaggregation-decode-dp", "2"], {}, ["X286"]),
    (OLD, ["--disaggregation-mode", "prefill", "--disaggregation-decode-tp", "2"], {}, []),
    # X287 pd-disagg-args
    (NEW, ["--disaggregation-decode-host-receive-threshold", "1.5"], {}, ["X287"]),
    # below 1 SGLang sets the retraction backup to host_pool, which only a decode server takes (X085)
    (NEW, [*DECODE, "--disaggregation-decode-host-receive-threshold", "0.5", "--enable-pd-role-switch"], {},
     ["X287"]),
    (NEW, [*DECODE, "--disaggregation-decode-host-receive-threshold", "0.5",
           "--disaggregation-decode-retraction-backup", "cpu_tensor"], {}, ["X287"]),
    (NEW, [*DECODE, "--disaggregation-decode-host-receive-threshold", "0.5"], {}, []),
    # (gkv's X264 refuses HiSparse with a radix cache too)
    (NEW, ["--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache", "--enable-hisparse"],
     {}, ["X264", "X287"]),
    (NEW, ["--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache",
           "--disaggregation-transfer-backend", "fake"], {}, ["X287"]),
    (NEW, ["--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "fake"], {}, []),
    (NEW, ["--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "fake"], {}, ["X287"]),
    (NEW, ["--disaggregation-mode", "prefill", "--enable-pd-role-switch", "--pp-size", "2"], {}, ["X287"]),
    (NEW, ["--disaggregation-mode", "prefill", "--enable-pd-role-switch"], {}, []),
    # X288 prefill-complete
    (NEW, ["--disaggregation-decode-allocation-policy", "prefill_complete"], {}, ["X288"]),
    (NEW, ["--disaggregation-decode-allocation-policy", "prefill_complete", "--disaggregation-mode", "prefill"],
     {}, []),
    (NEW, ["--disaggregation-decode-allocation-policy", "prefill_complete", "--disaggregation-mode", "prefill",
           "--tp-size", "2"], {}, ["X288"]),  # attention TP > 1 alone
    (NEW, ["--disaggregation-decode-allocation-policy", "prefill_complete", "--disaggregation-mode", "decode"],
     {"SGLANG_RUST_SERVER": "1"}, ["X288"]),
    (NEW, ["--disaggregation-decode-allocation-policy", "prefill_complete", "--disaggregation-mode", "prefill",
           "--optimistic-prefill-attempts", "-1"], {}, ["X288"]),
    # X289 linear-replayssm
    (NEW, ["--linear-attn-decode-backend", "flashkda"], {}, ["X289"]),
    (NEW, ["--linear-attn-backend", "flashkda", "--enable-linear-replayssm"], {}, []),  # decode falls back to triton
    (NEW, ["--enable-linear-replayssm", "--linear-attn-decode-backend", "flashinfer"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm", "--mamba-radix-cache-strategy", "extra_buffer"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm", "--mamba-radix-cache-strategy", "extra_buffer", "--disable-radix-cache"],
     {}, []),
    (NEW, ["--enable-linear-replayssm", "--disaggregation-mode", "decode"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm", "--linear-replayssm-cache-len", "0"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm-spec", "--speculative-eagle-topk", "4"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm-spec", "--linear-attn-backend", "helion"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm-spec", "--disaggregation-mode", "prefill"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm-spec", "--enable-linear-replayssm"], {}, ["X289"]),
    (NEW, ["--enable-linear-replayssm-spec"], {}, []),
    # X290 mis-flashinfer
    (NEW, ["--enable-mis", "--attention-backend", "fa3"], {}, ["X290"]),
    (NEW, ["--enable-mis", "--attention-backend", "flashinfer", "--decode-attention-backend", "triton"], {}, ["X290"]),
    (NEW, ["--enable-mis", "--attention-backend", "flashinfer"], {}, []),
    # X291 deterministic-attn-backend
    (OLD, ["--enable-deterministic-inference", "--attention-backend", "fa4"], {}, ["X291"]),
    (NEW, ["--enable-deterministic-inference", "--attention-backend", "fa4"], {}, []),
    (NEW, ["--rl-on-policy-target", "fsdp", "--attention-backend", "torch_native"], {}, ["X291"]),
    (OLD, ["--enable-deterministic-inference"], {}, []),
    # X292 trtllm-mla-kv-dtype
    (OLD, ["--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp8_e5m2"], {}, ["X292"]),
    (OLD, ["--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp4_e2m1"], {}, []),
    (NEW, ["--decode-attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp4_mx_block16"], {}, ["X292"]),
    (NEW, ["--attention-backend", "trtllm_mla", "--kv-cache-dtype", "fp8_e4m3"], {}, []),
    # X293 cutedsl-mla
    (NEW, ["--prefill-attention-backend", "cutedsl_mla"], {}, ["X293"]),
    (NEW, ["--prefill-attention-backend", "tokenspeed_mla"], {}, ["X160"]),  # renamed to trtllm_mla for prefill
    (NEW, ["--attention-backend", "cutedsl_mla", "--kv-cache-dtype", "fp8_e5m2"], {}, ["X293"]),
    (NEW, ["--attention-backend", "tokenspeed_mla", "--kv-cache-dtype", "fp8_e5m2"], {}, ["X160"]),  # SGLang sets fp8
    # X294 nvfp4-online-moe-runner
    (NEW, ["--quantization", "nvfp4_online", "--moe-runner-backend", "triton"], {}, ["X294"]),
    (NEW, ["--quantization", "nvfp4_online", "--moe-runner-backend", "flashinfer_cutedsl"], {}, []),
    (NEW, ["--quantization", "nvfp4_online", "--moe-runner-backend", "flashinfer_megamoe"], {}, ["X294"]),
    # X294 quiet; MegaMOE itself still needs --attn-dp-size equal to --tp-size (gmoe's X060)
    (NEW, ["--quantization", "nvfp4_online", "--moe-runner-backend", "flashinfer_megamoe",
           "--moe-a2a-backend", "flashinfer_megamoe"], {"SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16": "1"}, ["X060"]),
    (NEW, ["--quantization", "nvfp4_online", "--moe-runner-backend", "flashinfer_megamoe",
           "--moe-a2a-backend", "flashinfer_megamoe", "--tp-size", "2", "--attn-dp-size", "2"],
     {"SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16": "1"}, []),
]

ROWS += [
    # X160 deprecated-choice-alias
    (OLD, ["--tool-call-parser", "qwen25"], {}, ["X160"]),
    (NEW, ["--tool-call-parser", "glm45", "--attention-backend", "compressed"], {}, ["X160"]),
    (NEW, ["--tool-call-parser", "glm"], {}, []),
    # X161 mis-backend-auto (and the error rule once a phase is written)
    (NEW, ["--enable-mis"], {}, ["X161"]),
    (NEW, ["--enable-mis", "--prefill-attention-backend", "flashinfer"], {}, ["X161"]),
    (NEW, ["--enable-mis", "--attention-backend", "flashinfer"], {}, []),
]
