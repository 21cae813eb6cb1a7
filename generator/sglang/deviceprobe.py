"""Probe: what one SGLang checks against the GPU, as data (``catalogs/sglang/<pin>.devices.json``).

Run inside the target interpreter (``PYTHON - < deviceprobe.py``, locally or over SSH, like
the flag, env and architecture probes); standard library only at module level, one JSON
document on stdout (format 1). No GPU is needed: each check is run with the capability
answered by this probe, for every compute capability of :data:`CAPABILITIES`.

* ``probes``: SGLang's capability probes (``utils.common.is_sm90_supported`` ...) as the
  majors and the minimum ``torch.version.cuda`` each one tests (they are ``partial``s of
  ``_check_cuda_device_version``; read from their keywords, not copied);
* ``quantization``: each registered quantization method's ``get_min_capability()``, the
  model loader's "is not supported for the current GPU" bound (an instance method is
  asked on an instance whose other settings are off; ``mxfp8`` with ``use_mxfp8``);
* ``attention_registry``: per registered attention backend, for MHA and MLA models, the
  capabilities its creator in ``layers/attention/attention_registry.py`` refuses, grouped
  by SGLang's words (``[{"capabilities": ["10.0", ...], "message": ...}]``): the creator is called with a stand-in model runner while the
  capability probes answer that capability; an ``AssertionError``/``ValueError`` raised
  in the registry itself is a refusal, anything raised further in (the backend's own
  construction, which needs a GPU) means the registry let it through.

* ``auto_choices``: what the pin picks when the service writes no attention backend (and
  the MoE runner it leaves), for each capability of :data:`CAPABILITIES`: the pin's own
  ``prepare_server_args`` run on a stand-in checkpoint of each architecture of
  :data:`AUTO_MODELS` (a Llama, MHA; a DeepSeek-V3, MLA; a Qwen3-Next, hybrid linear
  attention: a tiny config.json, no weights)
  while :func:`platform` makes it see one NVIDIA GPU of that capability under torch CUDA
  :data:`AUTO_CUDA` (the CUDA the pins' wheels are built for). :func:`platform` is also the
  stand-in GPU of the GPU oracle (tests/sglang_platform.py imports it).

No date: a re-capture of one install is byte-identical (gen stamps the capture header's
digest, generator/load/captured.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import traceback
import types
import warnings
from collections.abc import Iterator
from typing import Any

PROBE_FORMAT = 1
# Every CUDA compute capability SGLang distinguishes (V100 .. GB10).
CAPABILITIES = ((7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1))
PROBE_NAMES = ("is_sm80_supported", "is_ampere_with_cuda_12_3", "is_hopper_with_cuda_12_3", "is_sm90_supported",
               "is_sm100_supported", "is_sm100_or_sm110_supported", "is_sm110_supported", "is_sm120_supported",
               "is_blackwell_supported")
REFUSALS = (AssertionError, ValueError, NotImplementedError)
# override_platform's fact -> the probe of utils.common it stands for (0.5.23's _PLATFORM_PROBES).
OVERRIDES = {"is_sm90": "is_sm90_supported", "is_sm100": "is_sm100_supported", "is_sm120": "is_sm120_supported",
             "is_blackwell": "is_blackwell_supported", "is_hopper_with_cuda_12_3": "is_hopper_with_cuda_12_3",
             "is_sm100_or_sm110": "is_sm100_or_sm110_supported", "is_sm110": "is_sm110_supported"}
AUTO_CUDA = "12.8"
# The stand-in checkpoints whose automatic choices are captured: tiny config.json files of an
# MHA (Llama), an MLA (DeepSeek-V3) and a hybrid linear-attention (Qwen3-Next: Gated DeltaNet
# layers beside full attention, the seed Qwen3.5's kind) model. SGLang picks by architecture
# as well as by GPU.
AUTO_MODELS: dict[str, dict[str, Any]] = {
    "LlamaForCausalLM": {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
        "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 4, "num_hidden_layers": 2,
        "vocab_size": 1000, "max_position_embeddings": 2048, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5},
    "DeepseekV3ForCausalLM": {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 256,
        "intermediate_size": 512, "moe_intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 4,
        "num_hidden_layers": 2, "vocab_size": 1000, "max_position_embeddings": 2048, "torch_dtype": "bfloat16",
        "rms_norm_eps": 1e-6, "kv_lora_rank": 64, "q_lora_rank": 96, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16,
        "v_head_dim": 32, "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "moe_layer_freq": 1, "n_group": 1, "topk_group": 1, "routed_scaling_factor": 2.5,
        "norm_topk_prob": True, "scoring_func": "sigmoid", "topk_method": "noaux_tc"},
    "Qwen3NextForCausalLM": {
        "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 256,
        "intermediate_size": 512, "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 4,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 32, "linear_num_key_heads": 2,
        "linear_num_value_heads": 4, "linear_value_head_dim": 32, "num_experts": 8, "num_experts_per_tok": 2,
        "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": True, "partial_rotary_factor": 0.25,
        "rms_norm_eps": 1e-6, "rope_theta": 10000000, "vocab_size": 1000, "max_position_embeddings": 2048,
        "torch_dtype": "bfloat16", "tie_word_embeddings": False},
}


def _quiet() -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    sink = io.StringIO()
    stack.enter_context(contextlib.redirect_stdout(sink))
    stack.enter_context(contextlib.redirect_stderr(sink))
    return stack


def _probes(common: types.ModuleType) -> dict:
    out = {}
    for name in PROBE_NAMES:
        fn = getattr(common, name, None)
        partial = getattr(fn, "__wrapped__", None)
        keywords = getattr(partial, "keywords", None)
        if keywords and "device_capability_majors" in keywords:
            out[name] = {"majors": list(keywords["device_capability_majors"]),
                         "cuda": list(keywords["cuda_version"])}
    return out


def _min_capability(name: str, cls: type) -> object:
    try:
        return cls.get_min_capability()  # type: ignore[attr-defined]  # every QuantizationConfig has it
    except TypeError:
        pass  # an instance method: ask an instance whose other settings are off

    def _off(self: object, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return False

    stand_in = type(f"StandIn{cls.__name__}", (cls,), {"__getattr__": _off})
    instance: Any = object.__new__(stand_in)
    instance.__dict__["use_mxfp8"] = name == "mxfp8"
    return instance.get_min_capability()


def _quantization() -> dict:
    from sglang.srt.layers.quantization import QUANTIZATION_METHODS

    out = {}
    for name, cls in sorted(QUANTIZATION_METHODS.items()):
        try:
            value = _min_capability(name, cls)
            out[name] = int(value) if isinstance(value, int) else None
        except Exception:  # noqa: BLE001 - a method this probe cannot ask stays unknown (null)
            out[name] = None
    return out


def _stand_in_runner(mla: bool) -> types.SimpleNamespace:
    """What the registry's creators read of a ModelRunner, for a Llama-like (or MLA) model."""
    import torch

    hf = types.SimpleNamespace(architectures=["LlamaForCausalLM"])
    model = types.SimpleNamespace(is_encoder_decoder=False, hf_config=hf, hf_text_config=hf, attention_arch=None)
    args = types.SimpleNamespace(attention_backend=None, speculative_algorithm=None)
    return types.SimpleNamespace(use_mla_backend=mla, model_config=model, server_args=args,
                                 kv_cache_dtype=torch.bfloat16, init_new_workspace=False)


