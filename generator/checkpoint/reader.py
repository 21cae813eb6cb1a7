"""Read a checkpoint folder's facts without trusting it: config files, the index, headers.

This file is standalone (standard library only, Python 3.8+) because it also runs on a host:
``gen model snapshot --host H PATH`` sends it over SSH as ``PYTHON - PATH`` and reads one
JSON document after :data:`RESULT_MARKER`. Locally, ``capture.py`` imports it.

A checkpoint is untrusted input (a download, a training library's output, a pull request's
folder). Everything here is bounded and never runs, follows or blocks:

* every entry is opened relative to the folder's descriptor with ``O_NOFOLLOW|O_NONBLOCK``
  and checked with ``fstat`` on that descriptor: a symlinked shard, a FIFO or a device is a
  problem naming the file, never a hang or a read of something else;
* small files are read up to a limit (:data:`LIMITS`), a safetensors header only when its
  8-byte length is at most :data:`MAX_HEADER_BYTES` and fits the file;
* JSON that does not parse is a problem at the parser's line and column;
* code files (``*.py``: ``auto_map``'s remote code) are hashed as bytes, never imported.

A problem is ``{"file", "line", "column", "message", "code"}`` (line 0: the whole file);
reading goes on with the other files, so one run names every problem.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import struct
import sys
from typing import Any, Callable

RESULT_MARKER = "=== gen checkpoint facts ==="
READER_VERSION = 1

CONFIG = "config.json"
GENERATION_CONFIG = "generation_config.json"
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"

# Real files are far smaller: config.json of the largest VLMs is ~10 KB, the index of a
# 1T MoE ~25 MB; past these a file is not what its name says.
LIMITS = {CONFIG: 4 << 20, GENERATION_CONFIG: 1 << 20, INDEX: 128 << 20, "remote-code": 4 << 20}
# safetensors' own reader refuses headers above 100 MB (safetensors/src/tensor.rs, MAX_HEADER_SIZE).
MAX_HEADER_BYTES = 100_000_000
MAX_SHARDS = 100_000
MAX_CODE_FILES = 64
# Bytes per element of each safetensors dtype; packed 4-bit types count as half a byte.
DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2,
               "I16": 2, "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1,
               "BOOL": 1, "F4": 0.5, "F6_E2M3": 0.75, "F6_E3M2": 0.75}

_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_SHARD_NAME = re.compile(r"^[^/\\\x00-\x1f]+\.safetensors$")


# gen's codes (generator/codes.py): a file gen will not read (link, FIFO, too large, a 2 GB
# header claim); not what its name says (not JSON, malformed); an incomplete checkpoint.
UNSAFE, MALFORMED, INCOMPLETE = "M001", "M002", "M003"

try:  # in gen: one of gen's errors; on a host (this file alone on stdin) a plain exception
    from generator.errors import GenError as _Base
except ImportError:  # pragma: no cover - the host side, tested through `python -`
    class _Base(Exception):  # type: ignore[no-redef]
        """The host side's base: a class of its own (Exception itself before ValueError has no MRO)."""


class Problem(_Base, ValueError):
    """One thing wrong with one file of the checkpoint, with its position when known."""

    def __init__(self, file: str, message: str, line: int = 0, column: int = 0, code: str = MALFORMED) -> None:
        super().__init__(message)
        self.file, self.message, self.line, self.column, self.code = file, message, line, column, code

    def as_dict(self) -> dict[str, Any]:
        """The problem as the JSON the snapshot command reports."""
        return {"file": self.file, "line": self.line, "column": self.column, "message": self.message,
                "code": self.code}


def _kind(mode: int) -> str:
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return word
    return "not a regular file"


