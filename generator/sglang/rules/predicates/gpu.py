"""Predicates of the GPU rules (G codes): SGLang's device checks answered from the declared GPU.

Each reads ``s.gpu`` (generator/sglang/gpu.py: the service's compute capability as
``gpus[].compute_cap`` declares it, the host torch from ``facts:``, the pin's captured device
checks ``catalogs/sglang/<pin>.devices.json``) and stays silent when it is None. A capability
probe (``is_sm100_supported`` ...) is answered the way the pin computes it, from the GPU's
major and the host torch's CUDA (:meth:`GpuFacts.probe`).
"""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.predicates.attention import backends
from generator.sglang.rules.registry import Hit, check, first_broken, predicate, quiet
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

_BACKENDS = ("attention_backend", "decode_attention_backend", "prefill_attention_backend")


def _phases(s: Settings) -> tuple[str | None, str | None]:
    """(prefill, decode) backends as 0.5.23's attention_backends_of reads them (as written)."""
    base, decode, prefill = backends(s)
    return prefill or base, decode or base


def _gpu_fields(gpu: Any) -> dict[str, object]:
    """The fields every G text may print: the capability as written and as SGLang's SM number, the GPU's name."""
    return {"cap": gpu.compute_cap, "sm": gpu.sm, "gpu_name": gpu.model or "GPU"}


@predicate("trtllm-mha-gpu")
def _trtllm_mha_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None:
        return None
    fields = _gpu_fields(gpu)
    if not s.at_least(0, 5, 23):
        # 0.5.9's _handle_attention_backend_compatibility: any of the three flags, SM100 only.
        written = [n for n, v in zip(_BACKENDS, backends(s), strict=True) if v == "trtllm_mha"]
        return first_broken([check(written and not gpu.probe("is_sm100_supported"), "sm100-only",
                                   tuple(written), backend=s.flag(written[0]) if written else "")], **fields)
    prefill, decode = _phases(s)
    if "trtllm_mha" not in (prefill, decode):
        return None
    hopper_or_blackwell = (gpu.probe("is_sm90_supported") or gpu.probe("is_sm100_supported")
                           or gpu.probe("is_sm120_supported"))
    skip = s.env.get("SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR", "")
    try:
        skip_softmax = float(skip) > 0 if skip else False
    except ValueError:
        skip_softmax = False  # SGLang's EnvFloat refuses it first (the E codes say so)
    prefill_blame = ("prefill_attention_backend", "attention_backend")
    decode_blame = ("decode_attention_backend", "attention_backend")
    return first_broken([
        check(prefill == "trtllm_mha" and not hopper_or_blackwell, "prefill", prefill_blame),
        check(prefill == "trtllm_mha" and gpu.probe("is_sm120_supported")
              and (s.get("kv_cache_dtype") == "fp8_e4m3" or skip_softmax), "sm120-fp8-prefill",
              ("kv_cache_dtype", *prefill_blame)),
        check(decode == "trtllm_mha" and not hopper_or_blackwell, "decode", decode_blame),
        check(prefill == "trtllm_mha" and not gpu.probe("is_sm100_supported") and s.integer("attn_cp_size", 1) > 1,
              "prefill-cp", ("attn_cp_size", *prefill_blame)),
    ], **fields)


@predicate("trtllm-mla-gpu")
def _trtllm_mla_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None:
        return None
    base, decode, _prefill = backends(s)  # 0.5.23's tokenspeed_mla alias is trtllm_mla's decode
    if "trtllm_mla" not in (base, decode) or gpu.probe("is_blackwell_supported"):
        return None
    return Hit(("attention_backend", "decode_attention_backend"), _gpu_fields(gpu))


@predicate("kv-cache-dtype-gpu")
def _kv_cache_dtype_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23):
        return None
    kv = s.get("kv_cache_dtype")
    return first_broken([
        # handle_mxfp8_kv_cache_compatibility runs before handle_kv4_compatibility
        check(kv == "mxfp8" and not gpu.probe("is_blackwell_supported"), "mxfp8", ("kv_cache_dtype",)),
        check(kv == "nvfp4" and not (gpu.probe("is_sm100_supported") or gpu.probe("is_sm120_supported")),
              "nvfp4", ("kv_cache_dtype",)),
    ], **_gpu_fields(gpu))


