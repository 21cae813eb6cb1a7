"""Generated cases for the gmoe rules: MoE kernels and all-to-all, mega-MoE, expert packs, small hooks.

Each rule gets flag sets where it fires (SGLang refuses) and accepted neighbours. The
stand-in model is a Llama, so checks SGLang makes on the checkpoint first (DeepEP v2's and
MegaMOE's architecture lists) refuse those cases too: both sides refuse, for gen's reason
on a real checkpoint.
"""

from __future__ import annotations

import dataclasses

from differential_cases import WordCase, product_cases

BOTH = ("0.5.9", "0.5.23")
NEW = ("0.5.23",)
FI = {"--moe-a2a-backend": "flashinfer", "--tp-size": 2}
FI_DP = {**FI, "--attn-dp-size": 2}
EAGLE = {"--speculative-algorithm": "EAGLE", "--speculative-draft-model-path": "fake_draft_model",
         "--speculative-num-steps": 3, "--speculative-eagle-topk": 1, "--speculative-num-draft-tokens": 4}


def _one(rule: str, name: str, pins: tuple[str, ...], flags: dict[str, object],
         env: dict[str, str] | None = None) -> WordCase:
    return WordCase(rule, f"{rule}[{name}]", pins, tuple(flags.items()), tuple(sorted((env or {}).items())))


def _tag(tag: str, cases: list[WordCase]) -> list[WordCase]:
    """The cases with ``tag`` in their names (two products of one rule over the same axes)."""
    return [dataclasses.replace(c, name=c.name.replace("[", f"/{tag}[", 1)) for c in cases]