@contextlib.contextmanager
def _capability(reg: Any, major: int, minor: int) -> Iterator[None]:
    """The registry and torch answer (major, minor); 0.5.23's platform facts say the same."""
    import torch

    saved = torch.cuda.get_device_capability, getattr(reg, "get_device_capability", None)
    answer = lambda *_a, **_k: (major, minor)  # noqa: E731 - a stand-in for the device query
    torch.cuda.get_device_capability = answer
    if saved[1] is not None:
        reg.get_device_capability = answer
    override = contextlib.nullcontext()
    try:
        from sglang.srt.runtime_context import override_platform

        sm = major * 10 + minor
        override = override_platform(is_cuda=True, is_sm90=major == 9, is_sm100=major == 10,
                                     is_sm120=major == 12, is_blackwell=major in (10, 11, 12),
                                     device_sm=sm, device_capability=(major, minor))
    except ImportError:
        pass  # 0.5.9: the registry reads torch directly
    try:
        with override:
            yield
    finally:
        torch.cuda.get_device_capability = saved[0]
        if saved[1] is not None:
            reg.get_device_capability = saved[1]


def _refusal(reg: Any, name: str, mla: bool) -> str | None:
    """SGLang's words when the registry's creator of ``name`` refuses (None: it lets it through)."""
    try:
        with _quiet():
            reg.ATTENTION_BACKENDS[name](_stand_in_runner(mla))
    except REFUSALS as exc:
        if traceback.extract_tb(exc.__traceback__)[-1].filename == reg.__file__:
            return str(exc)
    except BaseException:  # noqa: BLE001 - raised beyond the registry's checks: let through
        pass
    return None


def _registry() -> dict:
    """backend -> mha|mla -> [{"capabilities": [...], "message": ...}] (only what it refuses)."""
    from sglang.srt.layers.attention import attention_registry as reg

    out: dict = {}
    for name in sorted(reg.ATTENTION_BACKENDS):
        out[name] = {}
        for kind in ("mha", "mla"):
            groups: dict = {}
            for major, minor in CAPABILITIES:
                with _capability(reg, major, minor):
                    message = _refusal(reg, name, kind == "mla")
                if message is not None:
                    groups.setdefault(message, []).append(f"{major}.{minor}")
            out[name][kind] = [{"capabilities": caps, "message": message} for message, caps in groups.items()]
    return out


def probe_answers(common: Any, major: int, cuda: str) -> dict[str, bool]:
    """Each capability probe of the pin, answered for a GPU of that major under torch CUDA ``cuda``."""
    version = tuple(int(x) for x in cuda.split(".")[:2])
    out = {}
    for name in PROBE_NAMES:
        fn = getattr(common, name, None)
        keywords = getattr(getattr(fn, "__wrapped__", None), "keywords", None)
        if keywords:
            out[name] = (major in keywords["device_capability_majors"]
                         and version >= tuple(keywords["cuda_version"]))
    return out