@predicate("quantization-min-capability")
def _quantization_min_capability(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    method = s.text("quantization")
    if gpu is None or gpu.devices is None or method is None:
        return None
    minimum = gpu.devices.min_capability(method)
    if minimum is None or gpu.sm >= minimum:
        return None
    return Hit(("quantization",), {**_gpu_fields(gpu), "method": method, "minimum": minimum})


@predicate("attention-registry-gpu")
def _attention_registry_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or gpu.devices is None:
        return None
    for name, backend in zip(_BACKENDS, backends(s), strict=True):
        if backend is None:
            continue
        # Whether the model is MLA is not known here: only a refusal for both kinds is certain.
        mha = gpu.devices.registry_refusal(backend, False, gpu.capability)
        mla = gpu.devices.registry_refusal(backend, True, gpu.capability)
        if mha is not None and mla is not None:
            return Hit((name,), {**_gpu_fields(gpu), "backend_flag": s.flag(name), "backend": backend,
                                 "sglang": mha})
    return None


@predicate("torch-kernel-image")
def _torch_kernel_image(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not gpu.torch_known:
        return None
    arch = gpu.torch_arch_list
    fields = {**_gpu_fields(gpu), "arch": list(arch or ())}
    return first_broken([
        check(gpu.torch_cuda is None, "no-cuda"),
        check(arch is not None and gpu.kernel_image() is None, "no-kernel-image"),
    ], **fields)


# ---- G007-G014: 0.5.23's feature checks on the platform (get_platform().is_sm100 ...) ----
# The platform facts are the probes' answers (override_platform's is_sm100 is is_sm100_supported);
# a capability read straight from torch (torch.cuda.get_device_capability()[0] >= 10) is the major.


@predicate("moe-a2a-gpu")
def _moe_a2a_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23):
        return None
    a2a = s.get("moe_a2a_backend")
    return first_broken([
        # check_mega_moe_compat refuses two-batch / single-batch overlap first, on any GPU
        quiet(a2a == "megamoe" and (s.on("enable_two_batch_overlap") or s.on("enable_single_batch_overlap"))),
        check(a2a == "megamoe" and not (gpu.probe("is_sm90_supported") or gpu.probe("is_sm100_supported")),
              "megamoe", ("moe_a2a_backend",)),
        # handle_a2a_moe: every check before the SM100 one refuses or passes, so off SM100 it is refused
        check(a2a == "flashinfer_megamoe" and not gpu.probe("is_sm100_supported"),
              "flashinfer-megamoe", ("moe_a2a_backend",)),
    ], **_gpu_fields(gpu))


@predicate("nvfp4-online-gpu")
def _nvfp4_online_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23) or s.get("quantization") != "nvfp4_online":
        return None
    return None if gpu.probe("is_sm100_supported") else Hit(("quantization",), _gpu_fields(gpu))


@predicate("fp4-indexer-gpu")
def _fp4_indexer_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23) or not s.on("enable_deepseek_v4_fp4_indexer"):
        return None
    if gpu.probe("is_sm100_supported") or gpu.probe("is_sm120_supported"):
        return None
    return Hit(("enable_deepseek_v4_fp4_indexer",), _gpu_fields(gpu))


@predicate("mamba-stochastic-rounding-gpu")
def _mamba_stochastic_rounding_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23) or not s.on("enable_mamba_cache_stochastic_rounding"):
        return None
    # handle_mamba_backend: a --mamba-ssm-dtype other than float16 is refused first (another rule)
    if s.get("mamba_ssm_dtype") != "float16" or s.get("mamba_backend", "triton") != "triton":
        return None
    if gpu.probe("is_sm100_supported"):
        return None
    return Hit(("enable_mamba_cache_stochastic_rounding", "mamba_backend"), _gpu_fields(gpu))


@predicate("cutedsl-mla-gpu")
def _cutedsl_mla_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23):
        return None
    base, decode, prefill = backends(s)
    # _cutedsl_prefill_backend_fill asserts a prefill cutedsl_mla away first (cutedsl-mla says so)
    if prefill == "cutedsl_mla" or gpu.probe("is_sm100_supported"):
        return None
    for name, backend in (("decode_attention_backend", decode), ("attention_backend", base)):
        if backend == "cutedsl_mla":
            return Hit((name,), {**_gpu_fields(gpu), "backend_flag": s.flag(name), "backend": s.get(name)})
    return None


