"""What a pin's SGLang checks against the GPU: ``catalogs/sglang/<pin>.devices.json``.

Captured by ``gen sglang snapshot`` with :mod:`generator.sglang.deviceprobe` (the same
interpreter as the flag catalog, locally or over SSH) and committed beside it. The GPU rules
read :func:`load_devices`:

* :meth:`Devices.probe`: SGLang's capability probes (``is_sm100_supported`` ...) answered
  from a GPU's compute capability and the host torch's CUDA, the way SGLang computes them;
* :meth:`Devices.min_capability`: a quantization method's minimum capability (the model
  loader refuses a GPU below it);
* :meth:`Devices.registry_refusal`: what the attention backend registry says when it
  refuses a backend for a capability, for MHA or MLA models;
* :meth:`Devices.picks`: what the pin picks itself (attention backend, MoE runner) on a GPU
  of a capability when the service writes none, per stand-in architecture (an MHA Llama,
  an MLA DeepSeek-V3), as its own ``prepare_server_args`` chose (``gen show`` says it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.load import json_text
from generator.load.captured import captured_json
from generator.sglang.catalog import companion_path, load_companion
from generator.sglang.snapshot import DEFAULT_TIMEOUT, SnapshotError, run_piped_probe

PROBE = Path(__file__).resolve().parent / "deviceprobe.py"
FORMAT = 1

Capability = tuple[int, int]


def _version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(x) for x in text.split(".")[:2])
    except ValueError:
        return None


@dataclass(frozen=True)
class Devices:
    """One pin's device checks, as its probe captured them."""

    probes: dict[str, tuple[tuple[int, ...], tuple[int, ...]]]  # name -> (majors, minimum torch CUDA)
    quantization: dict[str, int | None]
    registry: dict[str, dict[str, dict[str, str]]]  # backend -> mha|mla -> capability -> message
    # architecture -> capability -> {"attention_backend": ..., "moe_runner_backend": ...} (or {"refused": ...})
    auto: dict[str, dict[str, dict[str, str | None]]] = field(default_factory=dict)
    auto_cuda: str | None = None  # the torch CUDA the picks were made under

    def probe(self, name: str, capability: Capability, torch_cuda: str | None) -> bool:
        """SGLang's ``name()`` on that GPU. A torch CUDA not known is taken as new enough
        (the torch rule, G002, says when it is not); an unknown probe is False."""
        found = self.probes.get(name)
        if found is None:
            return False
        majors, cuda = found
        version = _version(torch_cuda)
        return capability[0] in majors and (version is None or version >= cuda)

    def min_capability(self, method: str) -> int | None:
        """The quantization method's minimum capability (major * 10 + minor); None when unknown."""
        return self.quantization.get(method)

    def registry_refusal(self, backend: str, mla: bool, capability: Capability) -> str | None:
        """SGLang's words when its attention registry refuses ``backend`` on that GPU."""
        return self.registry.get(backend, {}).get("mla" if mla else "mha", {}).get(f"{capability[0]}.{capability[1]}")


    def picks(self, capability: Capability) -> dict[str, dict[str, str | None]]:
        """architecture -> what the pin picks on a GPU of ``capability`` (empty: not captured)."""
        cap = f"{capability[0]}.{capability[1]}"
        return {arch: dict(by_cap[cap]) for arch, by_cap in sorted(self.auto.items()) if cap in by_cap}


def devices_path(catalog_file: Path) -> Path:
    """``<pin>.devices.json`` beside ``<pin>.json``."""
    return companion_path(catalog_file, "devices")


def load_devices(catalog_file: Path) -> Devices | None:
    """The pin's device checks, or None when no file was captured for it."""
    return load_companion(catalog_file, "devices", parse_devices, f"a devices file (format {FORMAT})")


def parse_devices(data: Any) -> Devices:
    """A devices document as :class:`Devices`; ValueError/KeyError/TypeError when malformed."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("not format 1")
    probes = {str(k): (tuple(int(m) for m in v["majors"]), tuple(int(c) for c in v["cuda"]))
              for k, v in data["probes"].items()}
    quantization = {str(k): (int(v) if v is not None else None) for k, v in data["quantization"].items()}
    registry: dict[str, dict[str, dict[str, str]]] = {}
    for backend, kinds in data["attention_registry"].items():
        registry[str(backend)] = {kind: {str(cap): str(group["message"]) for group in groups
                                         for cap in group["capabilities"]} for kind, groups in kinds.items()}
    auto_doc = data.get("auto_choices") or {"models": {}}  # files captured before the picks: none
    auto = {str(arch): {str(cap): {str(k): (None if v is None else str(v)) for k, v in pick.items()}
                        for cap, pick in by_cap.items()} for arch, by_cap in auto_doc["models"].items()}
    return Devices(probes, quantization, registry, auto, auto_doc.get("cuda"))


def _checked(stdout: bytes, what: str) -> bytes:
    """The file text of the probe's document, stamped with its capture digest."""
    try:
        data = json_text.loads(stdout)
        parse_devices(data)
        return captured_json(data).encode("ascii")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SnapshotError(f"{what}: the devices probe's output is not a devices file (format {FORMAT}): "
                            f"{exc}") from exc


def snapshot_devices_python(python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The device checks of the SGLang installed for the local interpreter ``python``."""
    return _checked(*run_piped_probe(PROBE.read_bytes(), python, f"SGLang device checks with {python}",
                                     timeout=timeout))


def snapshot_devices_remote(prefix: Sequence[str], python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The device checks of the SGLang on a host, with the probe piped over SSH."""
    return _checked(*run_piped_probe(PROBE.read_bytes(), python, f"SGLang device checks with {python}",
                                     prefix=prefix, timeout=timeout))
