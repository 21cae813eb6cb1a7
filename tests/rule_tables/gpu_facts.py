"""Rows of the GPU rules (G codes): each names the service's GPU and the host torch beside the argv.

``GPU_ROWS``: ``(pin, argv words, environment, GPU, expected codes in rules.yaml order)``, where
the GPU is one of :data:`GPUS` (a name: compute capability as nvidia-smi prints it, memory, and
the host torch's CUDA and arch list); tests/test_gpu_rules.py evaluates them with
``Settings.gpu`` made from them (generator/sglang/gpu.py), as ``gen check`` does from an
inventory. The rules enforced in SGLang's argument validation are also run against both real
SGLangs with a stand-in GPU by tests/test_gpu_rules_differential.py.
"""

from __future__ import annotations

from typing import Any

GpuRow = tuple[str, list[str], dict[str, str], str, list[str]]

CU128 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120")  # torch 2.7+cu128
CU126 = ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")  # torch 2.7.1+cu126: no sm_120
GPUS: dict[str, dict[str, Any]] = {
    "A100": {"compute_cap": "8.0", "memory_mib": 81920, "torch_cuda": "12.8", "arch": CU128},
    "L40S": {"compute_cap": "8.9", "memory_mib": 46068, "torch_cuda": "12.8", "arch": CU128},
    "H200": {"compute_cap": "9.0", "memory_mib": 143771, "torch_cuda": "12.8", "arch": CU128},
    "B200": {"compute_cap": "10.0", "memory_mib": 183359, "torch_cuda": "12.8", "arch": CU128},
    "RTX PRO 6000": {"compute_cap": "12.0", "memory_mib": 97887, "torch_cuda": "12.8", "arch": CU128},
    "RTX PRO 6000 cu126": {"compute_cap": "12.0", "memory_mib": 97887, "torch_cuda": "12.6", "arch": CU126},
    "RTX PRO 6000 cpu torch": {"compute_cap": "12.0", "memory_mib": 97887, "torch_cuda": None, "arch": ()},
    "B200 torch 12.6": {"compute_cap": "10.0", "memory_mib": 183359, "torch_cuda": "12.6", "arch": CU128},
    # the field evidence's GPUs (tests/data/gpu_field_evidence.json)
    "T4": {"compute_cap": "7.5", "memory_mib": 15360, "torch_cuda": "12.8", "arch": CU128},
    "RTX 5090": {"compute_cap": "12.0", "memory_mib": 32607, "torch_cuda": "12.8", "arch": CU128},
}

