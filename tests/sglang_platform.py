"""Answer the real SGLang's device checks from declared GPU facts, on CPU (the GPU oracle's stand-in GPU).

Runs inside an SGLang venv (imported by tests/rules_differential_runner.py), standard library
and SGLang only. :func:`platform` is a context manager that makes one pin see one NVIDIA GPU:

* SGLang 0.5.23: its own ``sglang.srt.runtime_context.override_platform(...)``, the
  supported way to state the platform, with each fact computed as the pin's probe computes
  it (majors and minimum CUDA from the probe's own ``partial`` keywords);
* SGLang 0.5.9 (no override_platform): the capability probes it imports by name
  (``is_sm90_supported``, ``is_sm100_supported``, ``is_blackwell_supported`` ...) patched
  in ``utils.common`` and ``server_args``, computed the same way;
* both: ``torch.cuda`` answers the capability, the device name and availability, and
  ``torch.version.cuda`` the host torch's CUDA, for the direct reads
  (``torch.cuda.get_device_capability()`` ...); the device's memory for the defaults
  SGLang derives from it; FlashInfer counts as installed (as on the hosts gen renders for).

What imports read at import time (``_is_cuda = is_cuda()`` in the quantization kernels) is
imported first, with the machine's own answers, so no CUDA-only module is pulled in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

PROBES = ("is_sm80_supported", "is_ampere_with_cuda_12_3", "is_hopper_with_cuda_12_3", "is_sm90_supported",
          "is_sm100_supported", "is_sm100_or_sm110_supported", "is_sm110_supported", "is_sm120_supported",
          "is_blackwell_supported")
# override_platform's fact -> the probe of utils.common it stands for (0.5.23's _PLATFORM_PROBES).
OVERRIDES = {"is_sm90": "is_sm90_supported", "is_sm100": "is_sm100_supported", "is_sm120": "is_sm120_supported",
             "is_blackwell": "is_blackwell_supported", "is_hopper_with_cuda_12_3": "is_hopper_with_cuda_12_3",
             "is_sm100_or_sm110": "is_sm100_or_sm110_supported", "is_sm110": "is_sm110_supported"}


def probe_answers(common: Any, major: int, cuda: str) -> dict[str, bool]:
    """Each capability probe of the pin, answered for a GPU of that major under torch CUDA ``cuda``."""
    version = tuple(int(x) for x in cuda.split(".")[:2])
    out = {}
    for name in PROBES:
        fn = getattr(common, name, None)
        keywords = getattr(getattr(fn, "__wrapped__", None), "keywords", None)
        if keywords:
            out[name] = (major in keywords["device_capability_majors"]
                         and version >= tuple(keywords["cuda_version"]))
    return out


def preload() -> None:
    """Import what computes platform facts at import time, before any is patched."""
    import sglang.srt.layers.quantization  # noqa: F401
    import sglang.srt.server_args  # noqa: F401


@contextlib.contextmanager
def platform(facts: dict[str, Any]) -> Iterator[None]:
    """The pin sees one GPU: ``{"capability": [12, 0], "cuda": "12.8", "memory_mib": 97887, "name": ...}``."""
    import torch
    from sglang.srt import server_args
    from sglang.srt.utils import common

    preload()
    major, minor = facts["capability"]
    cuda = facts.get("cuda") or "12.8"
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