def preload() -> None:
    """Import what computes platform facts at import time, before any is patched."""
    import sglang.srt.layers.quantization
    import sglang.srt.server_args  # noqa: F401


@contextlib.contextmanager
def platform(facts: dict[str, Any]) -> Iterator[None]:
    """The pin sees one NVIDIA GPU: ``{"capability": [12, 0], "cuda": "12.8", "memory_mib": 97887, "name": ...}``.

    * SGLang 0.5.23: its own ``sglang.srt.runtime_context.override_platform(...)``, with each
      fact computed as the pin's probe computes it (majors and minimum CUDA from the probe's
      own ``partial`` keywords);
    * SGLang 0.5.9 (no override_platform): the capability probes it imports by name
      patched in ``utils.common`` and ``server_args``, computed the same way;
    * both: ``torch.cuda`` answers the capability, the device name and availability, and
      ``torch.version.cuda`` the host torch's CUDA; the device's memory for the defaults
      SGLang derives from it; FlashInfer counts as installed (as on the hosts gen renders for).
    """
    import torch
    from sglang.srt import server_args
    from sglang.srt.utils import common

    preload()
    major, minor = facts["capability"]
    cuda = facts.get("cuda") or AUTO_CUDA
    answers = probe_answers(common, major, cuda)
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        if hasattr(owner, name):
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, value)

    patch(torch.cuda, "get_device_capability", lambda *_a, **_k: (major, minor))
    patch(torch.cuda, "is_available", lambda: True)
    patch(torch.cuda, "get_device_name", lambda *_a, **_k: facts.get("name", "NVIDIA stand-in GPU"))
    patch(torch.version, "cuda", cuda)
    for owner in (common, server_args):
        for name, answer in answers.items():
            patch(owner, name, lambda answer=answer: answer)
        patch(owner, "is_cuda", lambda: True)
        patch(owner, "get_device_sm", lambda: major * 10 + minor)
        patch(owner, "get_device_memory_capacity", lambda *_a, **_k: facts.get("memory_mib", 98304))
        patch(owner, "is_flashinfer_available", lambda: True)
    override: Any = contextlib.nullcontext()
    try:
        from sglang.srt.runtime_context import override_platform

        override = override_platform(is_cuda=True, has_flashinfer=True, device_sm=major * 10 + minor,
                                     device_capability=(major, minor),
                                     **{fact: answers[probe] for fact, probe in OVERRIDES.items() if probe in answers})
    except ImportError:
        pass  # 0.5.9: the patched probes are what it reads
    try:
        with override:
            yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def _resolved(args: Any, name: str) -> Any:
    """A setting after SGLang's own choice (0.5.23 keeps the resolved values in a view)."""
    try:
        from sglang.srt.arg_groups.model_override_base import resolved_view
    except ImportError:
        return getattr(args, name, None)
    return getattr(resolved_view(args), name, None)


def _pick(model: str, major: int, minor: int) -> dict:
    """What the pin's ServerArgs picks for ``model`` on that GPU when nothing is written."""
    from sglang.srt.server_args import prepare_server_args

    try:
        with _quiet(), platform({"capability": [major, minor], "cuda": AUTO_CUDA}):
            args = prepare_server_args(["--model-path", model, "--device", "cuda"])
            if hasattr(args, "resolve_once"):
                args.resolve_once()
            return {"attention_backend": _resolved(args, "attention_backend"),
                    "moe_runner_backend": _resolved(args, "moe_runner_backend")}
    except Exception as exc:  # noqa: BLE001 - the pin refuses the stand-in on this GPU: say so
        return {"refused": f"{type(exc).__name__}: {str(exc)[:200]}"}


def _auto() -> dict:
    """architecture -> capability -> the pin's picks (module docstring)."""
    out: dict = {"cuda": AUTO_CUDA, "models": {}}
    with tempfile.TemporaryDirectory(prefix="gen-deviceprobe-") as folder:
        for arch, config in AUTO_MODELS.items():
            path = os.path.join(folder, arch)
            os.makedirs(path)
            with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as fh:
                json.dump(config, fh)
            out["models"][arch] = {f"{major}.{minor}": _pick(path, major, minor) for major, minor in CAPABILITIES}
    return out


def probe() -> dict:
    """The devices document (module docstring)."""
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    with _quiet():
        import sglang
        from sglang.srt.utils import common

    return {"format": PROBE_FORMAT, "captured": {"tool": "gen sglang snapshot", "probe": PROBE_FORMAT},
            "sglang": getattr(sglang, "__version__", None),
            "capabilities": [f"{a}.{b}" for a, b in CAPABILITIES], "probes": _probes(common),
            "quantization": _quantization(), "attention_registry": _registry(), "auto_choices": _auto()}


if __name__ == "__main__":
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # what SGLang prints on import is not the document
    document = probe()
    sys.stdout = real_stdout
    sys.stdout.write(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=True) + "\n")
