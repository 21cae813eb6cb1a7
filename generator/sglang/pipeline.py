"""Which architectures a pin's SGLang splits across pipeline stages: ``catalogs/sglang/<pin>.pipeline.json``.

Captured by ``gen sglang snapshot`` with the probe :mod:`generator.sglang.ppprobe` (the same
interpreter as the flag catalog, locally or over SSH) and committed beside the flag catalog,
like ``<pin>.architectures.json``. Per architecture SGLang registers, two facts its model
runner reads from the model object under ``--pp-size``:

* :meth:`Pipeline.splits_layers`: the class exposes ``start_layer``/``end_layer``, so a
  pipeline rank sizes its KV pool for its own stage's layers; without them every rank sizes
  the pool for all layers (the memory sizing, :mod:`generator.plan.memory`, reads this);
* :meth:`Pipeline.supports_pp`: its ``forward`` takes ``pp_proxy_tensors``; without it SGLang
  refuses ``--pp-size`` above 1 after loading the weights.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.load import json_text
from generator.load.captured import captured_json
from generator.sglang.catalog import CatalogFormatError, read_data_text
from generator.sglang.snapshot import DEFAULT_TIMEOUT, SnapshotError, _run, probe_env, remote_probe_command

PROBE = Path(__file__).resolve().parent / "ppprobe.py"
FORMAT = 1


@dataclass(frozen=True)
class Pipeline:
    """One pin's per-architecture pipeline facts (see the module docstring)."""

    layers: Mapping[str, bool]  # architecture -> exposes start_layer and end_layer
    proxy: Mapping[str, bool]  # architecture -> forward takes pp_proxy_tensors
    unresolved: frozenset[str]  # architectures the probe could not answer for

    def splits_layers(self, architecture: str) -> bool | None:
        """True when a pipeline rank of ``architecture`` sizes its pool for its stage's layers,
        False when for all layers, None when the capture does not know the architecture."""
        return self.layers.get(architecture)

    def supports_pp(self, architecture: str) -> bool | None:
        """True when SGLang accepts ``--pp-size`` above 1 for ``architecture``, None when unknown."""
        return self.proxy.get(architecture)


def pipeline_path(catalog_file: Path) -> Path:
    """``<pin>.pipeline.json`` beside ``<pin>.json``."""
    return catalog_file.with_name(catalog_file.name.removesuffix(".json") + ".pipeline.json")


def load_pipeline(catalog_file: Path) -> Pipeline | None:
    """The pin's pipeline facts, or None when no file was captured for it."""
    path = pipeline_path(catalog_file)
    try:
        stamp = path.lstat()
    except OSError:
        return None
    return _load(path, stamp.st_mtime_ns, stamp.st_size)


@functools.lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int, size: int) -> Pipeline:
    try:
        data = json_text.loads(read_data_text(path))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}")
        archs = data["architectures"]
        layers = {str(a): _flag(f["layers"]) for a, f in archs.items()}
        proxy = {str(a): _flag(f["pp_proxy_tensors"]) for a, f in archs.items()}
        return Pipeline(layers, proxy, frozenset(data.get("unresolved") or ()))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CatalogFormatError(f"{path}: not a pipeline file (format {FORMAT}): {exc}; re-capture it "
                                 "with `gen sglang snapshot`") from exc


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{value!r} is not true or false")
    return value


def _checked(stdout: bytes, what: str) -> bytes:
    """The committed text of the probe's document: with its capture header, stamped."""
    try:
        data = json_text.loads(stdout)
    except ValueError as exc:
        raise SnapshotError(f"{what}: the pipeline probe printed no JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("architectures"), dict):
        raise SnapshotError(f"{what}: the probe's output is not a pipeline file (format {FORMAT})")
    return captured_json(data, tool="gen sglang snapshot", probe="ppprobe").encode()


def snapshot_pipeline_python(python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The pipeline facts of the SGLang installed for the local interpreter ``python``."""
    what = f"SGLang pipeline facts with {python}"
    return _checked(_run([python, "-"], what, stdin=PROBE.read_bytes(), timeout=timeout, env=probe_env()), what)


def snapshot_pipeline_remote(prefix: Sequence[str], python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The pipeline facts of the SGLang on a host, with the probe piped over SSH."""
    what = f"SGLang pipeline facts with {python} over ssh"
    return _checked(_run(remote_probe_command(prefix, python), what, stdin=PROBE.read_bytes(),
                         timeout=timeout, env=None), what)
