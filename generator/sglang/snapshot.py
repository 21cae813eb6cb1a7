"""Capture a flag catalog from a real SGLang: the library behind ``gen sglang snapshot``.

The probe (``generator/sglang/probe.py``, standard library only) runs inside the Python
that has SGLang installed: locally as ``PYTHON sglang_probe.py``, or on a host over SSH
as ``PYTHON -`` with the probe piped on stdin. Its stdout is the catalog JSON; on any
failure a :class:`SnapshotError` carries the interpreter, the exit status and the tail
of the probe's stderr (SGLang's import errors land there).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from generator.errors import GenError, printable
from generator.load.captured import DIGEST, captured_json
from generator.load.files import linked_folder
from generator.load.pins import is_pin
from generator.load.process import run_bounded
from generator.sglang.probe import FORMAT_VERSION
from generator.load import json_text

PROBE_PATH = Path(__file__).resolve().with_name("probe.py")
# Importing SGLang takes about 5 s on a laptop-class CPU; a cold disk cache or a slow
# SSH link can take much longer, but a probe that runs for minutes is stuck.
DEFAULT_TIMEOUT = 300.0
STDERR_TAIL_LINES = 40
# What a probe may print on stdout: the largest catalog (0.5.23's flags) is ~0.3 MB. A probe that
# prints without end is stopped here, before its reply fills the controller's memory.
PROBE_STDOUT_MOST = 32 * 1024 * 1024
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
# SGLang reads SGLANG_*/SGL_* variables at import time and a few change the CLI (e.g.
# SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE adds a --sampling-backend choice). A catalog is
# the CLI of the release, so a local capture does not inherit the caller's settings.
_SGLANG_ENV_RE = re.compile(r"^(SGLANG|SGL)_")


class SnapshotError(GenError, RuntimeError):
    """Capturing a catalog failed: the probe did not run, failed, or printed no catalog."""


def probe_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a local probe: ``base`` (default os.environ) without SGLang's variables.

    PYTHONHASHSEED is fixed so that any set SGLang formats into a help text prints
    in the same order on every capture.
    """
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not _SGLANG_ENV_RE.match(k)
    }
    env["PYTHONHASHSEED"] = "0"
    return env


def probe_argv(python: str, commit: str | None = None) -> list[str]:
    """The command that runs the probe file with ``python`` (``--commit`` for a source install)."""
    argv = [python, str(PROBE_PATH)]
    if commit is not None:
        argv += ["--commit", check_commit(commit)]
    return argv


def check_commit(commit: str) -> str:
    """``commit`` itself when it is a full lowercase git hash; SnapshotError otherwise."""
    if not _COMMIT_RE.fullmatch(commit):  # match() lets a trailing newline through "$"
        raise SnapshotError(f"not a full git commit hash: {commit!r}")
    return commit


def _stderr_tail(stderr: bytes | str | None) -> str:
    text = (
        stderr.decode("utf-8", "replace")
        if isinstance(stderr, bytes)
        else (stderr or "")
    )
    lines = text.rstrip().splitlines()
    tail = lines[-STDERR_TAIL_LINES:]
    prefix = (
        [f"... ({len(lines) - len(tail)} earlier lines)"]
        if len(lines) > len(tail)
        else []
    )
    return (
        "\n".join("    " + line for line in prefix + tail)
        or "    (no output on stderr)"
    )


def _run(
    argv: Sequence[str],
    what: str,
    *,
    stdin: bytes | None,
    timeout: float,
    env: Mapping[str, str] | None,
) -> bytes:
    """Run ``argv`` and return its stdout; SnapshotError on start failure, timeout or non-zero exit."""
    shown = shlex.join(argv)
    try:
        proc = run_bounded(argv, stdin=stdin, timeout=timeout, env=env, limit=PROBE_STDOUT_MOST)
    except FileNotFoundError as exc:
        raise SnapshotError(
            f"{what}: cannot run {shown}: {exc.strerror}: {exc.filename}"
        ) from exc
    except PermissionError as exc:
        raise SnapshotError(f"{what}: cannot run {shown}: permission denied") from exc
    if proc.overflowed:
        raise SnapshotError(
            f"{what}: {shown} printed more than {PROBE_STDOUT_MOST // (1024 * 1024)} MiB on stdout "
            f"(a catalog is under 1 MiB); it was stopped and nothing was written. Its stderr:\n"
            f"{_stderr_tail(proc.stderr)}"
        )
    if proc.timed_out:  # run_bounded has already killed the child it started
        raise SnapshotError(
            f"{what}: {shown} did not finish within {timeout:g} s; its stderr:\n{_stderr_tail(proc.stderr)}"
        )
    if proc.returncode != 0:
        raise SnapshotError(
            f"{what}: {shown} failed with exit status {proc.returncode}; its stderr:\n"
            f"{_stderr_tail(proc.stderr)}"
        )
    return proc.stdout


