"""Capture a checkpoint's facts (``gen model snapshot``): from a folder, a host, or the hub.

Three sources, one reader (:mod:`generator.checkpoint.reader`):

* a local folder: the reader runs here;
* ``--host H PATH``: the reader's source is sent over SSH (``PYTHON - PATH``, the host's own
  SGLang interpreter, as ``gen sglang snapshot --host`` does) and prints the facts;
* a Hugging Face repo id with ``--revision``: the real ``huggingface_hub`` resolves the
  revision to a commit and fetches config.json, generation_config.json, the index and
  any remote-code file (each size-checked first); shard headers are read with range requests
  through ``HfFileSystem``, or from the local cache when a shard is there (``HF_HUB_OFFLINE``).
  A shard is never downloaded.

Every problem comes back as a positioned :class:`generator.errors.Diagnostic`
(``SOURCE/FILE:LINE:COL: error[M00x]``), all of them at once; a snapshot is written only
when there are none.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.checkpoint import reader
from generator.checkpoint.weights import weight_facts
from generator.checkpoint.snapshot import SNAPSHOT_FORMAT
from generator.load import json_text
from generator.errors import Diagnostic, GenError, Position

READER_PATH = Path(reader.__file__)
REMOTE_TIMEOUT = 600.0  # a slow network share: every shard's header is read
MAX_REMOTE_OUTPUT = 64 << 20
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class CaptureError(GenError, OSError):
    """The source cannot be reached at all (no such repo or revision, ssh failed): exit 3."""


def looks_like_repo_id(text: str) -> bool:
    """True for ``org/name`` (a hub repo id), which a local path is not unless it exists."""
    return bool(_REPO_ID.fullmatch(text)) and not Path(text).exists()


def problems_as_diagnostics(facts: dict[str, Any], where: str) -> list[Diagnostic]:
    """The reader's problems as diagnostics positioned in ``where/FILE``."""
    out = []
    for p in facts.get("problems", []):
        name = str(p.get("file", ""))
        display = name if name.startswith("/") or name == where else f"{where.rstrip('/')}/{name}"
        out.append(Diagnostic(Position(display, int(p.get("line") or 0), int(p.get("column") or 0)),
                              str(p.get("code") or reader.MALFORMED), str(p.get("message"))))
    return out


