"""File operations under ``output/`` that never follow a symlink (directory-fd based).

A pull request controls every entry under ``output/``: it can make ``output/`` itself,
``output/<host>``, any folder below it or any file a symlink, a FIFO or a device. So every
operation here starts from a directory fd and opens one path component at a time with
``O_NOFOLLOW``: a symlink anywhere on the way is refused with :class:`UnsafeOutputError`
(naming its path and target), never followed. Writes go to a temp file created with
``O_EXCL|O_NOFOLLOW`` in the already-opened folder, then ``rename(2)`` over the target
(which replaces the directory entry, so a hard link's other name, outside ``output/``,
keeps its old content). Removals are ``unlinkat``/``rmdir`` relative to the folder's fd.
Because the folders are held open, swapping a component for a symlink after it was opened
(a TOCTOU race) changes nothing: the fd still names the folder that was checked.

Only the repository root itself (the ``--root`` the operator chose) is opened by path.
"""

from __future__ import annotations

import base64
import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from generator.emit import durable
from generator.errors import GenError, printable

OUTPUT_DISPLAY = "output"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted where a file should be must not hang the open.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20  # bytes per read of a file under output/
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# gen's temp files are ``.<name>.<8 chars>.tmp`` (the shape tempfile.mkstemp gave them
# before, so residue of older versions is recognized too).
TEMP_RE = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp")


class WriteError(GenError, OSError):
    """A file could not be written, or belongs to someone else (exit 3: environment)."""


class UnsafeOutputError(WriteError):
    """A symlink, FIFO, device or foreign path under ``output/``: refused, never followed."""


def temp_name(name: str) -> str:
    """A fresh temp file name for ``name`` in gen's own pattern ``.<name>.XXXXXXXX.tmp``."""
    # 40 random bits as 8 base32 letters (a-z, 2-7: what TEMP_RE accepts), one call per name;
    # os.urandom is secrets.token_bytes without importing secrets (hmac, random) every run.
    return f".{name}.{base64.b32encode(os.urandom(5)).decode('ascii').lower()}.tmp"


def is_temp_of(entry: str, names: set[str]) -> bool:
    """True when ``entry`` is a temp file gen made for one of ``names`` (same folder)."""
    m = TEMP_RE.fullmatch(entry)
    return m is not None and m.group("name") in names


# What gen reads of output/ is repository content a pull request controls: a file gen renders
# holds at most 1 Mi characters (emit/render.MAX_RENDERED_BYTES), 4 MiB of UTF-8, and a
# host's tree is a few KB a service. Past these, a file is refused unread: `gen diff` of one
# stale 200 MB file took 296 s and 16 GB. The total bounds a tree of many files (output/ of
# a 3,000-host fleet is about 45 MB). A tree of another folder gen writes may allow larger
# files: ansible/inventory.yml grows by about 2 KB a host (MAX_GENERATED_FILE_BYTES).
MAX_OUTPUT_FILE_BYTES = 4 * 1024 * 1024
MAX_GENERATED_FILE_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_READ_BYTES = 256 * 1024 * 1024


def _too_large(display: str, size: int, limit: int) -> UnsafeOutputError:
    return UnsafeOutputError(f"{display} is {size} bytes, more than any file gen writes there "
                             f"({limit >> 20} MiB): gen does not read it; delete it, then run gen again")


def _read_to_end(fd: int, size: int, display: str, limit: int) -> bytes:
    """Every byte of the open regular file ``fd``, whose fstat said ``size``: one ``read`` of
    one byte more ends at end of file; a file that changed size meanwhile loops to its end,
    up to ``limit`` bytes."""
    if size < _CHUNK:  # every file gen writes: one read (no min(): this runs per file)
        data = os.read(fd, size + 1)
        if len(data) == size:
            return data
    else:
        data = os.read(fd, _CHUNK)
    chunks, total = [data], len(data)
    while chunk := os.read(fd, _CHUNK):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(display, total, limit)
    return b"".join(chunks)


def _symlink_error(display: str, parent_fd: int, name: str) -> UnsafeOutputError:
    try:
        target = os.readlink(name, dir_fd=parent_fd)
    except OSError:
        target = "?"
    # The target is whatever was written into the link: one line, escaped (errors.printable).
    return UnsafeOutputError(
        f"{display} is a symlink (-> {printable(target)}); gen never follows a symlink under output/: "
        "remove it (and check where it points), then run again")


def _not_regular(display: str, mode: int) -> UnsafeOutputError:
    return UnsafeOutputError(f"{display} is {_kind(mode)}, not a regular file; gen only writes"
                             " regular files there: remove it, then run again")


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink"),
             (stat.S_ISREG, "a file"))
    return next((what for test, what in kinds if test(mode)), "not a regular file")