@predicate("nvfp4-prefill-gpu")
def _nvfp4_prefill_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23) or s.get("kv_cache_dtype") != "nvfp4":
        return None
    if gpu.probe("is_sm100_supported"):
        return None
    # handle_nvfp4_prefill_kv_dequant_dtype: "auto" follows the written prefill backend
    # (trtllm_mha prefills native NVFP4, flashinfer an FP8 workspace); unwritten, it is
    # native NVFP4 only on SM100.
    base, _decode, prefill = backends(s)
    requested = s.get("prefill_kv_cache_dequant_dtype", "auto")
    return first_broken([
        check(requested == "nvfp4", "dtype", ("prefill_kv_cache_dequant_dtype", "kv_cache_dtype")),
        check(requested == "auto" and (prefill or base) == "trtllm_mha", "backend",
              ("prefill_attention_backend", "attention_backend", "kv_cache_dtype")),
    ], **_gpu_fields(gpu))


@predicate("linear-attn-flashinfer-gpu")
def _linear_attn_flashinfer_gpu(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23) or gpu.capability[0] < 10:
        return None
    # handle_linear_attn_backend (torch.cuda.get_device_capability()[0] >= 10). The SM100
    # default (flashinfer decode) applies only with a bfloat16 SSM state, which passes.
    explicit = s.get("linear_attn_decode_backend")
    decode = explicit or s.get("linear_attn_backend", "triton")
    if decode == "flashkda":
        decode = "triton"  # inherited flashkda falls back to triton (an explicit one: linear-replayssm)
    dtype = s.get("mamba_ssm_dtype")
    verify = s.get("linear_attn_verify_backend") or ("flashinfer" if decode == "flashinfer" else None)
    prefill = s.get("linear_attn_prefill_backend") or s.get("linear_attn_backend", "triton")
    cuda = gpu.torch_cuda if gpu.torch_known else None
    try:
        cuda_major = int(cuda.split(".")[0]) if cuda else None
    except ValueError:
        cuda_major = None
    return first_broken([
        quiet(explicit == "flashkda"),
        check(decode == "flashinfer" and dtype != "bfloat16", "decode",
              ("linear_attn_decode_backend", "linear_attn_backend", "mamba_ssm_dtype"), dtype=dtype),
        # SGLANG_ENABLE_PP_SPEC moves a KDA model's verify to triton (the model decides): silent then
        check(verify == "flashinfer" and dtype != "bfloat16" and not s.env_true("SGLANG_ENABLE_PP_SPEC"), "verify",
              ("linear_attn_verify_backend", "mamba_ssm_dtype"), dtype=dtype),
        check(prefill == "flashinfer" and cuda_major is not None and cuda_major < 13, "prefill-cuda",
              ("linear_attn_prefill_backend", "linear_attn_backend"), torch_cuda=cuda),
    ], **_gpu_fields(gpu))


_NATIVE_NVFP4_SPEC = ("EAGLE", "EAGLE3", "NEXTN", "NGRAM")


@predicate("nvfp4-trtllm-sm100")
def _nvfp4_trtllm_sm100(s: Settings, rule: RuleSpec) -> Hit | None:
    gpu = s.gpu
    if gpu is None or not s.at_least(0, 5, 23) or s.get("kv_cache_dtype") != "nvfp4":
        return None
    # handle_kv4_compatibility's uses_sm100_trtllm_nvfp4 reads the resolved backends: an
    # nvfp4 KV cache always resolves the decode backend to trtllm_mha (the earlier
    # handle_nvfp4_prefill_kv_dequant_dtype, or its refusal: nvfp4-prefill-dequant), whatever
    # the model, so on SM100 it holds whenever the cache is nvfp4.
    if not gpu.probe("is_sm100_supported"):
        return None
    written = s.text("speculative_algorithm")
    algorithm = written.upper() if written else None
    breadth = s.get("speculative_ngram_max_bfs_breadth", 10)
    draft = s.get("speculative_draft_attention_backend")
    mode = s.get("disaggregation_mode", "null")
    return first_broken([
        check(algorithm in ("DFLASH", "DSPARK"), "dflash-dspark", ("speculative_algorithm",), algorithm=written),
        check(algorithm is not None and algorithm not in _NATIVE_NVFP4_SPEC, "algorithm", ("speculative_algorithm",),
              algorithm=written),
        check(algorithm == "NGRAM" and breadth != 1, "ngram-breadth",
              ("speculative_ngram_max_bfs_breadth", "speculative_algorithm"), breadth=breadth),
        check(algorithm not in (None, "NGRAM") and draft is not None and draft != "trtllm_mha", "draft-backend",
              ("speculative_draft_attention_backend",), draft=draft),
        check(mode != "null", "disaggregation", ("disaggregation_mode",), mode=mode),
        check(s.on("enable_hierarchical_cache") or s.on("enable_lmcache"), "host-cache",
              ("enable_hierarchical_cache", "enable_lmcache")),
    ], **_gpu_fields(gpu))
