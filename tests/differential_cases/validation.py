"""Generated cases of the gval rules (check_server_args, validate_buckets_rule, watermarks) against the real SGLang."""

from __future__ import annotations

from differential_cases import product_cases

BOTH = ("0.5.9", "0.5.23")
NEW = ("0.5.23",)
OLD = ("0.5.9",)

_BUCKETS = [None, ["default"], ["default", "4"], ["linear"], ["tse", "500", "2", "10"], ["tse", "500", "2"],
            ["tse", "500", "two", "10"], ["tse", "500", "1", "10"], ["tse", "500", "2", "0"], ["tse", "-1", "2", "3"],
            ["custom"], ["custom", "100", "1000"], ["custom", "10", "x"], ["custom", "10", "10.0"],
            ["custom", "10", "-5"]]

_WATERMARK = [None, '{"key": "0x1f"}', '{"key": "0x1f", "context_window": 65}', '{"key_b": "0x2"}',
              '{"key": "0x1", "key_b": "0x2", "mixing_probability": 1}', '{"key": "0x1", "mixing_probability": 0.4}',
              '{"max_probability": 0}', '{"enforce_all": true}', '{"key": "xyz"}', '{"colour": 1}', '{"key": 5}',
              '{"mixing_probability": "half"}']

CASES = [
    *product_cases("buckets-rule", BOTH, {}, {"--prompt-tokens-buckets": _BUCKETS}),
    *product_cases("buckets-rule", BOTH, {"--prompt-tokens-buckets": ["default"]},
                   {"--generation-tokens-buckets": [["custom", "10", "10"], ["tse", "100", "1.5", "4"]]}),
    *product_cases("server-arg-ranges", BOTH, {},
                   {"--base-gpu-id|--gpu-id-step": [(None, None), (-1, None), (None, 0), (1, 2)]}),
    *product_cases("server-arg-ranges", BOTH, {},
                   {"--tokenizer-worker-num|--skip-tokenizer-init": [(0, None), (0, True), (2, None)]}),
    *product_cases("server-arg-ranges", BOTH, {}, {"--schedule-conservativeness": [-0.5, 0.0]}),
    *product_cases("server-arg-ranges", BOTH, {}, {"--pp-max-micro-batch-size": [0]}),
    *product_cases("server-arg-ranges", NEW, {},
                   {"--detokenizer-worker-num|--mm-processor-worker-num|--mm-io-worker-num":
                    [(0, None, None), (None, -1, None), (None, None, -2), (2, 1, 0)]}),
    *product_cases("server-arg-ranges", NEW, {},
                   {"--gc-threshold": [["700", "10", "10", "5"], ["700", "10", "10"]]}),
    *product_cases("pdmux-compat", BOTH, {"--enable-pdmux": True},
                   {"--chunked-prefill-size": [-1, None, 4096], "--disable-overlap-schedule": [True, None],
                    "--pp-size": [None, 2], "--disaggregation-mode": [None, "prefill"]}),
    *product_cases("pp-mixed-chunk", OLD, {"--pp-size": 2},
                   {"--enable-mixed-chunk": [None, True], "--attention-backend": [None, "dual_chunk_flash_attn"]}),
    *product_cases("multi-item-scoring", OLD, {"--multi-item-scoring-delimiter": 5},
                   {"--disable-radix-cache": [None, True], "--chunked-prefill-size": [None, -1, 2048]}),
    *product_cases("priority-scheduling-policy", BOTH, {},
                   {"--enable-priority-scheduling": [None, True], "--schedule-policy": [None, "lof", "lpm", "random"]}),
    *product_cases("priority-scheduling-policy", NEW, {},
                   {"--enable-priority-scheduling": [None, True], "--retraction-policy": ["priority", "length"]}),
    *product_cases("metrics-args", BOTH, {},
                   {"--tokenizer-metrics-allowed-custom-labels": [None, ["team"]],
                    "--tokenizer-metrics-custom-labels-header": [None, "", "x-team"]}),
    *product_cases("metrics-args", BOTH, {"--export-metrics-to-file": True},
                   {"--export-metrics-to-file-dir": [None, "/tmp/gen-differential-metrics"]}),
    *product_cases("quant-communications", NEW, {},
                   {"--enable-quant-communications": [None, True], "--tp-size": [None, 2]}),
    *product_cases("cuda-graph-padding-compile", NEW, {},
                   {"--disable-cuda-graph-padding": [None, True], "--enable-torch-compile": [None, True]}),
    *product_cases("grpc-port-clash", NEW, {},
                   {"--grpc-port": [None, 30000, 30001], "--smg-grpc-mode": [None, True]}),
    *product_cases("grpc-port-clash", NEW, {"--port": 8000}, {"--grpc-port": [None]}, env={"SGLANG_GRPC_PORT": "8000"}),
    *product_cases("kv-canary-sweep", NEW, {},
                   {"--kv-canary-sweep-interval": [None, 10], "--kv-canary": [None, "log"]}),
    *product_cases("watermark-args", NEW, {},
                   {"--enable-watermark": [None, True], "--watermark-config": _WATERMARK}),
    *product_cases("watermark-args", NEW, {"--enable-watermark": True},
                   {"--enable-custom-logit-processor|--dllm-algorithm|--disaggregation-mode|--speculative-algorithm|"
                    "--speculative-use-rejection-sampling":
                    [(True, None, None, None, None), (None, "LowConfidence", None, None, None),
                     (None, None, "prefill", None, None), (None, None, None, "STANDALONE", None),
                     (None, None, None, None, True)]}),
    # --sampling-backend outside SGLang's built-in backends: argparse's choices refuse it first (F003)
    *product_cases("flag-check", NEW, {"--enable-watermark": True}, {"--sampling-backend": ["my_sampler"]}),
]