class Folder:
    """A checkpoint folder on this machine: every entry opened no-follow under its descriptor."""

    def __init__(self, path: str) -> None:
        self.path = path
        # The folder the operator named may itself be a link (/shared/models/X -> a volume);
        # what lies inside it may not.
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))

    def close(self) -> None:
        """Release the folder's descriptor."""
        os.close(self.fd)

    def names(self) -> list[str]:
        """The folder's entry names, sorted."""
        return sorted(os.listdir(self.fd))

    def exists(self, name: str) -> bool:
        """True when an entry of that name exists (of any kind: opening says what is wrong)."""
        try:
            os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    def open(self, name: str) -> int:
        """A descriptor of the regular file ``name``; Problem for anything else."""
        try:
            fd = os.open(name, _OPEN, dir_fd=self.fd)
        except OSError as exc:
            try:
                info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            except OSError:
                code = INCOMPLETE if exc.errno == errno.ENOENT else UNSAFE
                raise Problem(name, "is missing" if code == INCOMPLETE else
                              f"cannot be opened: {exc.strerror or exc}", code=code) from None
            if stat.S_ISLNK(info.st_mode):
                try:
                    dest = os.readlink(name, dir_fd=self.fd)
                except OSError:
                    dest = "?"
                raise Problem(name, f"is a symbolic link (to {dest!r}): gen reads only regular files "
                              "of a checkpoint; copy the file in place of the link", code=UNSAFE) from None
            raise Problem(name, f"is {_kind(info.st_mode)}, not a regular file", code=UNSAFE) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise Problem(name, f"is {_kind(info.st_mode)}, not a regular file", code=UNSAFE)
        return fd

    def read_small(self, name: str, limit: int) -> bytes:
        """The bytes of the regular file ``name``, at most ``limit``."""
        fd = self.open(name)
        try:
            return read_bounded(fd, name, limit)
        finally:
            os.close(fd)

    def header(self, name: str) -> dict[str, Any]:
        """The safetensors header of shard ``name`` and its size on disk."""
        return fd_header(self.open(name), name)


def read_bounded(fd: int, name: str, limit: int) -> bytes:
    """All bytes of an open regular file, at most ``limit`` (Problem when larger)."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise Problem(name, f"is {size} bytes; a real {name} is far smaller (at most {limit} are read)",
                      code=UNSAFE)
    chunks, total = [], 0
    while total <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise Problem(name, f"grew past {limit} bytes while being read", code=UNSAFE)
    return b"".join(chunks)


def parse_json(name: str, data: bytes) -> object:
    """Parse JSON text; a Problem at the parser's line and column when it is not JSON."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise Problem(name, f"is not UTF-8 text ({exc.reason})", line, column) from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        line, column = getattr(exc, "lineno", 0), getattr(exc, "colno", 0)
        what = getattr(exc, "msg", str(exc))
        if not text.strip():
            what = "the file is empty"
        raise Problem(name, f"is not valid JSON: {what}", line, column) from None
    except RecursionError:
        raise Problem(name, "is not valid JSON: nested too deeply") from None


def _no_constant(word: str) -> object:
    raise ValueError(f"{word} is not a JSON value")


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------ safetensors headers