GPU_ROWS: list[GpuRow] = [
    # trtllm-mha-gpu (G001): 0.5.9 SM100 only, on any of the three flags
    ("0.5.9", ["--attention-backend", "trtllm_mha"], {}, "H200", ["G001"]),
    ("0.5.9", ["--prefill-attention-backend", "trtllm_mha"], {}, "RTX PRO 6000", ["G001"]),
    ("0.5.9", ["--attention-backend", "trtllm_mha"], {}, "B200", []),
    ("0.5.9", ["--attention-backend", "trtllm_mha"], {}, "B200 torch 12.6", ["G001"]),  # the probe needs CUDA 12.8
    ("0.5.9", ["--attention-backend", "flashinfer"], {}, "H200", []),
    # ... 0.5.23: Hopper, SM100 or SM120; SM120 prefill without an FP8 KV cache; prefill CP on SM100
    ("0.5.23", ["--attention-backend", "trtllm_mha"], {}, "H200", []),
    ("0.5.23", ["--attention-backend", "trtllm_mha"], {}, "A100", ["G001"]),
    ("0.5.23", ["--decode-attention-backend", "trtllm_mha"], {}, "L40S", ["G001"]),
    ("0.5.23", ["--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3"], {}, "RTX PRO 6000", ["G001"]),
    ("0.5.23", ["--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3"], {}, "B200", []),
    ("0.5.23", ["--attention-backend", "trtllm_mha"], {"SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": "0.5"},
     "RTX PRO 6000", ["G001"]),
    ("0.5.23", ["--attention-backend", "trtllm_mha"], {}, "RTX PRO 6000", []),
    ("0.5.23", ["--attention-backend", "trtllm_mha", "--attn-cp-size", "2", "--tp-size", "2"], {}, "H200", ["G001"]),
    # trtllm-mla-gpu (G002): Blackwell (SM10x/11x/12x) only, both pins
    ("0.5.9", ["--attention-backend", "trtllm_mla"], {}, "H200", ["G002"]),
    ("0.5.9", ["--attention-backend", "trtllm_mla"], {}, "RTX PRO 6000", []),
    ("0.5.23", ["--decode-attention-backend", "trtllm_mla"], {}, "H200", ["G002"]),
    ("0.5.23", ["--attention-backend", "trtllm_mla"], {}, "B200", []),
    # kv-cache-dtype-gpu (G003): 0.5.23's MXFP8 (Blackwell) and NVFP4 (SM100/SM120) KV caches
    ("0.5.23", ["--kv-cache-dtype", "mxfp8"], {}, "H200", ["G003"]),
    ("0.5.23", ["--kv-cache-dtype", "mxfp8"], {}, "RTX PRO 6000", []),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4"], {}, "H200", ["G003"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4"], {}, "B200", []),
    ("0.5.23", ["--kv-cache-dtype", "fp8_e4m3"], {}, "A100", []),
    ("0.5.9", ["--kv-cache-dtype", "fp8_e4m3"], {}, "A100", []),  # not a rule of 0.5.9
    # quantization-min-capability (G004): the method's get_min_capability() per pin
    ("0.5.9", ["--quantization", "modelopt_fp4"], {}, "H200", ["G004"]),  # 100 on 0.5.9
    ("0.5.23", ["--quantization", "modelopt_fp4"], {}, "H200", []),  # 80 on 0.5.23
    ("0.5.23", ["--quantization", "modelopt_fp8"], {}, "A100", ["G004"]),  # 89
    ("0.5.9", ["--quantization", "w8a8_fp8"], {}, "L40S", []),  # 89 on an 8.9
    ("0.5.23", ["--quantization", "mxfp8"], {}, "RTX PRO 6000", []),  # 100 <= 120
    ("0.5.23", ["--quantization", "fp8"], {}, "A100", []),
    # attention-registry-gpu (G005): fa3 is refused on SM100+ for every model kind
    ("0.5.9", ["--attention-backend", "fa3"], {}, "RTX PRO 6000", ["G005"]),
    ("0.5.23", ["--prefill-attention-backend", "fa3"], {}, "B200", ["G005"]),
    ("0.5.9", ["--attention-backend", "fa3"], {}, "H200", []),
    ("0.5.23", ["--attention-backend", "fa3"], {}, "A100", []),  # refused for MLA only: the model decides
    # moe-a2a-gpu (G007): megamoe on SM90/SM100, flashinfer_megamoe on SM100 only
    ("0.5.23", ["--moe-a2a-backend", "megamoe"], {}, "RTX PRO 6000", ["G007"]),
    ("0.5.23", ["--moe-a2a-backend", "megamoe"], {}, "A100", ["G007"]),
    ("0.5.23", ["--moe-a2a-backend", "megamoe"], {}, "H200", []),
    ("0.5.23", ["--moe-a2a-backend", "megamoe"], {}, "B200", []),
    ("0.5.23", ["--moe-a2a-backend", "flashinfer_megamoe", "--tp-size", "2", "--enable-dp-attention", "--dp-size", "2"],
     {}, "RTX PRO 6000", ["G007"]),
    # nvfp4-online-gpu (G008): SM100/SM103 only
    ("0.5.23", ["--quantization", "nvfp4_online"], {}, "RTX PRO 6000", ["G008"]),
    ("0.5.23", ["--quantization", "nvfp4_online"], {}, "B200", []),
    # fp4-indexer-gpu (G009): SM100 or SM120
    ("0.5.23", ["--enable-deepseek-v4-fp4-indexer"], {}, "H200", ["G009"]),
    ("0.5.23", ["--enable-deepseek-v4-fp4-indexer"], {}, "RTX PRO 6000", []),
    # mamba-stochastic-rounding-gpu (G010): the triton mamba backend's rounding is SM100-only
    ("0.5.23", ["--enable-mamba-cache-stochastic-rounding", "--mamba-ssm-dtype", "float16"], {}, "H200", ["G010"]),
    ("0.5.23", ["--enable-mamba-cache-stochastic-rounding", "--mamba-ssm-dtype", "float16"], {}, "RTX PRO 6000",
     ["G010"]),
    ("0.5.23", ["--enable-mamba-cache-stochastic-rounding", "--mamba-ssm-dtype", "float16"], {}, "B200", []),
    # cutedsl-mla-gpu (G011): the CuteDSL MLA decode backend is SM100-only (also as tokenspeed_mla)
    ("0.5.23", ["--decode-attention-backend", "cutedsl_mla"], {}, "RTX PRO 6000", ["G011"]),
    ("0.5.23", ["--attention-backend", "tokenspeed_mla"], {}, "H200", ["G011"]),
    ("0.5.23", ["--attention-backend", "cutedsl_mla"], {}, "B200", []),
    # nvfp4-prefill-gpu (G012): native NVFP4 prefill (asked for, or trtllm_mha's) is SM100-only
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype", "nvfp4"], {}, "RTX PRO 6000",
     ["G012"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--prefill-attention-backend", "trtllm_mha"], {}, "RTX PRO 6000",
     ["G012"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--prefill-kv-cache-dequant-dtype", "nvfp4"], {}, "B200", []),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--prefill-attention-backend", "flashinfer"], {}, "RTX PRO 6000", []),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4"], {}, "RTX PRO 6000", []),
    # linear-attn-flashinfer-gpu (G013): FlashInfer GDN on capability 10+ wants a bf16 state, CUDA 13 to prefill
    ("0.5.23", ["--linear-attn-decode-backend", "flashinfer", "--mamba-ssm-dtype", "float32"], {}, "B200", ["G013"]),
    ("0.5.23", ["--linear-attn-decode-backend", "flashinfer", "--mamba-ssm-dtype", "float32"], {}, "H200", []),
    ("0.5.23", ["--linear-attn-backend", "flashinfer"], {}, "RTX PRO 6000", ["G013"]),
    ("0.5.23", ["--linear-attn-verify-backend", "flashinfer", "--mamba-ssm-dtype", "float32"], {}, "RTX PRO 6000",
     ["G013"]),
    ("0.5.23", ["--linear-attn-prefill-backend", "flashinfer"], {}, "RTX PRO 6000", ["G013"]),
    ("0.5.23", ["--linear-attn-prefill-backend", "flashinfer"], {}, "H200", []),
    ("0.5.23", ["--linear-attn-decode-backend", "flashinfer", "--mamba-ssm-dtype", "bfloat16"], {}, "B200", []),
    # nvfp4-trtllm-sm100 (G014): SM100's native NVFP4 trtllm_mha layout refuses what does not keep it
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mha", "--speculative-algorithm", "NGRAM"],
     {}, "B200", ["G014"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mha", "--speculative-algorithm", "NGRAM",
                "--speculative-ngram-max-bfs-breadth", "1"], {}, "B200", []),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mha", "--enable-hierarchical-cache"], {},
     "B200", ["G014"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--decode-attention-backend", "trtllm_mha", "--speculative-algorithm",
                "EAGLE", "--speculative-draft-model-path", "fake_draft_model", "--speculative-draft-attention-backend",
                "flashinfer"], {}, "B200", ["G014"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mha", "--speculative-algorithm",
                "STANDALONE", "--speculative-draft-model-path", "fake_draft_model"], {}, "B200", ["G014"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "trtllm_mha", "--enable-hierarchical-cache"], {},
     "H200", ["G003", "G012"]),  # not SM100: the layout rule is quiet; the nvfp4 bounds speak
    # a written flashinfer is prefill only: nvfp4 resolves the decode backend to trtllm_mha on any model
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--attention-backend", "flashinfer", "--enable-hierarchical-cache"], {},
     "B200", ["G014"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--enable-lmcache"], {}, "B200", ["G014"]),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--enable-hierarchical-cache"], {}, "RTX PRO 6000", []),
    ("0.5.23", ["--kv-cache-dtype", "nvfp4", "--disaggregation-mode", "prefill"], {}, "B200", ["G014"]),
    # torch-kernel-image (G006): the host torch runs on the GPU
    ("0.5.9", [], {}, "RTX PRO 6000 cu126", ["G006"]),
    ("0.5.23", [], {}, "RTX PRO 6000 cpu torch", ["G006"]),
    ("0.5.23", [], {}, "RTX PRO 6000", []),
    ("0.5.9", [], {}, "H200", []),
]
