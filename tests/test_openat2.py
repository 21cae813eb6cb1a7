"""generator.emit.openat2: a deep folder opened in one call, or None, never through a link."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.emit import openat2
from generator.emit.safe_fs import OutputTree, UnsafeOutputError
from generator.emit.writer import MARKER, HostTree, RenderedFile, apply, plan



def _kernel() -> tuple[int, ...]:
    return tuple(int(p) for p in os.uname().release.split("-")[0].split(".")[:2])


def test_the_call_is_found_where_the_kernel_has_it() -> None:
    """The machines gen runs on (and CI) have Linux >= 5.6: the tests below use the real call."""
    uname = os.uname()
    assert uname.sysname == "Linux" and _kernel() >= (5, 6) and uname.machine in openat2._MACHINES
    assert openat2._call() is not None


def test_an_architecture_with_other_call_numbers_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """437 is openat2 only where the new calls share one table: elsewhere it is never called."""
    real = os.uname()
    fake = os.uname_result((real.sysname, real.nodename, real.release, real.version, "mips64"))
    monkeypatch.setattr(openat2.os, "uname", lambda: fake)
    openat2._call.cache_clear()
    try:
        assert openat2._call() is None
    finally:
        monkeypatch.undo()
        openat2._call.cache_clear()
    assert openat2._call() is not None


@pytest.fixture
def top(tmp_path: Path) -> Iterator[int]:
    (tmp_path / "h/etc/systemd/system").mkdir(parents=True)
    (tmp_path / "h/etc/file").write_text("x")
    (tmp_path / "elsewhere/deep").mkdir(parents=True)
    (tmp_path / "h/link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "h/etc/last").symlink_to(tmp_path / "elsewhere")
    fd = os.open(tmp_path / "h", os.O_RDONLY | os.O_DIRECTORY)
    yield fd
    os.close(fd)


def test_a_deep_folder_is_the_folder_a_walk_reaches(top: int, tmp_path: Path) -> None:
    fd = openat2.open_below(top, ("etc", "systemd", "system"))
    assert fd is not None
    try:
        st, want = os.fstat(fd), os.stat(tmp_path / "h/etc/systemd/system")
        assert (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino)
    finally:
        os.close(fd)


@pytest.mark.parametrize("parts", [("link", "deep"), ("etc", "last"), ("etc", "missing", "x"), ("etc", "file", "x"),
                                   ("..", "elsewhere"), ("etc", "..", "..", "elsewhere")])
def test_a_link_a_missing_folder_a_file_or_a_way_out_is_none(top: int, parts: tuple[str, ...]) -> None:
    """Each is left to the walk, which names it; nothing is opened through a link."""
    assert openat2.open_below(top, parts) is None


def test_without_the_call_every_folder_is_walked(monkeypatch: pytest.MonkeyPatch, top: int) -> None:
    monkeypatch.setattr(openat2, "_call", lambda: None)
    assert openat2.open_below(top, ("etc", "systemd", "system")) is None


@pytest.mark.parametrize("available", [True, False])
def test_plans_are_the_same_with_or_without_it_links_included(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              available: bool) -> None:
    """Same changes either way; a link in the middle of a deep path is named exactly as the walk names it."""
    if not available:
        monkeypatch.setattr(openat2, "_call", lambda: None)
    out = tmp_path / "output"
    tree = HostTree("h", (RenderedFile("etc/systemd/system/a", f"# {MARKER} a\n"),
                          RenderedFile("usr/local/libexec/gen/b", f"# {MARKER} b\n")))
    apply(out, plan(out, tree))
    changed = HostTree("h", (RenderedFile("etc/systemd/system/a", f"# {MARKER} a2\n"), tree.files[1]))
    assert [(c.path, c.action.value) for c in plan(out, changed)] == [
        ("h/.gen-managed", "unchanged"), ("h/etc/systemd/system/a", "updated"), ("h/usr/local/libexec/gen/b", "unchanged")]
    (tmp_path / "elsewhere/gen").mkdir(parents=True)
    (out / "h/usr/local/libexec").rename(tmp_path / "moved")
    (out / "h/usr/local/libexec").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeOutputError, match=r"^output/h/usr/local/libexec is a symlink \(-> "):
        plan(out, tree)
    with OutputTree(out) as walked:
        assert walked.dir_fd(("h", "usr", "local", "gone", "x")) is None  # missing: None, remembered
        assert ("h", "usr", "local", "gone") in walked._missing
