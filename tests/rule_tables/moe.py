"""Unit rows of the gmoe rules (MoE kernels, all-to-all, mega-MoE, expert packs, small hooks)."""

from __future__ import annotations

from rule_tables import Row

A2A_FI = ["--moe-a2a-backend", "flashinfer", "--tp-size", "2", "--attn-dp-size", "2"]
SPEC = ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "/m/d", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]

FI_RUNNER = ["--moe-a2a-backend", "flashinfer", "--moe-runner-backend", "flashinfer_cutlass"]
ROWS: list[Row] = [
    # moe-runner-quant (X059)
    ("0.5.9", ["--moe-runner-backend", "flashinfer_cutlass", "--quantization", "fp8"], {}, ["X059"]),
    ("0.5.9", ["--moe-runner-backend", "flashinfer_cutlass", "--quantization", "modelopt_fp8"], {}, []),
    ("0.5.9", ["--quantization", "mxfp8", "--tp-size", "2", "--ep-size", "2"], {}, ["X059"]),
    ("0.5.9", ["--quantization", "fp8", "--tp-size", "2", "--ep-size", "2"], {}, []),
    ("0.5.9", ["--quantization", "awq"], {"SGLANG_CUTLASS_MOE": "1"}, ["X059"]),
    ("0.5.23", ["--moe-runner-backend", "flashinfer_cutlass", "--tp-size", "4", "--ep-size", "2"], {}, ["X059"]),
    ("0.5.23", ["--moe-runner-backend", "flashinfer_cutlass", "--tp-size", "4", "--ep-size", "4"], {}, []),
    ("0.5.23", ["--moe-runner-backend", "flashinfer_trtllm_routed", "--quantization", "awq"], {}, ["X059"]),
    ("0.5.23", ["--moe-runner-backend", "cutlass", "--quantization", "fp8", "--tp-size", "2", "--ep-size", "2"], {},
     ["X059"]),
    ("0.5.23", ["--quantization", "mxfp8", "--tp-size", "2", "--ep-size", "2"], {}, []),
    ("0.5.23", ["--moe-runner-backend", "flashinfer_cutedsl", "--quantization", "modelopt_fp4",
                "--moe-a2a-backend", "mooncake"], {}, ["X059"]),
    # moe-a2a-backend (X060)
    ("0.5.9", ["--moe-a2a-backend", "flashinfer", "--tp-size", "2"], {}, ["X060"]),
    ("0.5.9", ["--moe-a2a-backend", "flashinfer", "--tp-size", "2", "--moe-runner-backend", "flashinfer_cutlass"], {},
     []),
    ("0.5.23", ["--flashinfer-a2a-dispatch-type", "bf16"], {}, ["X060"]),
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "triton"], {}, ["X060"]),
    ("0.5.23", [*A2A_FI], {}, ["X060"]),
    ("0.5.23", [*A2A_FI, "--quantization", "modelopt_fp4"], {}, []),  # SM120 resolves auto to flashinfer_cutlass
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "flashinfer_cutlass", "--flashinfer-a2a-dispatch-type", "bf16"], {},
     []),
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "flashinfer_cutlass", "--flashinfer-a2a-dispatch-type", "bf16"],
     {"SGLANG_MOE_NVFP4_DISPATCH": "0"}, ["X060"]),
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "flashinfer_cutlass", "--flashinfer-a2a-dispatch-type", "mxfp8"], {},
     ["X060"]),
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "flashinfer_trtllm", "--quantization", "mxfp8",
                "--flashinfer-a2a-dispatch-type", "mxfp8"], {}, []),
    ("0.5.23", ["--moe-a2a-backend", "pplx", "--tp-size", "2"], {}, ["X060"]),
    ("0.5.23", ["--moe-a2a-backend", "pplx", "--tp-size", "2", "--attn-dp-size", "2"], {}, []),
    ("0.5.23", ["--moe-a2a-backend", "deepep", "--tp-size", "2", "--moe-runner-backend", "flashinfer_cutedsl",
                "--quantization", "modelopt_fp4", "--deepep-mode", "normal"], {}, ["X060"]),
    ("0.5.23", ["--moe-a2a-backend", "deepep_v2", "--tp-size", "2", "--moe-runner-backend", "triton"], {}, ["X060"]),
    ("0.5.23", ["--moe-a2a-backend", "deepep_v2", "--tp-size", "2"], {}, []),
    # deepep-v2-draft (X061)
    ("0.5.23", ["--speculative-moe-a2a-backend", "deepep_v2"], {}, ["X061"]),
    ("0.5.23", ["--speculative-moe-a2a-backend", "deepep"], {}, []),
    # flashinfer-a2a-chunked-prefill (X062)
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "flashinfer_cutlass", "--chunked-prefill-size", "-1"], {}, ["X062"]),
    ("0.5.23", [*A2A_FI, "--moe-runner-backend", "flashinfer_cutlass", "--chunked-prefill-size", "-1",
                "--disaggregation-mode", "decode"], {}, []),
    # megamoe-no-overlap (X063)
    ("0.5.23", ["--moe-runner-backend", "megamoe", "--enable-single-batch-overlap"], {}, ["X063"]),
    ("0.5.23", ["--moe-runner-backend", "megamoe"], {}, []),
    # megamoe-chunked-prefill (X237)
    ("0.5.23", ["--moe-a2a-backend", "megamoe", "--quantization", "modelopt_fp4", "--chunked-prefill-size", "-1"], {},
     ["X237"]),
    ("0.5.23", ["--moe-a2a-backend", "megamoe", "--quantization", "modelopt_fp4", "--tp-size", "4", "--attn-dp-size", "4",
                "--chunked-prefill-size", "2"], {}, ["X237"]),
    ("0.5.23", ["--moe-a2a-backend", "megamoe", "--quantization", "modelopt_fp4", "--chunked-prefill-size", "-1",
                "--disaggregation-mode", "decode"], {}, []),
    ("0.5.23", ["--moe-a2a-backend", "megamoe", "--chunked-prefill-size", "-1"], {}, []),
    # expert-pack-args (X064)
    ("0.5.23", ["--load-format", "expert_pack", "--tp-size", "2"], {}, ["X064"]),
    ("0.5.23", ["--load-format", "expert_pack"], {}, []),
    # aux-hidden-state-capture (X065)
    ("0.5.23", ["--return-aux-hidden-state-layer-ids", "1", "2"], {}, ["X065"]),
    ("0.5.23", ["--enable-return-aux-hidden-states", "--speculative-algorithm", "DFLASH",
                "--return-aux-hidden-state-layer-ids", "1", "1"], {}, ["X065"]),
    ("0.5.23", ["--enable-return-aux-hidden-states", "--speculative-algorithm", "DFLASH",
                "--return-aux-hidden-state-layer-ids", "0", "1"], {}, []),
    # pp-compat (X066)
    ("0.5.23", ["--pp-size", "2", "--min-free-slots-delay", "3"], {}, ["X066"]),
    ("0.5.23", ["--pp-size", "2", *SPEC], {}, ["X066"]),
    ("0.5.23", ["--pp-size", "2", *SPEC, "--disaggregation-mode", "prefill"], {}, []),
    ("0.5.23", ["--pp-size", "2", *SPEC, "--speculative-adaptive"], {"SGLANG_ENABLE_PP_SPEC": "1"}, ["X066"]),
    # load-publish-endpoint (X067)
    ("0.5.23", ["--load-publish-endpoint", "auto"], {}, ["X067"]),
    ("0.5.23", ["--load-publish-endpoint", "auto", "--kv-events-config", '{"publisher": "zmq"}'], {}, []),
    ("0.5.23", ["--load-publish-endpoint", "tcp://*:5557", "--kv-events-config", '{"publisher": "zmq"}'], {},
     ["X067"]),
    # ib-devices-value (X068)
    ("0.5.23", ["--disaggregation-mode", "prefill", "--disaggregation-ib-device", ","], {}, ["X068"]),
    ("0.5.23", ["--disaggregation-mode", "prefill", "--disaggregation-ib-device", "mlx5_0"], {}, []),
    # prefill-decode-interval (X069), sampling-mask-max-tokens (X070), response-store-pd (X071)
    ("0.5.23", ["--prefill-decode-interval", "-1"], {}, ["X069"]),
    ("0.5.23", ["--prefill-decode-interval", "0"], {}, []),
    ("0.5.23", ["--sampling-mask-max-tokens", "0"], {}, ["X070"]),
    ("0.5.23", ["--sampling-mask-max-tokens", "1"], {}, []),
    ("0.5.23", ["--enable-response-store", "--disaggregation-mode", "decode"], {}, ["X071"]),
    ("0.5.23", ["--enable-response-store"], {}, []),
    # sampling-backend-xpu (X232), ple-offload (X233)
    ("0.5.23", ["--sampling-backend", "intel_xpu"], {}, ["X232"]),
    ("0.5.23", ["--sampling-backend", "intel_xpu", "--device", "xpu"], {}, []),
    ("0.5.23", ["--ple-offload-embedding", "--cpu-offload-gb", "1"], {}, ["X233"]),
    ("0.5.23", ["--ple-offload-backend", "file", "--no-ple-offload-embedding"], {}, ["X233"]),
    ("0.5.23", ["--ple-offload-backend", "file"], {}, []),
    # language-model-only-combo (X234), weight-cache-spec (X235), cuda-graph-config-values (X236)
    ("0.5.23", ["--language-model-only", "--language-only"], {}, ["X234"]),
    ("0.5.23", ["--language-model-only"], {}, []),
    ("0.5.23", ["--weight-cache-mode", "client", "--speculative-algorithm", "NGRAM"], {}, ["X235"]),
    ("0.5.23", ["--weight-cache-mode", "client"], {}, []),
    ("0.5.23", ["--cuda-graph-prefill-max-context", "0"], {}, ["X236"]),
    ("0.5.23", ["--cuda-graph-config", '{"prefill": {"backend": "bogus"}}'], {}, ["X236"]),
    ("0.5.23", ["--cuda-graph-config", '{"prefill": {"backend": "full"}}'], {}, []),
    # flashinfer-a2a-topology (X238)
    ("0.5.23", FI_RUNNER + ["--tp-size", "4", "--attn-dp-size", "4"], {}, []),
    ("0.5.23", FI_RUNNER + ["--tp-size", "4", "--attn-dp-size", "2"], {}, ["X238"]),
    ("0.5.23", FI_RUNNER + ["--tp-size", "4"], {}, ["X238"]),
    ("0.5.23", FI_RUNNER + ["--tp-size", "4", "--enable-layernorm-sp"], {}, []),
]
