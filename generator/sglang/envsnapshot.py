"""Capturing the environment catalog of a real SGLang, locally or over SSH.

The env probe is three standard-library files (``envsource.py``, ``envscan.py``,
``envprobe.py``) sent, concatenated, as the stdin of ``PYTHON -``: the same command runs
on this machine and on a host over SSH (see :func:`snapshot.remote_probe_command`). Its
stdout is the catalog, written beside the flag catalog as ``<pin>.env.json`` in the same
canonical text, with its capture digest (generator/load/captured.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

from generator.load.captured import captured_json
from generator.load.files import read_file
from generator.sglang.catalog import companion_path
from generator.sglang.snapshot import DEFAULT_TIMEOUT, SnapshotError, probe_document, run_piped_probe

HERE = Path(__file__).resolve().parent
PARTS = ("envsource.py", "envscan.py", "envprobe.py")


def env_probe_source() -> bytes:
    """The env probe as one script for ``python -`` (envprobe.py reads the other two first)."""
    return b"".join((HERE / part).read_bytes() for part in PARTS)


def _checked(stdout: bytes, what: str) -> bytes:
    """The file text of the probe's env catalog, with its capture digest; SnapshotError when
    the probe printed none."""
    data = probe_document(stdout, what, "env probe", "the env probe's output is not an env catalog (format 1)")
    try:
        return captured_json(data).encode("ascii")
    except ValueError as exc:  # no tool named, NaN: not what the env probe prints
        raise SnapshotError(f"{what}: the env probe's output is not an env catalog ({exc})") from exc


def snapshot_env_python(python: str, *, commit: str | None = None,
                        timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The env catalog of the SGLang installed for the local interpreter ``python``."""
    return _checked(*run_piped_probe(env_probe_source(), python, f"SGLang env snapshot with {python}",
                                     commit=commit, timeout=timeout))


def snapshot_env_remote(prefix: Sequence[str], python: str, *, commit: str | None = None,
                        timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The env catalog of the SGLang on a host, with the probe piped over SSH."""
    return _checked(*run_piped_probe(env_probe_source(), python, f"SGLang env snapshot with {python}",
                                     prefix=prefix, commit=commit, timeout=timeout))


def env_path_for(catalog_file: Path) -> Path:
    """``<pin>.env.json`` beside ``<pin>.json``."""
    return companion_path(catalog_file, "env")


def write_env_catalog(text: bytes, path: Path) -> bool:
    """Write atomically; False when the file already holds exactly this text."""
    if read_file(path, str(path), limit=len(text))[0] == text:  # a regular file only: never a link's target
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return True
