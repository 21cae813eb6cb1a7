"""Read source files (models/*.yaml, hosts/*.yaml) without trusting what is on disk.

A pull request controls every entry of these folders, so nothing here follows a symlink,
blocks, or reads without a bound:

* the folder is opened with ``O_DIRECTORY|O_NOFOLLOW`` and every file is opened relative to
  that descriptor (``dir_fd``) with ``O_NOFOLLOW|O_NONBLOCK``, then checked with ``fstat`` on
  the open descriptor: what is checked is what is read (no lstat-then-open race);
* only regular files are read: a FIFO, socket, device or folder named ``x.yaml`` is an error
  naming what it is. ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting
  for a writer;
* a symlink is an error naming the path (decision: shared manifests are copied, not linked;
  a link could point at /dev/zero, a FIFO, or a secret whose text would reach CI logs in a
  diagnostic);
* at most :data:`MAX_FILE_BYTES` are read;
* ``H.yaml`` and ``H.yml`` side by side are an error naming both: one would shadow the other.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from generator.errors import Diagnostic, Position, Severity

# 256 KiB: the largest example inventory is under 2 KB; a 300-host fleet keeps one small file
# per host. Bigger files are refused before parsing (see also limits.py).
MAX_FILE_BYTES = 256 * 1024
SUFFIXES = (".yaml", ".yml")
MAX_FILES = 10_000  # per folder: 300 hosts is a large fleet
# All of one folder's files together: 10,000 files of 256 KiB are 2.5 GB held at once (every
# file's bytes are kept to key the render cache). A fleet of 1,000 hosts is ~2 MB.
MAX_FOLDER_BYTES = 64 * 1024 * 1024

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class SourceFile:
    """One entry of models/ or hosts/: its bytes, or the diagnostic saying why it has none."""

    path: Path
    display: str  # e.g. "hosts/gpu-a.yaml", as diagnostics print it
    data: bytes | None
    error: Diagnostic | None = None

    @property
    def stem(self) -> str:
        """The file name without its suffix: the name the document must carry."""
        return self.path.stem


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return word
    return "not a regular file"


def _fail(display: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(Position(display, 0, 0), code, message)


def _open_failure(dir_fd: int | None, target: str, display: str, exc: OSError) -> Diagnostic:
    """Say why ``target`` could not be opened: what it is when it is no regular file (a
    symlink gives ELOOP, a socket ENXIO), else the system's own words (EACCES, ...)."""
    try:
        mode = os.stat(target, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = stat.S_IFREG  # vanished meanwhile: report the open error itself
    if stat.S_ISLNK(mode):
        try:
            dest = os.readlink(target, dir_fd=dir_fd)
        except OSError:
            dest = "?"
        return _fail(display, "Y009", f"is a symbolic link (to {dest!r}): gen reads only "
                     "regular files here; copy the file instead of linking it")
    if not stat.S_ISREG(mode):
        return _fail(display, "Y009", f"is {_kind(mode)}, not a regular file")
    return _fail(display, "Y008", f"cannot read file: {exc.strerror or exc}")


def read_at(dir_fd: int | None, path: Path, display: str,
            limit: int | None = MAX_FILE_BYTES) -> tuple[bytes | None, Diagnostic | None]:
    """Read one regular file (``path.name`` under ``dir_fd``, or ``path`` when it is None).

    Returns the bytes, or None and a diagnostic: Y009 not a regular file (symlink, FIFO,
    device, folder), Y010 larger than ``limit`` bytes (None: no limit, for gen's own
    catalogs and templates), Y008 any other reason it cannot be read
    (permission denied, ...), with the system's own words.
    """
    target = path.name if dir_fd is not None else str(path)
    try:
        fd = os.open(target, _OPEN_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        return None, _open_failure(dir_fd, target, display, exc)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, _fail(display, "Y009", f"is {_kind(info.st_mode)}, not a regular file")
        if limit is not None and info.st_size > limit:
            return None, _fail(display, "Y010", f"is {info.st_size} bytes; at most {limit} "
                               "are read (split it, or remove what is not needed)")
        chunks: list[bytes] = []
        size = 0
        while limit is None or size <= limit:  # the file may grow after fstat: at most one byte more
            chunk = os.read(fd, 1 << 20 if limit is None else limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if limit is not None and size > limit:
            return None, _fail(display, "Y010", f"is larger than {limit} bytes")
        return b"".join(chunks), None
    except OSError as exc:  # EISDIR on some systems, EIO, ...
        return None, _fail(display, "Y008", f"cannot read file: {exc.strerror or exc}")
    finally:
        os.close(fd)


def read_file(path: Path, display: str, limit: int | None = MAX_FILE_BYTES) -> tuple[bytes | None, Diagnostic | None]:
    """Read one regular file by path (the last component is not followed if a symlink)."""
    return read_at(None, path, display, limit)


def linked_folder(root: Path, folders: tuple[str, ...]) -> str | None:
    """Why a file gen writes into ``root/<folders...>`` would land elsewhere, or None.

    The repository root is the operator's choice; every folder below it is repository
    content a pull request controls, and a symbolic link there (``catalogs/sglang ->
    ~/.config/...``) would take a capture out of the repository. A folder that does not
    exist yet is fine (the writer makes it); a link or a file in its place is not.
    """
    path = root
    for name in folders:
        path = path / name
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{path.relative_to(root)}/ cannot be read: {exc.strerror or exc}"
        if stat.S_ISLNK(mode):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return (f"{path.relative_to(root)}/ is a symbolic link (to {target!r}): gen writes into the "
                    "repository's own folder only; make it a real folder")
        if not stat.S_ISDIR(mode):
            kind = "a file" if stat.S_ISREG(mode) else _kind(mode)
            return f"{path.relative_to(root)} is {kind} where gen needs a folder: move it away"
    return None


def source_files(root: Path, folder: str) -> list[SourceFile]:
    """Every ``*.yaml``/``*.yml`` entry of ``root/folder`` in name order, each read safely.

    Hidden entries are skipped. A missing folder gives an empty list (the caller reports it
    when it matters); a folder that is a symlink gives one Y009 entry. Two entries with the
    same stem (``H.yaml`` and ``H.yml``) both carry an R009 error and neither is read.
    """
    directory = root / folder
    try:
        dir_fd = os.open(directory, _DIR_FLAGS)
    except OSError as exc:
        # O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR (Linux) or ELOOP.
        symlink = exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and directory.is_symlink())
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and not symlink:
            return []  # no such folder (a plain file of that name included): nothing to load
        reason = ("is a symbolic link: gen reads only a real folder here" if symlink
                  else f"cannot be read: {exc.strerror or exc}")
        return [SourceFile(directory, f"{folder}/", None,
                           _fail(f"{folder}/", "Y009" if symlink else "Y008", f"{folder}/ {reason}"))]
    try:
        names = sorted(n for n in os.listdir(dir_fd) if n.endswith(SUFFIXES) and not n.startswith("."))
        stems: dict[str, list[str]] = {}
        for name in names:
            stems.setdefault(name.rsplit(".", 1)[0], []).append(name)
        out: list[SourceFile] = []
        total = 0
        if len(names) > MAX_FILES:
            return [SourceFile(directory, f"{folder}/", None, _fail(
                f"{folder}/", "Y010", f"{folder}/ holds {len(names)} YAML files; at most {MAX_FILES} are read"))]
        for name in names:
            if not name.isprintable():  # a newline would forge diagnostic lines; not UTF-8 cannot print
                shown = f"{folder}/{ascii(name)[1:-1]}"
                out.append(SourceFile(directory / name, shown, None, _fail(
                    shown, "Y015", "the file name is not printable text (control characters or bytes that are "
                    "not UTF-8): rename it")))
                continue
            display = f"{folder}/{name}"
            twins = stems[name.rsplit(".", 1)[0]]
            if len(twins) > 1:
                both = " and ".join(f"{folder}/{t}" for t in twins)
                out.append(SourceFile(directory / name, display, None, _fail(
                    display, "R009", f"{both} both define '{name.rsplit('.', 1)[0]}': one would shadow "
                    "the other; keep one of them")))
                continue
            if total > MAX_FOLDER_BYTES:
                out.append(SourceFile(directory / name, display, None, _fail(
                    display, "Y010", f"not read: the files of {folder}/ before it hold more than "
                    f"{MAX_FOLDER_BYTES >> 20} MiB together")))
                continue
            data, error = read_at(dir_fd, directory / name, display)
            total += len(data or b"")
            out.append(SourceFile(directory / name, display, data, error))
        return out
    finally:
        os.close(dir_fd)


# Git's own files say nothing to gen (an empty folder is kept with .gitkeep).
_GIT_FILES = frozenset({".gitkeep", ".gitignore", ".gitattributes"})


def _unread_reason(name: str, is_folder: bool) -> str | None:
    """Why gen does not read the entry ``name`` of hosts/ or models/, or None when it reads it."""
    if name in _GIT_FILES:
        return None
    if name.startswith("."):
        return "a hidden entry"
    if name.endswith("~") or (name.startswith("#") and name.endswith("#")) or name.endswith((".swp", ".swo")):
        return "an editor's backup or swap file"
    if name.endswith(SUFFIXES):
        return None  # read (source_files names what a '.yaml' that is no regular file is)
    if is_folder:
        return "a folder (gen reads no subfolders here)"
    return f"not named *{' or *'.join(SUFFIXES)}"


def unread_entries(root: Path, folder: str) -> list[Diagnostic]:
    """Y018, a warning at each entry of ``root/folder`` that gen does not read.

    Terraform skips hidden files, ``x~`` and ``#x#`` without a word, and files of other
    suffixes; helm lint reports a template it would not render. gen says so: an operator (or
    a reviewer of a pull request) who adds ``hosts/.gpu-c.yaml``, ``models/qwen.YAML`` or
    ``hosts/gpu-a.yaml.bak`` expects it to be checked, and is told it is not. A warning, not
    an error: an editor's swap file in a working tree is no mistake. Names are printed escaped
    (``Diagnostic`` does it).
    """
    directory = root / folder
    try:
        dir_fd = os.open(directory, _DIR_FLAGS)
    except OSError:
        return []  # source_files reports a folder it cannot read
    try:
        names = sorted(os.listdir(dir_fd))
        out: list[Diagnostic] = []
        for name in names[:MAX_FILES]:
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except OSError:
                continue
            reason = _unread_reason(name, stat.S_ISDIR(mode))
            if reason is not None:
                shown = f"{folder}/{name}" + ("/" if stat.S_ISDIR(mode) else "")
                out.append(Diagnostic(Position(shown, 0, 0), "Y018",
                                      f"not read: {reason}; gen reads the files {folder}/*.yaml and "
                                      f"{folder}/*.yml that are not hidden (rename it to have it checked, "
                                      f"or move it out of {folder}/)", Severity.WARNING))
        return out
    finally:
        os.close(dir_fd)


def case_collisions_of(files: list[SourceFile]) -> list[Diagnostic]:
    """R013 at each of two files of one folder whose names differ only in case (``Qwen.yaml``
    and ``qwen.yaml``: one file on a case-insensitive checkout). Exact stem twins are R009."""
    from generator.load.names import case_collisions

    exact = {sf.stem for sf in files if sf.error is not None and sf.error.code == "R009"}
    return case_collisions(((sf.path.name, Position(sf.display)) for sf in files if sf.stem not in exact),
                           "file name")


def host_file_index(files: list[SourceFile]) -> dict[str, SourceFile]:
    """Host files by stem; ``<name>.yaml`` before ``<name>.yml``."""
    index: dict[str, SourceFile] = {}
    for sf in files:
        index.setdefault(sf.stem, sf)
    return index
