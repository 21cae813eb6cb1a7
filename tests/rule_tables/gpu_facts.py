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
    # torch-kernel-image (G006): the host torch runs on the GPU
    ("0.5.9", [], {}, "RTX PRO 6000 cu126", ["G006"]),
    ("0.5.23", [], {}, "RTX PRO 6000 cpu torch", ["G006"]),
    ("0.5.23", [], {}, "RTX PRO 6000", []),
    ("0.5.9", [], {}, "H200", []),
]
