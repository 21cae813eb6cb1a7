"""The model architectures a pin's SGLang registers: ``catalogs/sglang/<pin>.architectures.json``.

Captured by ``gen sglang snapshot`` with the probe :mod:`generator.sglang.archprobe` (the same
interpreter as the flag catalog, locally or over SSH) and committed beside the flag catalog.
The rules read :func:`load_architectures` for "is this checkpoint's architecture one SGLang
can build": SGLang's own registry (imported, or read from a module's source when it cannot be
imported on the capturing machine), and the model classes of the Transformers installed
beside it (SGLang's Transformers fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from generator.load.captured import captured_json
from generator.sglang.catalog import companion_path, load_companion
from generator.sglang.snapshot import DEFAULT_TIMEOUT, probe_document, run_piped_probe

PROBE = Path(__file__).resolve().parent / "archprobe.py"


@dataclass(frozen=True)
class Architectures:
    """One pin's registered model classes and its Transformers' model classes."""

    sglang: frozenset[str]
    transformers: frozenset[str]
    transformers_version: str | None
    # Transformers classes whose is_backend_compatible() is False (SGLang's fallback refuses
    # them); None when the file predates the capture of it: gen then cannot say.
    backend_incompatible: frozenset[str] | None = None
    # Transformers classes the probe could not import (a missing optional dependency): unknown.
    unresolved: frozenset[str] = frozenset()
    # The model_type values AutoConfig recognizes with SGLang's own config classes registered;
    # None when the file predates the capture of them.
    model_types: frozenset[str] | None = None

    def backend_compatible(self, architecture: str) -> bool | None:
        """Whether SGLang's Transformers fallback accepts Transformers' class ``architecture``
        (its own ``is_backend_compatible()``), None when the capture does not know."""
        if self.backend_incompatible is None or architecture in self.unresolved:
            return None
        return architecture not in self.backend_incompatible

    def registered(self, architecture: str) -> bool:
        """True when SGLang's own registry has the class."""
        return architecture in self.sglang


def architectures_path(catalog_file: Path) -> Path:
    """``<pin>.architectures.json`` beside ``<pin>.json``."""
    return companion_path(catalog_file, "architectures")


def load_architectures(catalog_file: Path) -> Architectures | None:
    """The pin's architectures, or None when no file was captured for it."""
    return load_companion(catalog_file, "architectures", parse_architectures, "an architectures file (format 1)")


def parse_architectures(data: Any) -> Architectures:
    """An architectures document as :class:`Architectures`; ValueError/KeyError/TypeError/AttributeError
    when malformed."""
    found = data.get("transformers") or {}
    incompatible = found.get("backend_incompatible")
    return Architectures(frozenset(data["registry"]) | frozenset(data["static"]),
                         frozenset(found.get("classes") or ()), found.get("version"),
                         None if incompatible is None else frozenset(incompatible),
                         frozenset(found.get("unresolved") or ()),
                         None if data.get("model_types") is None else frozenset(data["model_types"]))


def _checked(stdout: bytes, what: str) -> bytes:
    """The committed text of the probe's document: with its capture header, stamped."""
    data = probe_document(stdout, what, "architectures probe",
                          "the probe's output is not an architectures file (format 1)")
    return captured_json(data, tool="gen sglang snapshot", probe="archprobe").encode()


def snapshot_architectures_python(python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The architectures of the SGLang installed for the local interpreter ``python``."""
    return _checked(*run_piped_probe(PROBE.read_bytes(), python, f"SGLang architectures with {python}",
                                     timeout=timeout))


def snapshot_architectures_remote(prefix: Sequence[str], python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The architectures of the SGLang on a host, with the probe piped over SSH."""
    return _checked(*run_piped_probe(PROBE.read_bytes(), python, f"SGLang architectures with {python}",
                                     prefix=prefix, timeout=timeout))