CASES = [
    # moe-runner-quant (X059)
    *product_cases("moe-runner-quant", BOTH, {"--moe-runner-backend": "flashinfer_cutlass"},
                   {"--quantization": [None, "fp8", "modelopt_fp8"], "--tp-size|--ep-size": [None, (4, 2), (4, 4)]}),
    _one("moe-runner-quant", "mxfp8-overrides-cutlass-runner", NEW,
         {"--moe-runner-backend": "flashinfer_cutlass", "--quantization": "mxfp8"}),
    _one("moe-runner-quant", "waterfill-deepep-v2", NEW,
         {"--moe-a2a-backend": "deepep_v2", "--enable-waterfill": True, "--tp-size": 2}),
    *product_cases("moe-runner-quant", BOTH, {"--tp-size": 2},
                   {"--quantization": ["fp8", "mxfp8"], "--ep-size": [None, 2],
                    "--moe-runner-backend": [None, "cutlass", "triton"]}),
    *product_cases("moe-runner-quant", NEW, {},
                   {"--moe-runner-backend": ["flashinfer_trtllm", "flashinfer_trtllm_routed"],
                    "--quantization": [None, "awq", "mxfp8"]}),
    *product_cases("moe-runner-quant", NEW, {"--moe-runner-backend": "flashinfer_cutedsl", "--quantization": "modelopt_fp4"},
                   {"--moe-a2a-backend": [None, "mooncake", "deepep"], "--tp-size|--ep-size": [(4, 2), (4, 4)]}),
    _one("moe-runner-quant", "mxfp8-forces-cutlass-0.5.9", ("0.5.9",),
         {"--moe-runner-backend": "flashinfer_cutlass", "--quantization": "mxfp8"}),
    _one("moe-runner-quant", "cutlass-env-awq", ("0.5.9",), {"--quantization": "awq"}, {"SGLANG_CUTLASS_MOE": "1"}),
    _one("moe-runner-quant", "cutlass-env-fp8-ep", ("0.5.9",), {"--quantization": "fp8", "--tp-size": 2, "--ep-size": 2},
         {"SGLANG_CUTLASS_MOE": "1"}),
    # moe-a2a-backend (X060): 0.5.9 needs flashinfer_cutlass under flashinfer a2a
    *_tag("old", product_cases("moe-a2a-backend", ("0.5.9",), FI,
                   {"--moe-runner-backend": [None, "flashinfer_cutlass", "flashinfer_trtllm"]})),
    *product_cases("moe-a2a-backend", NEW, FI_DP,
                   {"--moe-runner-backend": [None, "triton", "flashinfer_cutlass", "deep_gemm"]}),
    *product_cases("moe-a2a-backend", NEW, {**FI_DP, "--moe-runner-backend": "flashinfer_cutlass"},
                   {"--flashinfer-a2a-dispatch-type": ["bf16", "mxfp8", "auto"], "--quantization": [None, "mxfp8"]}),
    _one("moe-a2a-backend", "modelopt-fp4-auto-runner", NEW, {**FI_DP, "--quantization": "modelopt_fp4"}),
    _one("moe-a2a-backend", "dispatch-without-flashinfer", NEW, {"--flashinfer-a2a-dispatch-type": "bf16"}),
    _one("moe-a2a-backend", "dispatch-auto-without-flashinfer", NEW, {"--flashinfer-a2a-dispatch-type": "auto"}),
    _one("moe-a2a-backend", "mxfp8-trtllm-rewritten", NEW,
         {**FI_DP, "--moe-runner-backend": "flashinfer_trtllm", "--quantization": "mxfp8",
          "--flashinfer-a2a-dispatch-type": "mxfp8"}),
    _one("moe-a2a-backend", "nvfp4-dispatch-env", NEW,
         {**FI_DP, "--moe-runner-backend": "flashinfer_cutlass", "--flashinfer-a2a-dispatch-type": "bf16"},
         {"SGLANG_MOE_NVFP4_DISPATCH": "0"}),
    *product_cases("moe-a2a-backend", NEW,
                   {**FI_DP, "--moe-runner-backend": "flashinfer_cutedsl", "--quantization": "modelopt_fp4"},
                   {"--flashinfer-a2a-dispatch-type": ["auto", "bf16"]},
                   {"SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16": "1"}),
    *product_cases("moe-a2a-backend", NEW, {"--moe-a2a-backend": "pplx", "--tp-size": 2, "--chunked-prefill-size": 128},
                   {"--attn-dp-size": [None, 2], "--deepep-mode": [None, "normal"],
                    "--moe-runner-backend": [None, "triton"]}),
    _one("moe-a2a-backend", "pplx-dp-attention-form", NEW,
         {"--moe-a2a-backend": "pplx", "--tp-size": 2, "--dp-size": 2, "--enable-dp-attention": True,
          "--chunked-prefill-size": 128}),
    _one("moe-a2a-backend", "deepep-v2-direct-two-nodes", NEW,
         {"--moe-a2a-backend": "deepep_v2", "--tp-size": 2, "--nnodes": 2, "--node-rank": 0,
          "--dist-init-addr": "127.0.0.1:29500"}),
    *product_cases("moe-a2a-backend", NEW,
                   {"--moe-a2a-backend": "deepep", "--tp-size": 2, "--quantization": "modelopt_fp4"},
                   {"--moe-runner-backend": ["flashinfer_cutedsl", None], "--deepep-mode": [None, "normal"]}),
    *product_cases("moe-a2a-backend", NEW, {"--moe-a2a-backend": "deepep_v2", "--tp-size": 2},
                   {"--moe-runner-backend": [None, "triton"], "--enable-two-batch-overlap": [None, True]}),
    # deepep-v2-draft (X061)
    *product_cases("deepep-v2-draft", NEW, {}, {"--speculative-moe-a2a-backend": [None, "deepep_v2", "deepep"]}),
    # flashinfer-a2a-chunked-prefill (X062)
    *product_cases("flashinfer-a2a-chunked-prefill", NEW, {**FI_DP, "--moe-runner-backend": "flashinfer_cutlass"},
                   {"--chunked-prefill-size": [None, -1, 4096]}),
    # megamoe-no-overlap (X063); megamoe itself needs an SM90/SM100 GPU (refused here either way)
    *product_cases("megamoe-no-overlap", NEW, {"--tp-size": 2},
                   {"--moe-runner-backend|--moe-a2a-backend": [(None, None), ("megamoe", None), (None, "megamoe")],
                    "--enable-single-batch-overlap": [None, True]}),
    # megamoe-chunked-prefill (X237): megamoe is refused here for want of the GPU; the neighbours
    # without megamoe are accepted
    *product_cases("megamoe-chunked-prefill", NEW, {"--quantization": "modelopt_fp4", "--tp-size": 2},
                   {"--moe-a2a-backend": [None, "megamoe"], "--chunked-prefill-size": [-1, 4096]}),
    # expert-pack-args (X064): the stand-in is no expert pack, so SGLang refuses every expert_pack case
    *product_cases("expert-pack-args", NEW, {},
                   {"--load-format": [None, "expert_pack"], "--tp-size": [None, 2]}),
    # aux-hidden-state-capture (X065)
    *product_cases("aux-hidden-state-capture", NEW, {},
                   {"--enable-return-aux-hidden-states": [None, True],
                    "--speculative-algorithm": [None, "eagle3", "DFLASH"],
                    "--return-aux-hidden-state-layer-ids": [None, ["0", "1"], ["1", "1"], ["1", "-1"]]}),
    _one("aux-hidden-state-capture", "with-draft", NEW,
         {"--enable-return-aux-hidden-states": True, "--speculative-algorithm": "EAGLE3",
          "--speculative-draft-model-path": "fake_draft_model"}),
    _one("aux-hidden-state-capture", "pp", NEW,
         {"--enable-return-aux-hidden-states": True, "--speculative-algorithm": "EAGLE3", "--pp-size": 2}),
    # pp-compat (X066)
    *product_cases("pp-compat", NEW, {"--pp-size": 2},
                   {"--min-free-slots-delay": [None, 3]}),
    *product_cases("pp-compat", NEW, {"--pp-size": 2, **EAGLE},
                   {"--disaggregation-mode": [None, "prefill"], "--speculative-adaptive": [None, True]}),
    *_tag("pp-spec", product_cases("pp-compat", NEW, {"--pp-size": 2, **EAGLE},
                                   {"--disaggregation-mode": [None, "prefill"], "--speculative-adaptive": [None, True]},
                                   {"SGLANG_ENABLE_PP_SPEC": "1"})),
    _one("pp-compat", "eagle3-prefill", NEW, {"--pp-size": 2, **EAGLE, "--speculative-algorithm": "EAGLE3",
                                             "--disaggregation-mode": "prefill"}),
    _one("pp-compat", "pp-spec-attn-dp", NEW, {"--pp-size": 2, "--tp-size": 2, "--attn-dp-size": 2, **EAGLE},
         {"SGLANG_ENABLE_PP_SPEC": "1"}),
    # load-publish-endpoint (X067)
    *product_cases("load-publish-endpoint", NEW, {"--load-publish-endpoint": "auto"},
                   {"--kv-events-config": [None, "notjson", '{"endpoint": "tcp://*:5557"}', '{"publisher": "zmq"}',
                                           '{"publisher": "zmq", "endpoint": "tcp://localhost:5557"}',
                                           '{"publisher": 5}', '{"publisher": "zmq", "format": "x"}',
                                           '{"publisher": "zmq", "hwm": "12"}', '{"publisher": "zmq", "bogus": 1}']}),
    *product_cases("load-publish-endpoint", NEW, {"--kv-events-config": '{"publisher": "zmq"}'},
                   {"--load-publish-endpoint": ["off", "tcp://*:5557", "tcp://*:6000", "tcp://127.0.0.1:6000"]}),
    # ib-devices-value (X068): any non-empty value meets the host's missing /sys/class/infiniband here
    *product_cases("ib-devices-value", NEW, {"--disaggregation-mode": "prefill"},
                   {"--disaggregation-ib-device": [None, " "]}),
    _one("ib-devices-value", "nixl-not-validated", NEW,
         {"--disaggregation-mode": "decode", "--disaggregation-transfer-backend": "nixl",
          "--disaggregation-ib-device": " "}),
    # prefill-decode-interval (X069), sampling-mask-max-tokens (X070), response-store-pd (X071)
    *product_cases("prefill-decode-interval", NEW, {},
                   {"--prefill-decode-interval": [None, -1, 0, 5], "--prefill-decode-interval-min-bs": [None, -1]}),
    *product_cases("sampling-mask-max-tokens", NEW, {}, {"--sampling-mask-max-tokens": [None, 0, -3, 1]}),
    *product_cases("response-store-pd", NEW, {},
                   {"--enable-response-store": [None, True], "--disaggregation-mode": [None, "prefill", "decode"]}),
    # sampling-backend-xpu (X232): --device cuda reaches the check here (the CPU path forces pytorch)
    *product_cases("sampling-backend-xpu", NEW, {"--device": "cuda"},
                   {"--sampling-backend": [None, "intel_xpu", "pytorch"]}),
    # ple-offload (X233)
    *product_cases("ple-offload", NEW, {},
                   {"--ple-offload-embedding|--no-ple-offload-embedding": [(None, None), (True, None), (None, True)],
                    "--cpu-offload-gb": [None, 1], "--ple-offload-backend": [None, "file"]}),
    _one("ple-offload", "group-size", NEW, {"--ple-offload-embedding": True, "--offload-group-size": 2}),
    # language-model-only-combo (X234): the stand-in Llama is not a language-model-only architecture
    *product_cases("language-model-only-combo", NEW, {},
                   {"--language-model-only": [None, True], "--language-only": [None, True]}),
    _one("language-model-only-combo", "prefix-mm-cache", NEW,
         {"--language-model-only": True, "--enable-prefix-mm-cache": True}),
    # weight-cache-spec (X235)
    *product_cases("weight-cache-spec", NEW, {},
                   {"--weight-cache-mode": [None, "client", "daemon"], "--speculative-algorithm": [None, "NGRAM"]}),
    # cuda-graph-config-values (X236)
    *product_cases("cuda-graph-config-values", NEW, {},
                   {"--cuda-graph-prefill-max-context": [None, 0, -5, 1000]}),
    *product_cases("cuda-graph-config-values", NEW, {},
                   {"--cuda-graph-config": ['{"prefill": {"backend": "bogus"}}', '{"decode": {"backend": "FULL"}}',
                                            '{"prefill": {"backend": "full"}}', '{"prefill": {"max_context_size": 0}}']}),
    # FlashInfer a2a topology: attention DP across every TP rank (found by the mixed corpus)
    *product_cases("flashinfer-a2a-topology", NEW, {"--moe-a2a-backend": "flashinfer"},
                   {"--tp-size|--attn-dp-size": [(None, None), (2, None), (2, 2), (4, 2), (4, 4)],
                    "--moe-runner-backend": ["flashinfer_cutlass", "flashinfer_trtllm_routed"]}),
    # load_format ipc_cache: not a --load-format choice, so gen's flag check (F003) and argparse refuse it
    _one("flag-check", "load-format-ipc-cache", NEW, {"--load-format": "ipc_cache"}),
]