def read_header(read_at: Callable[[int, int], bytes], size: int, name: str) -> dict[str, Any]:
    """One safetensors header through ``read_at(offset, count) -> bytes`` of a ``size``-byte file.

    Returns ``{"header_sha256", "header_bytes", "tensors": {name: (dtype, elements)},
    "data_end"}``. The 8-byte length is checked against :data:`MAX_HEADER_BYTES` and the
    file's own size before anything more is read, so a forged 2 GB claim costs 8 bytes.
    """
    head = read_at(0, 8)
    if len(head) != 8:
        raise Problem(name, f"is {len(head)} bytes: shorter than the 8-byte safetensors header length", 1, 1,
                      INCOMPLETE)
    (length,) = struct.unpack("<Q", head)
    if length > MAX_HEADER_BYTES:
        raise Problem(name, f"claims a {length}-byte safetensors header; at most {MAX_HEADER_BYTES} are "
                      "read (safetensors' own limit): not a safetensors file, or a damaged one", 1, 1, UNSAFE)
    if size >= 0 and 8 + length > size:
        raise Problem(name, f"claims a {length}-byte safetensors header but the file has only "
                      f"{size} bytes (cut short?)", 1, 1, INCOMPLETE)
    raw = read_at(8, length)
    if len(raw) != length:
        raise Problem(name, f"safetensors header cut short: {len(raw)} of {length} bytes", 1, 1, INCOMPLETE)
    header = parse_json(name, raw)
    if not isinstance(header, dict):
        raise Problem(name, "safetensors header is not a JSON object", 1, 9)
    tensors, end = {}, 0
    for tensor, info in header.items():
        if tensor == "__metadata__":
            continue
        try:
            dtype, shape, (start, stop) = info["dtype"], info["shape"], info["data_offsets"]
            elements = 1
            for dim in shape:
                if not isinstance(dim, int) or dim < 0:
                    raise ValueError(dim)
                elements *= dim
            if dtype not in DTYPE_BYTES or not (isinstance(start, int) and isinstance(stop, int) and 0 <= start <= stop):
                raise ValueError(dtype)
        except (KeyError, TypeError, ValueError):
            raise Problem(name, f"safetensors header entry {tensor!r} is malformed (dtype, shape, data_offsets)",
                          1, 9) from None
        tensors[tensor] = (dtype, elements)
        end = max(end, stop)
    return {"header_sha256": sha256(head + raw), "header_bytes": 8 + length, "tensors": tensors,
            "data_end": 8 + length + end}


def fd_header(fd: int, name: str) -> dict[str, Any]:
    """The header of the open shard ``fd`` (closed after), plus the shard's size on disk."""
    try:
        size = os.fstat(fd).st_size

        def read_at(offset: int, count: int) -> bytes:
            out, done = [], 0
            while done < count:
                chunk = os.pread(fd, min(1 << 20, count - done), offset + done)
                if not chunk:
                    break
                out.append(chunk)
                done += len(chunk)
            return b"".join(out)

        found = read_header(read_at, size, name)
        found["bytes"] = size
        if size != found["data_end"]:
            found["problem"] = f"is {size} bytes, its header says {found['data_end']} (incomplete or damaged)"
        return found
    finally:
        os.close(fd)


# ------------------------------------------------------------------ the checkpoint


