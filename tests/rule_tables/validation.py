"""Unit rows of the gval rules: SGLang's check_server_args, validate_buckets_rule and watermark checks."""

from __future__ import annotations

from rule_tables import Row

B = "--prompt-tokens-buckets"
G = "--generation-tokens-buckets"
WM = "--enable-watermark"
WC = "--watermark-config"

ROWS: list[Row] = [
    # buckets-rule (X033): validate_buckets_rule, prompt buckets first
    ("0.5.9", [B, "default"], {}, []),
    ("0.5.23", [B, "tse", "500", "2", "10"], {}, []),
    ("0.5.23", [B, "custom", "100", "1000", "0"], {}, []),
    ("0.5.9", [B, "linear"], {}, ["X033"]),
    ("0.5.23", [G, "default", "4"], {}, ["X033"]),
    ("0.5.9", [B, "tse", "500", "2"], {}, ["X033"]),
    ("0.5.23", [B, "tse", "500", "two", "10"], {}, ["X033"]),
    ("0.5.9", [B, "tse", "500", "1", "10"], {}, ["X033"]),
    ("0.5.23", [B, "tse", "500", "2", "0"], {}, ["X033"]),
    ("0.5.9", [B, "tse", "-1", "2", "3"], {}, ["X033"]),
    ("0.5.23", [B, "tse", "500", "2", "3.0"], {}, ["X033"]),  # int('3.0') fails in SGLang too
    ("0.5.9", [B, "custom"], {}, ["X033"]),
    ("0.5.23", [G, "custom", "10", "x"], {}, ["X033"]),
    ("0.5.9", [B, "custom", "10", "10.0"], {}, ["X033"]),
    ("0.5.23", [B, "custom", "10", "-5"], {}, ["X033"]),
    # server-arg-ranges (X034)
    ("0.5.9", ["--base-gpu-id", "0", "--gpu-id-step", "2", "--tokenizer-worker-num", "2"], {}, []),
    ("0.5.9", ["--base-gpu-id", "-1"], {}, ["X034"]),
    ("0.5.23", ["--gpu-id-step", "0"], {}, ["X034"]),
    ("0.5.9", ["--tokenizer-worker-num", "0"], {}, ["X034"]),
    ("0.5.9", ["--tokenizer-worker-num", "0", "--skip-tokenizer-init"], {}, []),
    ("0.5.23", ["--detokenizer-worker-num", "0"], {}, ["X034"]),
    ("0.5.23", ["--detokenizer-worker-num", "0", "--skip-tokenizer-init"], {}, []),
    ("0.5.23", ["--mm-processor-worker-num", "-1"], {}, ["X034"]),
    ("0.5.23", ["--mm-io-worker-num", "-2"], {}, ["X034"]),
    ("0.5.23", ["--mm-io-worker-num", "0"], {}, []),
    ("0.5.9", ["--schedule-conservativeness", "-0.5"], {}, ["X034"]),
    ("0.5.23", ["--pp-max-micro-batch-size", "0"], {}, ["X034"]),
    ("0.5.9", ["--pp-max-micro-batch-size", "0"], {}, []),  # 0.5.9 does not check it
    ("0.5.23", ["--gc-threshold", "700", "10", "10", "5"], {}, ["X034"]),
    ("0.5.23", ["--gc-threshold", "700", "10", "10"], {}, []),
    # pdmux-compat (X035)
    ("0.5.9", ["--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule"], {}, []),
    ("0.5.23", ["--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule"], {}, []),
    ("0.5.9", ["--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule", "--pp-size", "2"],
     {}, ["X035"]),
    ("0.5.23", ["--enable-pdmux", "--disable-overlap-schedule"], {}, ["X035"]),
    ("0.5.9", ["--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule",
               "--disaggregation-mode", "prefill"], {}, ["X035"]),
    ("0.5.23", ["--enable-pdmux", "--chunked-prefill-size", "-1"], {}, ["X035"]),
    # pp-mixed-chunk (X036, 0.5.9); speculative decoding with pp is spec-pp's (X011)
    ("0.5.9", ["--pp-size", "2"], {}, []),
    ("0.5.9", ["--pp-size", "2", "--enable-mixed-chunk"], {}, ["X036"]),
    ("0.5.9", ["--pp-size", "2", "--enable-mixed-chunk", "--speculative-algorithm", "NGRAM"], {}, ["X011"]),
    ("0.5.9", ["--enable-mixed-chunk"], {}, []),
    # multi-item-scoring (X037, 0.5.9)
    ("0.5.9", ["--multi-item-scoring-delimiter", "5", "--disable-radix-cache", "--chunked-prefill-size", "-1"], {}, []),
    ("0.5.9", ["--multi-item-scoring-delimiter", "5", "--chunked-prefill-size", "-1"], {}, ["X037"]),
    ("0.5.9", ["--multi-item-scoring-delimiter", "5", "--disable-radix-cache"], {}, ["X037"]),
    ("0.5.9", ["--multi-item-scoring-delimiter", "5", "--disaggregation-mode", "decode", "--chunked-prefill-size", "-1"],
     {}, []),  # a decode server runs without the radix cache anyway
    # priority-scheduling-policy (X038)
    ("0.5.9", ["--enable-priority-scheduling", "--schedule-policy", "lof"], {}, []),
    ("0.5.9", ["--enable-priority-scheduling", "--schedule-policy", "lpm"], {}, ["X038"]),
    ("0.5.23", ["--enable-priority-scheduling", "--schedule-policy", "random"], {}, ["X038"]),
    ("0.5.23", ["--retraction-policy", "priority"], {}, ["X038"]),
    ("0.5.23", ["--retraction-policy", "priority", "--enable-priority-scheduling"], {}, []),
    # metrics-args (X039)
    ("0.5.9", ["--tokenizer-metrics-allowed-custom-labels", "team"], {}, []),
    ("0.5.23", ["--tokenizer-metrics-allowed-custom-labels", "team", "--tokenizer-metrics-custom-labels-header", ""],
     {}, ["X039"]),
    ("0.5.9", ["--export-metrics-to-file"], {}, ["X039"]),
    ("0.5.23", ["--export-metrics-to-file", "--export-metrics-to-file-dir", "/var/lib/m"], {}, []),
    # quant-communications (X040)
    ("0.5.23", ["--enable-quant-communications", "--tp-size", "2", "--device", "npu"], {}, []),
    ("0.5.23", ["--enable-quant-communications"], {}, ["X040"]),
    ("0.5.23", ["--enable-quant-communications", "--tp-size", "2"], {}, ["X040"]),
    # cuda-graph-padding-compile (X041)
    ("0.5.23", ["--disable-cuda-graph-padding"], {}, []),
    ("0.5.23", ["--disable-cuda-graph-padding", "--enable-torch-compile"], {}, ["X041"]),
    ("0.5.9", ["--disable-cuda-graph-padding", "--enable-torch-compile"], {}, []),  # 0.5.9 has no such check
    # grpc-port-clash (X042)
    ("0.5.23", ["--grpc-port", "30001"], {}, []),
    ("0.5.23", ["--grpc-port", "30000"], {}, ["X042"]),
    ("0.5.23", ["--port", "8000"], {"SGLANG_GRPC_PORT": "8000"}, ["X042"]),
    ("0.5.23", [], {"SGLANG_GRPC_PORT": "30000"}, ["X042"]),  # only the environment: SGLang's default --port
    ("0.5.23", ["--grpc-port", "30000", "--smg-grpc-mode"], {}, []),
    # kv-canary-sweep (X043)
    ("0.5.23", ["--kv-canary-sweep-interval", "10", "--kv-canary", "log"], {}, []),
    ("0.5.23", ["--kv-canary-sweep-interval", "10"], {}, ["X043"]),
    # watermark-args (X044)
    ("0.5.23", [WM], {}, []),
    ("0.5.23", [WM, WC, '{"default_enabled": false, "max_probability": 0.9}'], {}, []),
    ("0.5.23", [WM, WC, "/etc/sglang/watermark.json"], {}, []),
    ("0.5.23", [WC, '{"context_window": 8}'], {}, ["X044"]),
    ("0.5.23", [WM, WC, '{"context_window": 65}'], {}, ["X044"]),
    ("0.5.23", [WM, WC, '{"key_b": "0x2"}'], {}, ["X044", "X045"]),
    ("0.5.23", [WM, WC, '{"key": "0x1", "key_b": "0x2", "mixing_probability": 1}'], {}, ["X044", "X045"]),
    ("0.5.23", [WM, WC, '{"key": "0x1", "mixing_probability": 0.4}'], {}, ["X044", "X045"]),
    ("0.5.23", [WM, WC, '{"max_probability": 0}'], {}, ["X044"]),
    ("0.5.23", [WM, WC, '{"enforce_all": true}'], {}, ["X044"]),
    ("0.5.23", [WM, WC, '{"key": "xyz"}'], {}, ["X044", "X045"]),
    # watermark-key-in-argv (X045): a key written inline lands in the unit's argv
    ("0.5.23", [WM, WC, '{"key": "0x1f", "default_enabled": true}'], {}, ["X045"]),
    ("0.5.23", [WM, WC, '{"key": null}'], {}, []),
    ("0.5.23", [WM, "--enable-custom-logit-processor"], {}, ["X044"]),
    ("0.5.23", [WM, "--dllm-algorithm", "LowConfidence"], {}, ["X044"]),
    ("0.5.23", [WM, "--disaggregation-mode", "prefill"], {}, ["X044"]),
    ("0.5.23", [WM, "--speculative-algorithm", "STANDALONE"], {}, ["X044"]),
    ("0.5.23", [WM, "--speculative-algorithm", "ngram"], {}, []),
    ("0.5.23", [WM, "--speculative-use-rejection-sampling"], {}, ["X044"]),
]
