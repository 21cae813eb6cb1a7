"""Durability of generator.emit.writer.apply: one syncfs per filesystem where Linux has it,
one fsync per file and per folder where it does not, and always data before names.

The sync calls are recorded by wrapping the real ones (they still run): the test asserts which
of them ran and in what order relative to the renames, on a real filesystem under tmp_path.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from generator.emit import durable
from generator.emit.writer import MARKER, HostTree, RenderedFile, WriteError, apply, plan

HEAD = f"# {MARKER} test\n"


def test_syncfs_is_found_on_this_kernel() -> None:
    """CI and the hosts gen writes on run Linux >= 5.8: the syncfs tests below use the real call
    (the fsync fallback has its own tests, with the call taken away)."""
    assert durable._libc_syncfs() is not None


def _tree() -> HostTree:
    files = {"etc/a": "1\n", "etc/b": "2\n", "usr/bin/c": "3\n"}
    return HostTree("h", tuple(RenderedFile(k, HEAD + v) for k, v in files.items()))


def _record(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Wrap os.fsync, durable.syncfs and os.replace so each call is logged, then run."""
    log: list[str] = []
    real_fsync, real_syncfs, real_replace = os.fsync, durable.syncfs, os.replace

    def fsync(fd: int) -> None:
        log.append("fsync")
        real_fsync(fd)

    def syncfs(fd: int) -> bool:
        done = real_syncfs(fd)
        log.append("syncfs" if done else "syncfs-unavailable")
        return done

    def replace(*args: object, **kwargs: object) -> None:
        log.append("rename")
        real_replace(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(durable, "syncfs", syncfs)
    monkeypatch.setattr(os, "replace", replace)
    return log


def test_syncfs_flushes_a_real_filesystem_and_reports_a_bad_fd(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert durable.syncfs(fd) is True
    finally:
        os.close(fd)
    with pytest.raises(OSError) as info:
        durable.syncfs(fd)  # closed: the error of syncfs(2) is raised, not swallowed
    assert info.value.errno == errno.EBADF


def test_apply_syncs_the_filesystem_once_before_and_once_after_the_renames(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "output"
    changes = plan(out, _tree())
    log = _record(monkeypatch)
    apply(out, changes)
    # 4 files (with .gen-managed): data durable before any name points at it, names after.
    assert log == ["syncfs"] + ["rename"] * 4 + ["syncfs"]
    assert (out / "h/usr/bin/c").read_text() == HEAD + "3\n"
    assert sorted(n for _, _, names in os.walk(out) for n in names if n.endswith(".tmp")) == []


def test_without_syncfs_every_file_and_folder_is_fsynced_data_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "output"
    changes = plan(out, _tree())
    monkeypatch.setattr(durable, "_libc_syncfs", lambda: None)  # as on macOS or Linux < 5.8
    log = _record(monkeypatch)
    apply(out, changes)
    assert [e for e in log if e != "syncfs-unavailable"] == ["fsync"] * 4 + ["rename"] * 4 + ["fsync"] * 3
    assert (out / "h/etc/b").read_text() == HEAD + "2\n"


def test_syncfs_is_not_trusted_before_linux_5_8(monkeypatch: pytest.MonkeyPatch) -> None:
    durable._libc_syncfs.cache_clear()
    try:
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "h", "5.4.0-150-generic", "", "")))
        monkeypatch.setattr(sys, "platform", "linux")
        assert durable._libc_syncfs() is None  # writeback errors were not reported then
    finally:
        durable._libc_syncfs.cache_clear()


def test_a_sync_error_before_the_renames_replaces_nothing_and_is_a_write_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "output"
    apply(out, plan(out, _tree()))
    changed = HostTree("h", tuple(RenderedFile(f.relpath, f.text + "new\n") for f in _tree().files))
    changes = plan(out, changed)

    def failing(fd: int) -> bool:  # as syncfs(2) reports a writeback error (EIO)
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(durable, "syncfs", failing)
    with pytest.raises(WriteError, match="no file was replaced"):
        apply(out, changes)
    assert (out / "h/etc/a").read_text() == HEAD + "1\n"  # old content, and no temp file left
    assert sorted(n for _, _, names in os.walk(out) for n in names if n.endswith(".tmp")) == []