def check_index(data: object, name: str = INDEX) -> dict[str, Any]:
    """The index as a dict with a ``weight_map`` of tensor -> shard file; Problem otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("weight_map"), dict) or not data["weight_map"]:
        raise Problem(name, "has no \"weight_map\" object of tensor -> shard file: not a safetensors index")
    shards = set()
    for tensor, shard in data["weight_map"].items():
        if not isinstance(shard, str) or not _SHARD_NAME.fullmatch(shard):
            raise Problem(name, f"maps {tensor!r} to {shard!r}, not a .safetensors file of this folder")
        shards.add(shard)
    if len(shards) > MAX_SHARDS:
        raise Problem(name, f"names {len(shards)} shards; at most {MAX_SHARDS} are read")
    return data


def read_folder(path: str) -> dict[str, Any]:
    """The facts of the checkpoint folder ``path`` on this machine (see :func:`read_checkpoint`)."""
    try:
        folder = Folder(path)
    except OSError as exc:
        out = empty_facts()
        out["problems"].append(Problem(path, f"cannot open the checkpoint folder: {exc.strerror or exc}",
                                       code=UNSAFE).as_dict())
        return out
    try:
        return read_checkpoint(folder, path)
    finally:
        folder.close()


def empty_facts() -> dict[str, Any]:
    """Facts with nothing read yet."""
    return {"reader": READER_VERSION, "files": {}, "problems": [], "config": None, "generation_config": None,
            "weights": None}


def read_checkpoint(source: Any, where: str) -> dict[str, Any]:
    """The facts of one checkpoint, read through ``source`` (a :class:`Folder`, or the hub's
    files in capture.py): ``exists(name)``, ``names()``, ``read_small(name, limit)`` and
    ``header(name)`` (None when a header cannot be reached without downloading weights).

    Returns ``{"files": {name: {"sha256", "bytes"}}, "config", "generation_config",
    "weights": {"index", "shards", "headers"} | None,
    "problems": [...]}``: the index as parsed, the shard files, and each header read as
    ``{"header_sha256", "header_bytes", "bytes", "data_end", "tensors": {name: [dtype, elements]}}``.
    """
    out = empty_facts()
    files, problems = out["files"], out["problems"]

    def small(name: str, limit: int, required: bool) -> object:
        if not required and not source.exists(name):
            return None
        try:
            data = source.read_small(name, limit)
            files[name] = {"sha256": sha256(data), "bytes": len(data)}
            return parse_json(name, data) if name.endswith(".json") else data
        except Problem as problem:
            problems.append(problem.as_dict())
            return None

    config = small(CONFIG, LIMITS[CONFIG], True)
    if config is not None and not isinstance(config, dict):
        problems.append(Problem(CONFIG, "is not a JSON object", 1, 1).as_dict())
        config = None
    out["config"] = config
    generation = small(GENERATION_CONFIG, LIMITS[GENERATION_CONFIG], False)
    if generation is not None and not isinstance(generation, dict):
        problems.append(Problem(GENERATION_CONFIG, "is not a JSON object", 1, 1).as_dict())
        generation = None
    out["generation_config"] = generation
    # Code files (auto_map's configuration_*.py, modeling_*.py) are hashed, never run; which
    # of them config.json names is worked out by gen (capture.py).
    for name in source.names():
        if name.endswith(".py") and len([n for n in files if n.endswith(".py")]) < MAX_CODE_FILES:
            small(name, LIMITS["remote-code"], True)
    index = None
    has_index = source.exists(INDEX)
    if has_index:
        raw = small(INDEX, LIMITS[INDEX], True)
        try:
            index = check_index(raw) if raw is not None else None
        except Problem as problem:
            problems.append(problem.as_dict())
    if index is not None:
        shard_names = sorted(set(index["weight_map"].values()))
    elif has_index:
        shard_names = []  # the index is broken: which shards belong is unknown
    else:
        shard_names = [n for n in source.names() if n.endswith(".safetensors")]
        if not shard_names:
            problems.append(Problem(where, f"has neither {INDEX} nor any *.safetensors file",
                                    code=INCOMPLETE).as_dict())
    headers: dict[str, Any] = {}
    for shard in shard_names:
        try:
            found = source.header(shard)
        except Problem as problem:
            problems.append(problem.as_dict())
            continue
        except OSError as exc:
            problems.append(Problem(shard, f"cannot be read: {exc.strerror or exc}", code=UNSAFE).as_dict())
            continue
        if found is None:
            continue
        if "problem" in found:
            problems.append(Problem(shard, found.pop("problem"), code=INCOMPLETE).as_dict())
        headers[shard] = found
    if index is not None or (shard_names and not has_index):
        # Sizes, dtypes, names and their consistency are worked out by gen (weights.py) from
        # these, the same for every source.
        out["weights"] = {"index": index, "shards": shard_names,
                          "headers": {k: {**v, "tensors": {t: list(d) for t, d in v["tensors"].items()}}
                                      for k, v in headers.items()}}
    return out


def main(argv: list[str]) -> int:
    """``PYTHON reader.py PATH`` (or ``PYTHON - PATH`` with this file on stdin): the facts as JSON."""
    if len(argv) != 1:
        print("usage: reader.py CHECKPOINT_FOLDER", file=sys.stderr)
        return 2
    sys.stdout.write("\n" + RESULT_MARKER + "\n" + json.dumps(read_folder(argv[0]), sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
