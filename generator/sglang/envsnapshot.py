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
from generator.sglang.snapshot import (DEFAULT_TIMEOUT, SnapshotError, _run, check_commit,
                                       probe_env, remote_probe_command)
from generator.load import json_text

HERE = Path(__file__).resolve().parent
PARTS = ("envsource.py", "envscan.py", "envprobe.py")


def env_probe_source() -> bytes:
    """The env probe as one script for ``python -`` (envprobe.py reads the other two first)."""
    return b"".join((HERE / part).read_bytes() for part in PARTS)


def _checked(stdout: bytes, what: str) -> bytes:
    """The file text of the probe's env catalog, with its capture digest; SnapshotError when
    the probe printed none."""
    try:
        data = json_text.loads(stdout)
    except ValueError as exc:
        raise SnapshotError(f"{what}: the env probe printed no JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != 1 or "registry" not in data:
        raise SnapshotError(f"{what}: the env probe's output is not an env catalog (format 1)")
    try:
        return captured_json(data).encode("ascii")
    except ValueError as exc:  # no tool named, NaN: not what the env probe prints
        raise SnapshotError(f"{what}: the env probe's output is not an env catalog ({exc})") from exc


def snapshot_env_python(python: str, *, commit: str | None = None,
                        timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The env catalog of the SGLang installed for the local interpreter ``python``."""
    argv = [python, "-"] + (["--commit", check_commit(commit)] if commit else [])
    what = f"SGLang env snapshot with {python}"
    return _checked(_run(argv, what, stdin=env_probe_source(), timeout=timeout, env=probe_env()), what)


def snapshot_env_remote(prefix: Sequence[str], python: str, *, commit: str | None = None,
                        timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """The env catalog of the SGLang on a host, with the probe piped over SSH."""
    what = f"SGLang env snapshot with {python} over ssh"
    return _checked(_run(remote_probe_command(prefix, python, commit), what,
                         stdin=env_probe_source(), timeout=timeout, env=None), what)


def env_path_for(catalog_file: Path) -> Path:
    """``<pin>.env.json`` beside ``<pin>.json``."""
    return catalog_file.with_name(catalog_file.name.removesuffix(".json") + ".env.json")


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
