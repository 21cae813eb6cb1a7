"""Unit rows of the gspec rules: LoRA (X072-X073) and the speculative algorithms' own checks (X074-X079)."""

from __future__ import annotations

from rule_tables import Row

A = ["--speculative-algorithm"]
DRAFT = ["--speculative-draft-model-path", "/m/draft"]
EAGLE = A + ["EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
             "--speculative-num-draft-tokens", "4"]
UNO = A + ["UNO", "--uno-lora-path", "/m/uno", "--speculative-num-draft-tokens", "4", "--attention-backend", "fa3"]
UNO_TREE = A + ["UNO", "--uno-lora-path", "/m/uno", "--attention-backend", "fa3", "--speculative-eagle-topk", "2"]
DSPARK = A + ["DSPARK"] + DRAFT
DFLASH = A + ["DFLASH"] + DRAFT
NGRAM = A + ["NGRAM", "--speculative-ngram-external-corpus-path", "/data/corpus.jsonl"]

ROWS: list[Row] = [
    # lora-args (X072): check_lora_server_args and LoRAPathAction
    ("0.5.9", ["--lora-paths", "a=/m/a", "b=/m/b"], {}, []),
    ("0.5.23", ["--lora-paths", "a=/m/a", "b=/m/b"], {}, []),
    ("0.5.23", ["--lora-paths", '{"lora_name": "a", "path": "/m/a"}'], {}, ["X072"]),
    ("0.5.23", ["--lora-paths", '{"lora_name": "a", "lora_path": "/m/a"}'], {}, []),
    ("0.5.9", ["--max-loras-per-batch", "0"], {}, ["X072"]),
    ("0.5.9", ["--enable-lora"], {}, ["X072"]),
    ("0.5.9", ["--enable-lora", "--max-lora-rank", "16", "--lora-target-modules", "all"], {}, []),
    ("0.5.23", ["--enable-lora", "--max-lora-rank", "16", "--lora-target-modules", "all", "q_proj"], {}, ["X072"]),
    ("0.5.9", ["--lora-paths", "a=/m/a", "b=/m/b", "--max-loaded-loras", "1", "--max-loras-per-batch", "1"], {},
     ["X072"]),
    ("0.5.9", ["--lora-paths", "a=/m/a", "--max-loaded-loras", "4"], {}, ["X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--max-loaded-loras", "8"], {}, []),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--enable-lora-overlap-loading"], {}, ["X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--enable-lora-overlap-loading", "--max-loaded-loras", "16"], {}, []),
    ("0.5.9", ["--lora-paths", "a=/m/a"] + EAGLE, {}, ["X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a"] + EAGLE, {}, []),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--speculative-adaptive"] + EAGLE, {}, ["X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a"] + EAGLE, {"SGLANG_ENABLE_OVERLAP_PLAN_STREAM": "1"}, ["X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--lora-drain-wait-threshold", "-1"], {}, ["X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--lora-backend", "triton_v2", "--enable-two-batch-overlap"], {}, ["X029", "X072"]),
    ("0.5.23", ["--lora-paths", "a=/m/a", "--lora-backend", "triton_v2"], {}, []),
    # lora-moe-runner (X073)
    ("0.5.23", ["--moe-runner-backend", "lora_triton"], {}, ["X073"]),
    ("0.5.23", ["--moe-runner-backend", "lora_triton", "--lora-paths", "a=/m/a"], {}, ["X073"]),
    ("0.5.23", ["--moe-runner-backend", "lora_triton", "--lora-paths", "a=/m/a", "--lora-backend", "triton_v2"], {}, []),
    ("0.5.23", ["--moe-runner-backend", "lora_triton", "--lora-paths", "a=/m/a", "--lora-backend", "triton_v2",
                "--quantization", "modelopt_fp4"], {}, ["X073"]),
    ("0.5.23", ["--speculative-moe-runner-backend", "lora_triton"] + EAGLE, {}, ["X073"]),
    # spec-uno-args (X074)
    ("0.5.23", UNO, {}, []),
    ("0.5.23", A + ["UNO", "--speculative-num-draft-tokens", "4", "--attention-backend", "fa3"], {}, ["X074"]),
    ("0.5.23", UNO + ["--tp-size", "2"], {}, ["X074"]),
    ("0.5.23", UNO + ["--speculative-draft-model-path", "/m/d"], {}, ["X074"]),
    ("0.5.23", A + ["UNO", "--uno-lora-path", "/m/uno", "--speculative-num-draft-tokens", "4",
                    "--attention-backend", "triton"], {}, ["X074"]),
    ("0.5.23", UNO_TREE + ["--speculative-num-draft-tokens", "4", "--speculative-num-steps", "3"], {}, []),
    ("0.5.23", UNO_TREE + ["--speculative-num-draft-tokens", "8", "--speculative-num-steps", "3"], {}, ["X074"]),
    ("0.5.23", UNO_TREE + ["--speculative-num-draft-tokens", "4"], {}, ["X074"]),
    # spec-dspark-args (X075)
    ("0.5.23", DSPARK + ["--speculative-dspark-block-size", "4"], {}, []),
    ("0.5.23", DSPARK + ["--speculative-dspark-block-size", "0"], {}, ["X075"]),
    ("0.5.23", DSPARK + ["--speculative-dspark-block-size", "4", "--speculative-num-draft-tokens", "4"], {}, ["X075"]),
    ("0.5.23", DSPARK + ["--speculative-num-draft-tokens", "1"], {}, ["X075"]),
    ("0.5.23", DSPARK + ["--pp-size", "2"], {}, ["X066", "X075"]),
    # spec-dflash-args (X076)
    ("0.5.23", DFLASH + ["--speculative-dflash-block-size", "8"], {}, []),
    ("0.5.23", DFLASH + ["--speculative-dflash-block-size", "0"], {}, ["X076"]),
    ("0.5.23", DFLASH + ["--speculative-dflash-block-size", "8", "--speculative-num-draft-tokens", "4"], {}, ["X076"]),
    ("0.5.23", DFLASH + ["--speculative-dflash-block-size", "8", "--speculative-draft-window-size", "4"], {}, ["X076"]),
    # spec-decoding-args (X077)
    ("0.5.23", EAGLE + ["--speculative-draft-window-size", "64", "--speculative-draft-sink-size", "4"], {}, []),
    ("0.5.23", EAGLE + ["--speculative-draft-sink-size", "4"], {}, ["X077"]),
    ("0.5.23", EAGLE + ["--speculative-draft-window-size", "0"], {}, ["X077"]),
    ("0.5.23", A + ["NGRAM", "--speculative-use-block-verification"], {}, ["X077"]),
    ("0.5.23", A + ["NGRAM", "--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache"], {},
     ["X077"]),
    # spec-rejection-sampling (X078)
    ("0.5.23", EAGLE + ["--speculative-use-rejection-sampling"], {}, []),
    ("0.5.23", EAGLE + ["--speculative-use-rejection-sampling", "--speculative-accept-threshold-single", "0.5"], {},
     ["X078"]),
    ("0.5.23", A + ["STANDALONE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                    "--speculative-num-draft-tokens", "4", "--speculative-use-rejection-sampling"] + DRAFT, {}, ["X078"]),
    # spec-ngram-corpus (X079)
    ("0.5.23", NGRAM + ["--speculative-ngram-external-sam-budget", "4"], {}, []),
    ("0.5.23", NGRAM, {}, ["X079"]),
    ("0.5.23", NGRAM + ["--speculative-ngram-external-sam-budget", "12"], {}, ["X079"]),
]
ROWS += [
    # spec-moe-runner-trtllm (X080, 0.5.9 only)
    ("0.5.9", ["--speculative-moe-runner-backend", "flashinfer_trtllm"], {}, ["X080"]),
    ("0.5.9", ["--speculative-moe-runner-backend", "triton"], {}, []),
    ("0.5.23", ["--speculative-moe-runner-backend", "flashinfer_trtllm"], {}, []),
    # spec-adaptive-steps (X081)
    ("0.5.23", EAGLE[:-2] + ["--speculative-adaptive"], {}, []),
    ("0.5.23", A + ["EAGLE", "--speculative-num-steps", "4", "--speculative-eagle-topk", "1", "--speculative-adaptive"],
     {}, ["X081"]),
    ("0.5.23", A + ["EAGLE", "--speculative-num-steps", "4", "--speculative-eagle-topk", "1", "--speculative-adaptive",
                    "--speculative-adaptive-config", "/etc/adaptive.json"], {}, []),
]
ROWS += [
    ("0.5.23", DSPARK + ["--tp-size", "2", "--attn-dp-size", "2"], {}, ["X075"]),
    ("0.5.23", DSPARK + ["--tp-size", "2", "--attn-dp-size", "2", "--enable-dp-lm-head"], {}, []),
    ("0.5.23", DSPARK + ["--tp-size", "2", "--attn-dp-size", "2", "--enable-dp-lm-head", "--moe-a2a-backend", "deepep"],
     {}, ["X075"]),
    ("0.5.23", DSPARK + ["--pp-size", "2", "--disaggregation-mode", "prefill"], {}, []),
    ("0.5.23", DFLASH + ["--tp-size", "2", "--attn-dp-size", "2"], {}, ["X076"]),
    ("0.5.23", UNO_TREE + ["--speculative-num-steps", "40", "--speculative-num-draft-tokens", "129"], {}, ["X074"]),
    ("0.5.23", UNO_TREE + ["--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4", "--enable-pdmux"], {},
     ["X035", "X074"]),  # X035: check_server_args also refuses --enable-pdmux without --chunked-prefill-size -1
    ("0.5.23", ["--moe-runner-backend", "lora_triton", "--lora-paths", "a=/m/a", "--lora-backend", "triton_v2",
                "--enable-eplb", "--ep-size", "2", "--tp-size", "2"], {}, ["X073"]),
]
