"""The model architectures a pin's SGLang registers: ``catalogs/sglang/<pin>.architectures.json``.

Captured by ``gen sglang snapshot`` with the probe :mod:`generator.sglang.archprobe` (the same
interpreter as the flag catalog, locally or over SSH) and committed beside the flag catalog.
The rules read :func:`load_architectures` for "is this checkpoint's architecture one SGLang
can build": SGLang's own registry (imported, or read from a module's source when it cannot be
imported on the capturing machine), and the model classes of the Transformers installed
beside it (SGLang's Transformers fallback).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from generator.load import json_text
from generator.load.captured import captured_json
from generator.sglang.catalog import CatalogFormatError, read_data_text
from generator.sglang.snapshot import DEFAULT_TIMEOUT, SnapshotError, _run, probe_env, remote_probe_command

PROBE = Path(__file__).resolve().parent / "archprobe.py"


@dataclass(frozen=True)
class Architectures:
    """One pin's registered model classes and its Transformers' model classes."""

    sglang: frozenset[str]
    transformers: frozenset[str]
    transformers_version: str | None

    def registered(self, architecture: str) -> bool:
        """True when SGLang's own registry has the class."""
        return architecture in self.sglang


def architectures_path(catalog_file: Path) -> Path:
    """``<pin>.architectures.json`` beside ``<pin>.json``."""
    return catalog_file.with_name(catalog_file.name.removesuffix(".json") + ".architectures.json")


def load_architectures(catalog_file: Path) -> Architectures | None:
    """The pin's architectures, or None when no file was captured for it."""
    path = architectures_path(catalog_file)
    try:
        stamp = path.lstat()
    except OSError:
        return None
    return _load(path, stamp.st_mtime_ns, stamp.st_size)


@functools.lru_cache(maxsize=8)
def _load(path: Path, mtime_ns: int, size: int) -> Architectures:
    try:
        data = json_text.loads(read_data_text(path))  # any nesting is a format error
        return Architectures(frozenset(data["registry"]) | frozenset(data["static"]),
                             frozenset((data.get("transformers") or {}).get("classes") or ()),
                             (data.get("transformers") or {}).get("version"))
    except (ValueError, KeyError, TypeError) as exc:
        raise CatalogFormatError(f"{path}: not an architectures file (format 1): {exc}; re-capture it "
                                 "with `gen sglang snapshot`") from exc


def _checked(stdout: bytes, what: str) -> bytes:
    """The committed text of the probe's document: with its capture header, stamped."""
    try:
        data = json_text.loads(stdout)
    except ValueError as exc:
        raise SnapshotError(f"{what}: the architectures probe printed no JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != 1 or "registry" not in data:
        raise SnapshotError(f"{what}: the probe's output is not an architectures file (format 1)")
    return captured_json(data, tool="gen sglang snapshot", probe="archprobe").encode()


def snapshot_architectures_python(python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The architectures of the SGLang installed for the local interpreter ``python``."""
    what = f"SGLang architectures with {python}"
    return _checked(_run([python, "-"], what, stdin=PROBE.read_bytes(), timeout=timeout, env=probe_env()), what)


def snapshot_architectures_remote(prefix: Sequence[str], python: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The architectures of the SGLang on a host, with the probe piped over SSH."""
    what = f"SGLang architectures with {python} over ssh"
    return _checked(_run(remote_probe_command(prefix, python), what, stdin=PROBE.read_bytes(),
                         timeout=timeout, env=None), what)