def checkpoint_document(facts: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """The ``checkpoint`` (or ``draft``) part of a snapshot from the reader's facts (tensor
    names as templates, :mod:`generator.checkpoint.names`)."""
    weights = facts["weights"]
    if weights is not None and "headers" in weights:
        weights = weight_facts(weights["index"], weights["headers"], weights["shards"], facts["problems"])
    config = facts["config"] or {}
    named = remote_code_files(config)
    remote = {"auto_map": config.get("auto_map") if isinstance(config.get("auto_map"), dict) else None,
              "files": {f: {"classes": c, "present": f in facts["files"]} for f, c in named.items()}}
    return {"source": source, "files": facts["files"], "config": facts["config"],
            "generation_config": facts["generation_config"], "remote_code": remote, "weights": weights}


def remote_code_files(config: dict[str, Any]) -> dict[str, list[str]]:
    """``auto_map``'s classes as ``{file: [classes]}`` (``configuration_x.XConfig`` -> file
    ``configuration_x.py``); a class in another repository (``org/repo--module.Class``) keeps
    that repository in its file name."""
    auto_map = config.get("auto_map")
    files: dict[str, list[str]] = {}
    if not isinstance(auto_map, dict):
        return files
    for value in auto_map.values():
        for ref in value if isinstance(value, list) else [value]:
            if not isinstance(ref, str) or "." not in ref:
                continue
            module = ref.rsplit(".", 1)[0]
            files.setdefault(module.replace(".", "/") + ".py", []).append(ref)
    return {f: sorted(set(c)) for f, c in sorted(files.items())}


def snapshot_document(model: str, checkpoint: dict[str, Any], draft: dict[str, Any] | None) -> dict[str, Any]:
    """A whole snapshot document (format 1)."""
    return {"format": SNAPSHOT_FORMAT, "model": model,
            "captured": {"tool": "gen model snapshot", "reader": reader.READER_VERSION},
            "checkpoint": checkpoint, "draft": draft}


# ----- a folder here --------------------------------------------------------------------


def capture_folder(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The facts of a local checkpoint folder and its source record."""
    return reader.read_folder(path), {"kind": "folder", "path": os.path.abspath(path)}


# ----- a folder on a host ---------------------------------------------------------------


def remote_reader_command(prefix: Sequence[str], python: str, path: str) -> list[str]:
    """The ssh command that runs the reader, sent on stdin, with the host's ``python``."""
    return [*prefix, " ".join([shlex.quote(python), "-", shlex.quote(path)])]


def capture_host(prefix: Sequence[str], python: str, host: str, path: str,
                 timeout: float = REMOTE_TIMEOUT) -> tuple[dict[str, Any], dict[str, Any]]:
    """The facts of checkpoint folder ``path`` on a host reached by the ssh ``prefix``."""
    argv = remote_reader_command(prefix, python, path)
    what = f"the checkpoint reader on {host} ({shlex.join(argv)})"
    try:
        done = subprocess.run(argv, input=READER_PATH.read_bytes(), capture_output=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        raise CaptureError(f"{what} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise CaptureError(f"cannot run {what}: {exc.strerror or exc}") from None
    out = done.stdout[:MAX_REMOTE_OUTPUT].decode("utf-8", "replace")
    marker = "\n" + reader.RESULT_MARKER + "\n"
    if done.returncode != 0 or marker not in out:
        tail = "\n".join(done.stderr.decode("utf-8", "replace").splitlines()[-20:])
        raise CaptureError(f"{what} failed (exit status {done.returncode}){': ' + tail if tail else ''}")
    try:
        facts = json_text.loads(out.rsplit(marker, 1)[1])  # the host's reply is data: nesting too deep is refused
    except ValueError as exc:
        raise CaptureError(f"{what} printed no readable facts: {exc}") from None
    if not isinstance(facts, dict) or facts.get("reader") != reader.READER_VERSION:
        raise CaptureError(f"{what} printed facts of another reader version")
    return facts, {"kind": "host", "host": host, "path": path}


# ----- a repository of the Hugging Face hub ----------------------------------------------


class HubFiles:
    """A hub repository at one commit, read through ``huggingface_hub`` (the reader's source).

    Files come from the library's cache (``HF_HOME``), which it fills from the hub unless
    ``HF_HUB_OFFLINE`` is set. In the cache a file is a symlink ``snapshots/<commit>/NAME ->
    ../../blobs/<hash>``, the library's own layout: it is followed only into the repository's
    own ``blobs/`` folder, then opened no-follow like any checkpoint file.
    """

    def __init__(self, repo: str, revision: str | None) -> None:
        import huggingface_hub as hub
        from huggingface_hub import constants, errors

        self.hub, self.errors = hub, errors
        self.repo = repo
        self.offline = bool(constants.HF_HUB_OFFLINE)
        try:
            config = hub.hf_hub_download(repo, reader.CONFIG, revision=revision)
        except (errors.RepositoryNotFoundError, errors.RevisionNotFoundError, errors.GatedRepoError) as exc:
            raise CaptureError(f"hub repository {repo} at {revision or 'main'}: {_first_line(exc)}") from None
        except errors.EntryNotFoundError:
            raise CaptureError(f"hub repository {repo} at {revision or 'main'} has no config.json: "
                               "not a model checkpoint") from None
        except (errors.LocalEntryNotFoundError, OSError, errors.HfHubHTTPError) as exc:
            raise CaptureError(f"cannot fetch config.json of {repo} at {revision or 'main'}: "
                               f"{_first_line(exc)}") from None
        self.snapshot_dir = Path(config).parent
        self.commit = self.snapshot_dir.name
        if not _COMMIT.fullmatch(self.commit):
            raise CaptureError(f"huggingface_hub put config.json of {repo} at {config}, not under a commit folder")
        self.blobs = (self.snapshot_dir.parent.parent / "blobs").resolve()
        if self.offline:
            self.listing = sorted(os.listdir(self.snapshot_dir))
            self.sizes: dict[str, int] = {}
        else:
            infos = hub.HfApi().list_repo_tree(repo, revision=self.commit, recursive=False)
            entries = [i for i in infos if isinstance(i, hub.hf_api.RepoFile)]
            self.listing = sorted(i.path for i in entries)
            self.sizes = {i.path: int(i.size) for i in entries}

    def exists(self, name: str) -> bool:
        """True when the repository has file ``name`` at this commit."""
        return name in self.listing

    def names(self) -> list[str]:
        """The repository's top-level files at this commit."""
        return list(self.listing)

    def _open_cached(self, path: str, name: str) -> int:
        """Open a file the library put in its cache: its link may lead into blobs/ only."""
        target = Path(path)
        if target.is_symlink():
            real = target.resolve()
            if real.parent != self.blobs:
                raise reader.Problem(name, f"in the hub cache links outside the repository's blobs/ ({real})",
                                     code=reader.UNSAFE)
            target = real
        try:
            fd = os.open(target, reader._OPEN)
        except OSError as exc:
            raise reader.Problem(name, f"cannot be opened in the hub cache: {exc.strerror or exc}",
                                 code=reader.UNSAFE) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise reader.Problem(name, "in the hub cache is not a regular file", code=reader.UNSAFE)
        return fd

    def read_small(self, name: str, limit: int) -> bytes:
        """A small file (config, index, remote code), its size checked before it is fetched."""
        size = self.sizes.get(name)
        if size is not None and size > limit:
            raise reader.Problem(name, f"is {size} bytes on the hub; a real {name} is far smaller "
                                 f"(at most {limit} are read)", code=reader.UNSAFE)
        try:
            path = self.hub.hf_hub_download(self.repo, name, revision=self.commit)
        except (self.errors.EntryNotFoundError, self.errors.LocalEntryNotFoundError) as exc:
            raise reader.Problem(name, f"is missing: {_first_line(exc)}", code=reader.INCOMPLETE) from None
        except (OSError, self.errors.HfHubHTTPError) as exc:
            raise reader.Problem(name, f"cannot be fetched: {_first_line(exc)}", code=reader.UNSAFE) from None
        fd = self._open_cached(path, name)
        try:
            return reader.read_bounded(fd, name, limit)
        finally:
            os.close(fd)

    def header(self, name: str) -> dict[str, Any] | None:
        """A shard's header: from the cache when the shard is there, else by range requests
        (online), else None. Never downloads a shard."""
        cached = self.hub.try_to_load_from_cache(self.repo, name, revision=self.commit)
        if isinstance(cached, str):
            return reader.fd_header(self._open_cached(cached, name), name)
        if self.offline:
            return None
        fs = self.hub.HfFileSystem()
        remote = f"{self.repo}/{name}"
        with fs.open(remote, "rb", revision=self.commit, block_size=1 << 16) as handle:
            size = self.sizes.get(name, -1)

            def read_at(offset: int, count: int) -> bytes:
                handle.seek(offset)
                return bytes(handle.read(count))

            found = reader.read_header(read_at, size, name)
        found["bytes"] = size if size >= 0 else None
        if size >= 0 and size != found["data_end"]:
            found["problem"] = f"is {size} bytes on the hub, its header says {found['data_end']}"
        return found


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def capture_hub(repo: str, revision: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The facts of hub repository ``repo`` at ``revision`` (default ``main``), and its source."""
    files = HubFiles(repo, revision)
    facts = reader.read_checkpoint(files, repo)
    headers_known = facts["weights"] is None or set(facts["weights"]["headers"]) == set(facts["weights"]["shards"])
    source: dict[str, Any] = {"kind": "hub", "repo": repo, "revision": revision or "main", "commit": files.commit}
    if not headers_known:
        source["note"] = ("offline and the shards are not in the cache: their headers (dtypes, sizes) "
                          "were not read")
    return facts, source
