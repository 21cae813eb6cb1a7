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
from generator.sglang.rules.registry import Hit, check, first_broken, predicate
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