def run_piped_probe(script: bytes, python: str, what: str, *, prefix: Sequence[str] | None = None,
                    commit: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> tuple[bytes, str]:
    """Run a probe script as ``PYTHON -`` with ``script`` on stdin: locally in :func:`probe_env`,
    or on a host over ssh (``prefix``, :func:`remote_probe_command`). Returns its stdout and what
    its errors call the run (``what``, with `` over ssh`` for a host)."""
    if prefix is None:
        argv = [python, "-"] + (["--commit", check_commit(commit)] if commit else [])
        return _run(argv, what, stdin=script, timeout=timeout, env=probe_env()), what
    what = f"{what} over ssh"
    return _run(remote_probe_command(prefix, python, commit), what, stdin=script, timeout=timeout, env=None), what


def probe_document(stdout: bytes, what: str, probe: str, not_it: str) -> dict[str, Any]:
    """The format-1 document with a ``registry`` that a companion probe (env, architectures)
    printed; SnapshotError saying the ``probe`` printed no JSON, or ``not_it``."""
    try:
        data = json_text.loads(stdout)
    except ValueError as exc:
        raise SnapshotError(f"{what}: the {probe} printed no JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != 1 or "registry" not in data:
        raise SnapshotError(f"{what}: {not_it}")
    return data


def parse_catalog(stdout: bytes, what: str) -> dict[str, Any]:
    """The probe's stdout as a catalog dict, after checking the parts gen relies on."""
    try:
        catalog = json_text.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        head = stdout[:200].decode("utf-8", "replace")
        raise SnapshotError(
            f"{what}: the probe printed no catalog JSON ({exc}); it began with {head!r}"
        ) from exc
    problems: list[str] = []
    if not isinstance(catalog, dict):
        problems.append(f"top level is {type(catalog).__name__}, not an object")
    else:
        if catalog.get("format") != FORMAT_VERSION:
            problems.append(
                f"format is {catalog.get('format')!r}, not {FORMAT_VERSION}"
            )
        sglang = catalog.get("sglang")
        if not isinstance(sglang, dict) or not isinstance(sglang.get("version"), str):
            problems.append("no sglang.version")
        actions = catalog.get("actions")
        if not isinstance(actions, list) or not actions:
            problems.append("no actions")
        elif not all(
            isinstance(a, dict) and isinstance(a.get("canonical"), str) for a in actions
        ):
            problems.append("an action without a canonical option string")
    if problems:
        raise SnapshotError(
            f"{what}: the probe's output is not a catalog: {'; '.join(problems)}"
        )
    result: dict[str, Any] = catalog
    return result


def run_probe(
    argv: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    what: str | None = None,
) -> dict[str, Any]:
    """Run a probe command (local or wrapped in ssh) and return the catalog it printed.

    ``stdin`` is fed to the command (the probe source for ``python -``); ``env`` defaults
    to the caller's environment. Raises SnapshotError with the command, its exit
    status and the tail of its stderr when anything goes wrong.
    """
    label = what or "SGLang snapshot"
    return parse_catalog(
        _run(argv, label, stdin=stdin, timeout=timeout, env=env), label
    )


def snapshot_python(
    python: str, *, commit: str | None = None, timeout: float = DEFAULT_TIMEOUT
) -> dict[str, Any]:
    """Capture the catalog of the SGLang installed for the local interpreter ``python``.

    This is ``gen sglang snapshot --python PATH``. ``commit`` records the git commit of
    a source install (the probe also finds one pip recorded for a VCS install).
    """
    return run_probe(
        probe_argv(python, commit),
        timeout=timeout,
        env=probe_env(),
        what=f"SGLang snapshot with {python}",
    )


def remote_commit_command(prefix: Sequence[str], source_dir: str) -> list[str]:
    """The command that prints the commit of the SGLang source checkout ``source_dir`` on the host."""
    return [*prefix, f"git -C {shlex.quote(source_dir)} rev-parse HEAD"]


def remote_probe_command(
    prefix: Sequence[str], python: str, commit: str | None = None
) -> list[str]:
    """The command that runs the probe, piped on stdin, with the host's SGLang ``python``.

    ssh hands its command to the remote user's shell as one string, so every part is
    quoted here; the probe source is then sent as that Python's stdin (``python -``).
    """
    words = ["PYTHONHASHSEED=0", shlex.quote(python), "-"]
    if commit is not None:
        words += ["--commit", check_commit(commit)]
    return [*prefix, " ".join(words)]


def remote_commit(
    prefix: Sequence[str], source_dir: str, *, timeout: float = 60.0
) -> str:
    """The git commit checked out in ``source_dir`` on the host reached by ``prefix``."""
    what = f"SGLang source commit of {source_dir}"
    out = _run(
        remote_commit_command(prefix, source_dir),
        what,
        stdin=None,
        timeout=timeout,
        env=None,
    )
    commit = out.decode("utf-8", "replace").strip()
    if not _COMMIT_RE.fullmatch(commit):  # match() lets a trailing newline through "$"
        raise SnapshotError(f"{what}: git printed {commit!r}, not a commit hash")
    return commit


def snapshot_remote(
    prefix: Sequence[str],
    python: str,
    *,
    source_dir: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """Capture the catalog of the SGLang on a host: ``gen sglang snapshot --host NAME``.

    ``prefix`` is the ssh argv up to the destination (``Target.ssh_argv()`` of
    generator/live/target.py, the one way gen reaches a host; any command that runs its
    last argument through a POSIX shell works the same way).
    With ``source_dir`` (a source install) the checkout's commit is read first and
    recorded in the catalog, whose pin is then ``git-<commit>``.
    """
    commit = remote_commit(prefix, source_dir) if source_dir is not None else None
    return run_probe(
        remote_probe_command(prefix, python, commit),
        stdin=PROBE_PATH.read_bytes(),
        timeout=timeout,
        what=f"SGLang snapshot with {python} via {shlex.join(prefix)}",
    )


def catalog_pin(catalog: Mapping[str, Any]) -> str:
    """The pin a catalog is filed under: ``git-<commit>`` for a source build, else the version.

    Both come from what the probed interpreter printed, so they are data until proven a pin
    (generator/load/pins.py): a version of ``../..`` or ``/etc/x`` wrote outside catalogs/,
    and ``0.5.9.env`` over another pin's env catalog. SnapshotError otherwise (exit 1).
    """
    sglang = catalog["sglang"]
    commit, version = sglang.get("commit"), sglang.get("version")
    pin = f"git-{commit}" if commit else version
    if not is_pin(pin) or (commit and not isinstance(commit, str)):
        shown = printable(repr(commit if commit else version))[:200]
        raise SnapshotError(
            f"the probed SGLang reports {'commit' if commit else 'version'} {shown}, which is not a pin "
            "gen files a catalog under (a release such as 0.5.9 or 0.4.0.post2, or a 40-hex commit); "
            "check the interpreter, or write the catalog where you choose with --out FILE")
    assert isinstance(pin, str)
    return pin


def catalog_path(catalog: Mapping[str, Any], root: Path) -> Path:
    """Where the catalog belongs in the repository at ``root``: ``catalogs/sglang/<pin>.json``.

    SnapshotError when ``catalogs/`` or ``catalogs/sglang/`` is a link (or a file): the
    capture and its env catalog would be written wherever it points (load/files.linked_folder).
    """
    folder = root / "catalogs" / "sglang"
    path = folder / f"{catalog_pin(catalog)}.json"
    assert path.parent == folder  # a pin has no separator (load/pins.py)
    problem = linked_folder(root, ("catalogs", "sglang"))
    if problem is not None:
        raise SnapshotError(f"cannot write the catalog: {problem} (or write it where you choose with --out FILE)")
    return path


def without_date(catalog: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``catalog`` without ``captured.date`` and the file's digest (which covers the
    date): two captures of one SGLang compare equal."""
    copy: dict[str, Any] = json.loads(json.dumps(catalog))
    copy.get("captured", {}).pop("date", None)
    copy.get("captured", {}).pop(DIGEST, None)
    return copy


def write_catalog(catalog: Mapping[str, Any], path: Path) -> Path:
    """Write ``catalog`` to ``path`` in its canonical text with its capture digest
    (generator/load/captured.py), atomically (temp file + rename).

    A reader never sees a half-written catalog, and a failed write leaves the old file.
    """
    path = Path(path)
    try:
        text = captured_json(catalog)
    except ValueError as exc:  # no tool named, a NaN: not what the probe prints
        raise SnapshotError(f"cannot write the catalog {path}: {exc}") from exc
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
        )
    except OSError as exc:
        raise SnapshotError(
            f"cannot write the catalog {path}: {exc.strerror or exc}"
        ) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(
            tmp, 0o644
        )  # mkstemp makes 0600; a catalog is an ordinary repository file
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise SnapshotError(
                f"cannot write the catalog {path}: {exc.strerror or exc}"
            ) from exc
        raise
    return path
