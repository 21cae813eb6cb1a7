"""Output-side attacks on generator.emit.writer / safe_fs: symlinks, special files, managed lists,
ownership headers, temp-file residue. Each attack is run against the real writer (and the
CLI where the exit code matters), and the tree outside ``output/`` is compared before and after.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.emit.safe_fs import OutputTree, UnsafeOutputError, is_temp_of, temp_name
from generator.emit.writer import (MANAGED_LIST, MARKER, Action, HostTree, RenderedFile, WriteError, apply,
                                   owns_header, plan, plan_orphans)

HEAD = f"# {MARKER} 0.1.0 with `gen render --host h`. DO NOT EDIT.\n"


def _tree(host: str = "h", **files: str) -> HostTree:
    return HostTree(host, tuple(RenderedFile(k.replace("__", "/"), HEAD + v) for k, v in files.items()))


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under ``root`` (not following links): mode and content or link target."""
    out: dict[str, tuple[int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            data = os.readlink(p).encode() if p.is_symlink() else p.read_bytes() if stat.S_ISREG(st.st_mode) else b""
            out[str(p.relative_to(root))] = (st.st_mode, data)
    return out


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside output/ holding files an attacker would like gen to touch."""
    d = tmp_path / "outside"
    (d / "etc" / "sglang").mkdir(parents=True)
    (d / "keep.txt").write_text("precious\n")
    (d / "etc" / "sglang" / "a.env").write_text("precious env\n")
    return d


def _deployed(tmp_path: Path) -> Path:
    out = tmp_path / "output"
    apply(out, plan(out, _tree(etc__sglang__a="1\n")))
    return out


@pytest.mark.parametrize("link", ["", "h", "h/etc", "h/etc/sglang"])
def test_a_symlinked_folder_on_the_way_is_refused_for_plan_and_apply(tmp_path: Path, outside: Path,
                                                                      link: str) -> None:
    out = tmp_path / "output"
    if link:
        _deployed(tmp_path)
        victim = out / link
        os.rename(victim, tmp_path / "moved")
    else:
        victim = out
    target = outside / "etc" / "sglang" if link.endswith("sglang") else outside
    victim.symlink_to(target, target_is_directory=True)
    before = _snapshot(outside)
    shown = f"output/{link}".rstrip("/")
    with pytest.raises(UnsafeOutputError, match=f"^{shown} is a symlink .*-> {target}"):
        plan(out, _tree(etc__sglang__a="2\n"))
    forged = [ch for ch in plan(tmp_path / "fresh", _tree(etc__sglang__a="2\n"))]
    with pytest.raises(UnsafeOutputError, match=f"^cannot write output/h/[^:]+: {shown} is a symlink"):
        apply(out, forged)  # even a plan made elsewhere cannot write through the link
    assert _snapshot(outside) == before


def test_a_symlinked_file_is_refused_not_followed(tmp_path: Path, outside: Path) -> None:
    out = _deployed(tmp_path)
    (out / "h/etc/sglang/a").unlink()
    (out / "h/etc/sglang/a").symlink_to(outside / "keep.txt")
    before = _snapshot(outside)
    with pytest.raises(UnsafeOutputError, match="^output/h/etc/sglang/a is a symlink"):
        plan(out, _tree(etc__sglang__a="2\n"))
    with pytest.raises(UnsafeOutputError, match="is a symlink"):
        plan(out, _tree(etc__other="2\n"))  # as a managed file to remove, too
    assert _snapshot(outside) == before


def test_ghost_tree_with_symlinked_folder_cannot_delete_outside(tmp_path: Path, outside: Path) -> None:
    """The reported attack: output/ghost/.gen-managed lists d/keep.txt, output/ghost/d -> outside."""
    out = _deployed(tmp_path)
    ghost = out / "ghost"
    ghost.mkdir()
    (ghost / MANAGED_LIST).write_text(f"# {MARKER} for host ghost: the files below are gen's to rewrite and remove.\n"
                                      "d/keep.txt\n")
    (ghost / "d").symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside)
    with pytest.raises(UnsafeOutputError, match="^output/ghost/d is a symlink"):
        plan_orphans(out, ["h"])
    assert _snapshot(outside) == before


def test_a_symlink_directly_in_output_is_refused_by_orphan_planning(tmp_path: Path, outside: Path) -> None:
    out = _deployed(tmp_path)
    (out / "ghost").symlink_to(outside, target_is_directory=True)
    (outside / MANAGED_LIST).write_text("keep.txt\n")
    with pytest.raises(UnsafeOutputError, match="^output/ghost is a symlink"):
        plan_orphans(out, ["h"])
    assert (outside / "keep.txt").read_text() == "precious\n"


@pytest.mark.parametrize("line", ["../../outside/keep.txt", "/etc/passwd", "etc/../../x", "./etc/a", "etc//a", "etc/."])
def test_managed_list_cannot_name_anything_outside_its_tree(tmp_path: Path, line: str) -> None:
    out = _deployed(tmp_path)
    listed = out / "h" / MANAGED_LIST
    listed.write_text(listed.read_text() + line + "\n")
    with pytest.raises(UnsafeOutputError, match=rf"^output/h/\.gen-managed:3: lists '{line}', which is outside"):
        plan(out, _tree(etc__sglang__a="1\n"))
    with pytest.raises(UnsafeOutputError, match=r"\.gen-managed:3:"):
        plan_orphans(out, [])


def test_hard_link_to_an_outside_file_is_replaced_not_written_through(tmp_path: Path, outside: Path) -> None:
    """Decision: a hard link is allowed; the write renames a new inode over the name."""
    out = _deployed(tmp_path)
    managed = out / "h/etc/sglang/a"
    managed.unlink()
    os.link(outside / "keep.txt", managed)
    inode = (outside / "keep.txt").stat().st_ino
    changes = plan(out, _tree(etc__sglang__a="2\n"))
    assert ("h/etc/sglang/a", Action.UPDATED) in [(c.path, c.action) for c in changes]
    apply(out, changes)
    assert (outside / "keep.txt").read_text() == "precious\n"
    assert (outside / "keep.txt").stat().st_ino == inode and (outside / "keep.txt").stat().st_nlink == 1
    assert managed.read_text() == HEAD + "2\n"
    # and removal unlinks only gen's name
    os.unlink(managed)
    os.link(outside / "keep.txt", managed)
    apply(out, plan(out, _tree(etc__b="x\n")))
    assert (outside / "keep.txt").read_text() == "precious\n" and not managed.exists()


@pytest.mark.parametrize("kind", ["fifo", "chardev", "socket", "folder"])
def test_special_file_in_place_of_a_managed_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    out = _deployed(tmp_path)
    managed = out / "h/etc/sglang/a"
    managed.unlink()
    if kind == "fifo":
        os.mkfifo(managed)
    elif kind == "chardev":
        if os.geteuid() != 0:
            pytest.fail("creating a device node needs root; these tests run as root here")
        os.mknod(managed, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    elif kind == "socket":
        import socket
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(managed))
        sock.close()
    else:
        managed.mkdir()
    started = time.monotonic()
    for tree in (_tree(etc__sglang__a="2\n"), _tree(etc__b="2\n")):  # update, then removal
        with pytest.raises(UnsafeOutputError, match="^output/h/etc/sglang/a is a .*not a regular file"):
            plan(out, tree)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("first", [
    "# NOT Generated by gen", f"# {MARKER} is what this is NOT", f"#{MARKER} 1 with `gen render --host h`. DO NOT EDIT.",
    f"# {MARKER} 1 with `gen render --host h`. DO NOT EDIT. (mine)", f"x # {MARKER} 0.1.0 with `gen ansible`. DO NOT EDIT.",
])
def test_ownership_is_the_exact_header_line_not_a_substring(tmp_path: Path, first: str) -> None:
    out = _deployed(tmp_path)
    hand = out / "h/etc/hand"
    hand.write_text(first + "\nhand written\n")
    assert not owns_header(hand.read_text())
    with pytest.raises(WriteError, match="output/h/etc/hand exists but gen did not write it"):
        plan(out, _tree(etc__sglang__a="1\n", etc__hand="x\n"))
    assert hand.read_text() == first + "\nhand written\n"


@pytest.mark.parametrize("first", [
    f"# {MARKER} 0.1.0 with `gen render --host h`. DO NOT EDIT.", f"# {MARKER} 9.9 with `gen ansible`. DO NOT EDIT.",
    f"# {MARKER} for host h: the files below are gen's to rewrite and remove.",
])
def test_gen_header_lines_are_owned(first: str) -> None:
    assert owns_header(first + "\nrest\n")


def test_temp_residue_beside_owned_files_is_planned_for_removal_and_nothing_else(tmp_path: Path) -> None:
    out = _deployed(tmp_path)
    folder = out / "h/etc/sglang"
    ours = [folder / temp_name("a"), out / "h" / temp_name(MANAGED_LIST), folder / ".a.zz_09abc.tmp"]
    theirs = [folder / ".notes.abcdefgh.tmp", folder / ".a.tmp", folder / ".a.ABCDEFGH.tmp", folder / "a.abcdefgh.tmp",
              out / "h" / ".a.abcdefgh.tmp"]  # not beside a file named a
    for p in ours + theirs:
        p.write_text("partial")
    changes = plan(out, _tree(etc__sglang__a="1\n"))
    removed = sorted(c.path for c in changes if c.action is Action.REMOVED)
    assert removed == sorted(str(p.relative_to(out)) for p in ours)
    apply(out, changes)
    assert not any(p.exists() for p in ours) and all(p.exists() for p in theirs)
    assert {c.action for c in plan(out, _tree(etc__sglang__a="1\n"))} == {Action.UNCHANGED}


def test_temp_residue_that_is_a_symlink_is_refused(tmp_path: Path, outside: Path) -> None:
    out = _deployed(tmp_path)
    (out / "h/etc/sglang" / temp_name("a")).symlink_to(outside / "keep.txt")
    with pytest.raises(UnsafeOutputError, match="is a symlink"):
        plan(out, _tree(etc__sglang__a="1\n"))
    assert (outside / "keep.txt").read_text() == "precious\n"


def test_temp_names_follow_gen_pattern() -> None:
    name = temp_name("sglang-x.service")
    assert is_temp_of(name, {"sglang-x.service"}) and not is_temp_of(name, {"x.service"})


def test_a_folder_swapped_for_a_symlink_after_it_was_opened_is_not_followed(tmp_path: Path, outside: Path) -> None:
    """TOCTOU: the folder fd still names the folder that was checked."""
    out = _deployed(tmp_path)
    before = _snapshot(outside)
    with OutputTree(out, create=True) as tree:
        tree.dir_fd(("h", "etc", "sglang"))
        os.rename(out / "h/etc/sglang", out / "h/etc/checked")
        (out / "h/etc/sglang").symlink_to(outside / "etc" / "sglang", target_is_directory=True)
        tree.replace(("h", "etc", "sglang", "a.env"), tree.write_temp(("h", "etc", "sglang", "a.env"), b"x", 0o644))
    assert (out / "h/etc/checked/a.env").read_bytes() == b"x"
    assert _snapshot(outside) == before


def test_gen_ansible_never_writes_through_a_symlinked_folder_or_file(repo_copy: Path, outside: Path) -> None:
    """Not in the issue, same class: ``ansible/`` (or a file in it) planted as a symlink by a PR."""
    from click.testing import CliRunner

    from generator.cli.main import main

    before = _snapshot(outside)
    (repo_copy / "ansible").symlink_to(outside, target_is_directory=True)
    result = CliRunner().invoke(main, ["ansible", "--root", str(repo_copy)])
    assert result.exit_code == 3, result.stderr
    assert f"{repo_copy}/ansible is a symlink (-> {outside})" in result.stderr
    (repo_copy / "ansible").unlink()
    (repo_copy / "ansible").mkdir()
    (repo_copy / "ansible" / "site.yml").symlink_to(outside / "keep.txt")
    result = CliRunner().invoke(main, ["ansible", "--root", str(repo_copy)])
    assert result.exit_code == 3 and "site.yml is a symlink" in result.stderr, result.stderr
    assert _snapshot(outside) == before


PLANT_AT = ["", "h", "h/etc", "h/etc/sglang", "h/etc/sglang/a", "h/.gen-managed", "h/etc/sglang/.a.abcdefgh.tmp",
            "ghost", "ghost/d", "ghost/.gen-managed", "h/etc/other"]
PLANT_KINDS = ["link-dir", "link-file", "fifo", "junk", "dir", "hardlink", "ghost-list"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plants=st.lists(st.tuples(st.sampled_from(PLANT_AT), st.sampled_from(PLANT_KINDS)), min_size=1, max_size=4))
def test_property_any_plant_is_refused_or_handled_and_outside_never_changes(tmp_path: Path, plants: list) -> None:
    """Random symlinks, FIFOs, folders, hard links and lists planted anywhere gen looks."""
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    outside = base / "outside"
    (outside / "etc" / "sglang").mkdir(parents=True)
    (outside / "keep.txt").write_text("precious\n")
    out = _deployed(base)
    for rel, kind in plants:
        p = out / rel if rel else out
        if not p.parent.is_dir() or p.parent.is_symlink():
            continue
        if p.is_symlink() or p.is_file() or p.is_fifo():
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)
        if kind == "link-dir":
            p.symlink_to(outside, target_is_directory=True)
        elif kind == "link-file":
            p.symlink_to(outside / "keep.txt")
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "junk":
            p.write_text("# NOT Generated by gen\njunk\n")
        elif kind == "dir":
            p.mkdir()
        elif kind == "hardlink":
            os.link(outside / "keep.txt", p)
        else:
            p.mkdir(exist_ok=True)
            (p / MANAGED_LIST).write_text("d/keep.txt\n../outside/keep.txt\n")
    before = _snapshot(outside)
    tree = _tree(etc__sglang__a="2\n", etc__other="3\n")
    try:
        apply(out, plan(out, tree) + plan_orphans(out, ["h"]))
    except WriteError as exc:  # refused: the message names a path under output/
        assert "output" in str(exc), exc
    else:
        for f in tree.with_managed_list().files:
            st_ = (out / "h" / f.relpath).lstat()
            assert stat.S_ISREG(st_.st_mode) and (out / "h" / f.relpath).read_text() == f.text
    assert _snapshot(outside) == before


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_an_entry_swapped_after_the_folder_was_scanned_is_still_refused(tmp_path: Path, outside: Path,
                                                                      kind: str) -> None:
    """plan reads files its folder listing showed as regular without an lstat each: the open
    (O_NOFOLLOW) and the fstat after it must still refuse what was put there since."""
    out = _deployed(tmp_path)
    with OutputTree(out) as tree:
        listing = tree.scan(("h", "etc", "sglang"))
        assert listing["a"] is True
        managed = out / "h/etc/sglang/a"
        managed.unlink()
        if kind == "symlink":
            managed.symlink_to(outside / "keep.txt")
        elif kind == "fifo":
            os.mkfifo(managed)
        else:
            managed.mkdir()
        with pytest.raises(UnsafeOutputError, match="^output/h/etc/sglang/a is a "):
            tree.read_listed(("h", "etc", "sglang"), "a", listing)


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20])
def test_read_returns_every_byte_of_any_size(tmp_path: Path, size: int) -> None:
    """One read of fstat's size plus one ends at end of file; bigger files read on to the end."""
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    with OutputTree(tmp_path) as tree:
        assert tree.read(("f",)) == data
        assert tree.read_listed((), "f", tree.scan(())) == data


def test_what_appears_in_a_new_folder_before_its_mkdir_is_still_checked(tmp_path: Path, outside: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder that someone else put there between the probe and the mkdir fails the mkdir and
    then takes the usual checks: a symlink is refused by name, a folder made meanwhile is used."""
    out = tmp_path / "output"
    tree = HostTree("h", (RenderedFile("etc/sglang/a", f"# {MARKER} x\n"),))
    real = os.mkdir

    def racing(path, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if path == "sglang":
            os.symlink(outside, path, dir_fd=dir_fd)  # planted between the parent's mkdir and this one
        real(path, mode, dir_fd=dir_fd)

    before = _snapshot(outside)
    monkeypatch.setattr(os, "mkdir", racing)
    with pytest.raises(UnsafeOutputError, match=r"^cannot write output/h/etc/sglang/a: output/h/etc/sglang is"
                                                 r" a symlink \(-> "):
        apply(out, plan(out, tree))
    assert _snapshot(outside) == before  # nothing written through the link

    def made_meanwhile(path, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if path == "sglang":
            real(path, mode, dir_fd=dir_fd)  # another host's apply, say
        real(path, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", made_meanwhile)
    shutil.rmtree(out)
    apply(out, plan(out, tree))
    assert (out / "h/etc/sglang/a").read_text() == f"# {MARKER} x\n"


def test_folders_are_made_0755_whatever_the_umask(tmp_path: Path) -> None:
    """The rendered tree is the same under any umask that leaves the owner rwx: folders 0755, not 0775."""
    old = os.umask(0o002)
    try:
        with OutputTree(tmp_path / "output", create=True) as tree:
            parts = ("h", "etc", "a.env")
            tree.replace(parts, tree.write_temp(parts, b"x", 0o644))
    finally:
        os.umask(old)
    for folder in ("output", "output/h", "output/h/etc"):
        assert stat.S_IMODE((tmp_path / folder).stat().st_mode) == 0o755, folder


def test_a_pruned_folder_is_made_again_not_written_through_its_old_fd(tmp_path: Path) -> None:
    """prune forgets the removed folder's fd: the next write makes the folder again, on disk."""
    out = tmp_path / "output"
    with OutputTree(out, create=True) as tree:
        parts = ("h", "etc", "sglang", "a.env")
        tree.replace(parts, tree.write_temp(parts, b"x", 0o644))
        tree.unlink(parts)
        tree.prune(parts[:-1], stop=1)
        assert not (out / "h/etc").exists()
        tree.replace(parts, tree.write_temp(parts, b"y", 0o644))
    assert (out / "h/etc/sglang/a.env").read_bytes() == b"y"