class OutputTree:
    """``output/`` opened by fd; folders below it opened once each, without following links.

    Use as a context manager: the folder fds are closed on exit. ``create`` makes missing
    folders (``output/`` itself included) as they are needed. ``display`` names the root
    in messages (another folder gen writes, such as ``ansible/``, works the same way).
    """

    def __init__(self, output_root: Path, create: bool = False, display: str = OUTPUT_DISPLAY,
                 max_file_bytes: int | None = None) -> None:
        self._root = output_root
        self._max_file = MAX_OUTPUT_FILE_BYTES if max_file_bytes is None else max_file_bytes
        self._create = create
        self._display = display
        self._fds: dict[tuple[str, ...], int] = {}
        self._read_bytes = 0  # of every file this tree read (MAX_OUTPUT_READ_BYTES)
        self._parent_fd: int | None = None

    def __enter__(self) -> OutputTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every folder fd this tree opened."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if self._parent_fd is not None:
            os.close(self._parent_fd)
            self._parent_fd = None

    def display(self, parts: tuple[str, ...]) -> str:
        """How a path below the root is named in messages: ``output/h/etc``."""
        return printable("/".join((self._display, *parts)))  # names listed from disk: escaped

    def _open_root(self) -> int | None:
        if not self._root.name:  # "/" (or "."): no folder holds it by a name; opened by path
            try:
                return os.open(self._root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as exc:
                raise WriteError(f"cannot open {self._root}: {exc.strerror}") from exc
        if self._parent_fd is None:
            try:  # the repository root is the operator's choice: opened by path
                self._parent_fd = os.open(self._root.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as exc:
                raise WriteError(f"cannot open {self._root.parent}: {exc.strerror}") from exc
        return self._open_in(self._parent_fd, self._root.name, ())

    def _open_in(self, parent_fd: int, name: str, parts: tuple[str, ...]) -> int | None:
        """Open folder ``name`` in ``parent_fd`` (``parts`` names it); None when missing
        (made first when creating)."""
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not self._create:
                return None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise WriteError(f"cannot open {self.display(parts)}: {exc.strerror}") from exc
            st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise _symlink_error(self.display(parts), parent_fd, name) from None
            if not self._create:
                return None  # a file where a folder should be: nothing below it exists
            raise UnsafeOutputError(f"{self.display(parts)} is {_kind(st.st_mode)} where gen needs a folder: "
                                    "move it away, then run again") from None
        return self._make_in(parent_fd, name, parts)

    def _make_in(self, parent_fd: int, name: str, parts: tuple[str, ...]) -> int | None:
        try:
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        except FileExistsError:
            pass  # made meanwhile (another host's apply): open it, still without following
        except OSError as exc:
            raise WriteError(f"cannot create {self.display(parts)}: {exc.strerror}") from exc
        return self._open_in(parent_fd, name, parts)

    def dir_fd(self, parts: tuple[str, ...]) -> int | None:
        """The fd of folder ``output/<parts>`` (None when it does not exist and not creating)."""
        if parts in self._fds:
            return self._fds[parts]
        if not parts:
            fd = self._open_root()
        else:  # one component at a time, each opened without following a link
            parent = self.dir_fd(parts[:-1])
            fd = None if parent is None else self._open_in(parent, parts[-1], parts)
        if fd is not None:
            self._fds[parts] = fd
        return fd

    def forget_below(self, top: str) -> None:
        """Close ``output/<top>``'s folder fds: few fds stay open."""
        for parts in [p for p in self._fds if p and p[0] == top]:
            os.close(self._fds.pop(parts))

    def forget(self, parts: tuple[str, ...]) -> None:
        """Drop the cached fd of a folder that was removed."""
        fd = self._fds.pop(parts, None)
        if fd is not None:
            os.close(fd)

    def lstat(self, parts: tuple[str, ...]) -> os.stat_result | None:
        """``lstat`` of ``output/<parts>`` through its folder's fd (None when missing)."""
        parent = self.dir_fd(parts[:-1])
        if parent is None:
            return None
        try:
            return os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read(self, parts: tuple[str, ...]) -> bytes | None:
        """A regular file's bytes; None when missing; a symlink/FIFO/device is refused."""
        parent = self.dir_fd(parts[:-1])
        if parent is None:
            return None
        name = parts[-1]
        try:  # lstat first: a device is refused before it is ever opened
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            raise _symlink_error(self.display(parts), parent, name)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(self.display(parts), st.st_mode)
        return self._read_in(parent, parts[:-1], name)

    def read_listed(self, folder: tuple[str, ...], name: str, listing: dict[str, bool]) -> bytes | None:
        """:meth:`read` of ``output/<folder>/<name>`` as ``listing`` (:meth:`scan` of ``folder``) shows it.

        Not listed: None; listed as not a regular file: refused by :meth:`read`'s checks. A
        regular file is opened without an lstat (``O_NOFOLLOW`` and the fstat after opening
        still refuse what was put there since) and no path tuple is built: a plan's per-file path.
        """
        kind = listing.get(name)
        if kind is None:
            return None
        parent = self._fds.get(folder) if kind else None  # scan opened it
        if parent is None:
            if not kind:
                return self.read((*folder, name))
            parent = self.dir_fd(folder)
            if parent is None:
                return None
        return self._read_in(parent, folder, name)

    def _read_in(self, parent: int, folder: tuple[str, ...], name: str) -> bytes | None:
        """Open ``name`` in the folder fd ``parent`` without following it; its bytes if regular."""
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=parent)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _symlink_error(self.display((*folder, name)), parent, name) from None
            raise WriteError(f"cannot read {self.display((*folder, name))}: {exc.strerror}") from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # swapped since the lstat (or the listing)
                raise _not_regular(self.display((*folder, name)), st.st_mode)
            if st.st_size > self._max_file:
                raise _too_large(self.display((*folder, name)), st.st_size, self._max_file)
            self._read_bytes += st.st_size
            if self._read_bytes > MAX_OUTPUT_READ_BYTES:
                raise UnsafeOutputError(f"{self.display(folder)}: the files gen reads there hold more than "
                                        f"{MAX_OUTPUT_READ_BYTES >> 20} MiB, far more than gen renders; "
                                        "delete what gen did not write, then render again")
            return _read_to_end(fd, st.st_size, self.display((*folder, name)), self._max_file)
        finally:
            os.close(fd)

    def scan(self, parts: tuple[str, ...]) -> dict[str, bool]:
        """Names in folder ``output/<parts>``, each True when it is a regular file (not a link).

        One ``getdents`` for the whole folder instead of an lstat per file (the type comes
        from the folder entry; a file system that does not record it costs an lstat).
        Empty when the folder does not exist.
        """
        fd = self.dir_fd(parts)
        if fd is None:
            return {}
        with os.scandir(fd) as entries:
            return {e.name: e.is_file(follow_symlinks=False) for e in entries}

    def listdir(self, parts: tuple[str, ...]) -> list[str]:
        """Names in folder ``output/<parts>`` (empty when it does not exist)."""
        fd = self.dir_fd(parts)
        return sorted(os.listdir(fd)) if fd is not None else []

    def write_temp(self, parts: tuple[str, ...], data: bytes, mode: int) -> str:
        """Write ``data`` to a new temp file beside ``output/<parts>`` (not synced); its name."""
        parent = self.dir_fd(parts[:-1])
        assert parent is not None  # creating: dir_fd made it or raised
        while True:
            tmp = temp_name(parts[-1])
            try:
                fd = os.open(tmp, _TEMP_FLAGS, 0o600, dir_fd=parent)
                break
            except FileExistsError:
                continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            os.unlink(tmp, dir_fd=parent)
            raise
        os.close(fd)
        return tmp

    def fsync_entry(self, parts: tuple[str, ...], name: str | None = None) -> None:
        """fsync folder ``output/<parts>``, or the file ``name`` in it."""
        fd = self.dir_fd(parts)
        assert fd is not None
        if name is None:
            os.fsync(fd)
            return
        file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        try:
            os.fsync(file_fd)
        finally:
            os.close(file_fd)

    def sync_filesystems(self, folders: Iterable[tuple[str, ...]]) -> bool:
        """``syncfs`` once per filesystem holding one of ``folders`` (opened): one call makes every
        file and folder written there durable. False without syncfs: the caller fsyncs each."""
        by_device: dict[int, int] = {}
        # The root first: since Linux 5.8 syncfs reports a writeback error that happened
        # after its fd was opened, and the root was opened before anything was written.
        for parts in ((), *folders):
            fd = self.dir_fd(parts)
            assert fd is not None
            by_device.setdefault(os.fstat(fd).st_dev, fd)
        return all(durable.syncfs(fd) for fd in by_device.values())

    def replace(self, parts: tuple[str, ...], tmp: str) -> None:
        """Rename temp file ``tmp`` over ``output/<parts>`` (same folder, by fd)."""
        parent = self.dir_fd(parts[:-1])
        os.replace(tmp, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)

    def unlink(self, parts: tuple[str, ...], missing_ok: bool = True) -> None:
        """Remove the entry ``output/<parts>`` itself (a link is removed, never its target)."""
        parent = self.dir_fd(parts[:-1])
        if parent is None:
            return
        try:
            os.unlink(parts[-1], dir_fd=parent)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def prune(self, parts: tuple[str, ...], stop: int = 0) -> None:
        """Remove empty folders from ``output/<parts>`` upwards, keeping the first ``stop`` levels."""
        while len(parts) > stop:
            parent = self.dir_fd(parts[:-1])
            if parent is None:
                return
            try:
                os.rmdir(parts[-1], dir_fd=parent)
            except OSError:
                return
            self.forget(parts)
            parts = parts[:-1]
