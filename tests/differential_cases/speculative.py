"""Generated cases for the gspec rules (LoRA X072-X073, speculative algorithms X074-X079).

UNO, DSPARK and DFLASH refuse ``--device cpu`` before any of their own checks, so their
cases pass ``--device cuda`` (it wins over the runner's ``--device cpu``): SGLang's argument
checks then run as on a GPU host, which is what gen renders for.
"""

from __future__ import annotations

from differential_cases import WordCase, product_cases

BOTH = ("0.5.9", "0.5.23")
NEW = ("0.5.23",)
CUDA = {"--device": "cuda"}
EAGLE = {"--speculative-algorithm": "EAGLE", "--speculative-draft-model-path": "fake_draft_model",
         "--speculative-num-steps": 3, "--speculative-eagle-topk": 1, "--speculative-num-draft-tokens": 4}
BAD_JSON_PATH = '{"lora_name": "a", "path": "/m/a"}'

CASES: list[WordCase] = [
    *product_cases("lora-args", BOTH, {},
                   {"--lora-paths": [None, ["a=/m/a", "b=/m/b"], [BAD_JSON_PATH]],
                    "--max-loaded-loras": [None, 1, 8]}),
    *product_cases("lora-args", BOTH, {"--enable-lora": True},
                   {"--max-lora-rank": [None, 16], "--lora-target-modules": [["all"], ["all", "q_proj"]]}),
    *product_cases("lora-args", BOTH, {}, {"--max-loras-per-batch": [0, 2]}),
    *product_cases("lora-args", BOTH, {"--lora-paths": ["a=/m/a"], **EAGLE}, {"--speculative-adaptive": [None]}),
    *product_cases("lora-args", NEW, {"--lora-paths": ["a=/m/a"]},
                   {"--lora-drain-wait-threshold": [-1.0, 0.5], "--enable-lora-overlap-loading": [None, True]}),
    *product_cases("lora-args", NEW, {"--lora-paths": ["a=/m/a"], **EAGLE}, {"--speculative-adaptive": [True]}),
    *product_cases("lora-moe-runner", NEW, {"--moe-runner-backend": "lora_triton"},
                   {"--lora-paths": [None, ["a=/m/a"]], "--lora-backend": [None, "triton_v2"],
                    "--quantization": [None, "modelopt_fp4"]}),
    *product_cases("lora-moe-runner", NEW, EAGLE, {"--speculative-moe-runner-backend": [None, "lora_triton"]}),
    *product_cases("spec-uno-args", NEW, {**CUDA, "--speculative-algorithm": "UNO", "--attention-backend": "fa3"},
                   {"--uno-lora-path": [None, "/m/uno"], "--speculative-num-draft-tokens": [None, 4],
                    "--speculative-eagle-topk|--speculative-num-steps": [None, (2, 3), (2, 1)]}),
    *product_cases("spec-uno-args", NEW, {**CUDA, "--speculative-algorithm": "UNO", "--uno-lora-path": "/m/uno",
                                          "--speculative-num-draft-tokens": 4},
                   {"--attention-backend": ["fa3", "triton"], "--tp-size": [None, 2],
                    "--enable-deterministic-inference": [None, True]}),
    *product_cases("spec-dspark-args", NEW, {**CUDA, "--speculative-algorithm": "DSPARK",
                                             "--speculative-draft-model-path": "fake_draft_model"},
                   {"--speculative-dspark-block-size": [None, 0, 4], "--speculative-num-draft-tokens": [None, 1, 5]}),
    *product_cases("spec-dflash-args", NEW, {**CUDA, "--speculative-algorithm": "DFLASH",
                                             "--speculative-draft-model-path": "fake_draft_model"},
                   {"--speculative-dflash-block-size": [None, 0, 8], "--speculative-num-draft-tokens": [None, 8, 4]}),
    *product_cases("spec-dflash-args", NEW, {**CUDA, "--speculative-algorithm": "DFLASH",
                                             "--speculative-draft-model-path": "fake_draft_model",
                                             "--speculative-dflash-block-size": 8},
                   {"--speculative-draft-window-size": [4, 8, 64]}),
    *product_cases("spec-decoding-args", NEW, EAGLE,
                   {"--speculative-draft-window-size": [None, 0, 64], "--speculative-draft-sink-size": [None, -1, 4]}),
    *product_cases("spec-decoding-args", NEW, {"--speculative-algorithm": "NGRAM"},
                   {"--speculative-use-block-verification": [None, True]}),
    *product_cases("spec-rejection-sampling", NEW, {**EAGLE, "--speculative-use-rejection-sampling": True},
                   {"--speculative-algorithm": ["EAGLE", "STANDALONE"],
                    "--speculative-accept-threshold-single": [None, 0.5]}),
    *product_cases("spec-ngram-corpus", NEW, {"--speculative-algorithm": "NGRAM",
                                              "--speculative-ngram-external-corpus-path": "/tmp/gen-no-corpus.jsonl"},
                   {"--speculative-ngram-external-sam-budget": [None, 4, 12],
                    "--speculative-ngram-external-corpus-max-tokens": [None, 0]}),
    *product_cases("flag-check", BOTH, {"--lora-paths": ["a=/m/a"]}, {"--max-lora-chunk-size": [24]}),
]
CASES += [
    *product_cases("spec-moe-runner-trtllm", BOTH, {},
                   {"--speculative-moe-runner-backend": [None, "flashinfer_trtllm", "triton"]}),
    *product_cases("spec-adaptive-steps", NEW, {"--speculative-algorithm": "EAGLE", "--speculative-adaptive": True,
                                                "--speculative-draft-model-path": "fake_draft_model",
                                                "--speculative-eagle-topk": 1},
                   {"--speculative-num-steps": [3, 4]}),
]
CASES += [
    *product_cases("spec-dspark-args", NEW, {**CUDA, "--speculative-algorithm": "DSPARK",
                                             "--speculative-draft-model-path": "fake_draft_model", "--tp-size": 2},
                   {"--dp-size|--enable-dp-attention": [None, (2, True)], "--enable-dp-lm-head": [None, True],
                    "--pp-size|--disaggregation-mode": [None, (2, "prefill")]}),
    *product_cases("spec-dflash-args", NEW, {**CUDA, "--speculative-algorithm": "DFLASH",
                                             "--speculative-draft-model-path": "fake_draft_model", "--tp-size": 2},
                   {"--dp-size|--enable-dp-attention": [None, (2, True)], "--enable-dp-lm-head": [None, True]}),
    *product_cases("spec-uno-args", NEW, {**CUDA, "--speculative-algorithm": "UNO", "--uno-lora-path": "/m/uno",
                                          "--attention-backend": "fa3", "--speculative-eagle-topk": 4},
                   {"--speculative-num-steps|--speculative-num-draft-tokens": [(3, 8), (40, 129), (40, 100)],
                    "--enable-pdmux": [None, True]}),
]
