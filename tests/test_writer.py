"""Unit tests for generator.emit.writer: plans, atomic writes, ownership, removal, diffs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from generator.emit.writer import (MANAGED_LIST, MARKER, Action, HostTree, RenderedFile, WriteError, apply,
                              atomic_write, plan, plan_orphans, unified_diff)

HEAD = f"# {MARKER} test\n"


def _tree(**files: str) -> HostTree:
    return HostTree("h", tuple(RenderedFile(k.replace("__", "/"), HEAD + v) for k, v in files.items()))


def _actions(changes: list) -> list[tuple[str, str]]:
    return [(c.path, c.action.value) for c in changes]


def test_create_then_unchanged_then_update_then_remove(tmp_path: Path) -> None:
    out = tmp_path / "output"
    first = plan(out, _tree(etc__a="1\n", etc__b="2\n"))
    assert _actions(first) == [("h/.gen-managed", "created"), ("h/etc/a", "created"), ("h/etc/b", "created")]
    apply(out, first)
    assert (out / "h/etc/a").read_text() == HEAD + "1\n"
    assert (out / "h" / MANAGED_LIST).read_text().splitlines()[1:] == ["etc/a", "etc/b"]
    assert {c.action for c in plan(out, _tree(etc__a="1\n", etc__b="2\n"))} == {Action.UNCHANGED}
    second = plan(out, _tree(etc__a="1 changed\n"))
    assert _actions(second) == [("h/.gen-managed", "updated"), ("h/etc/a", "updated"), ("h/etc/b", "removed")]
    apply(out, second)
    assert not (out / "h/etc/b").exists()
    assert (out / "h/etc/a").read_text() == HEAD + "1 changed\n"


def test_files_gen_did_not_write_are_never_touched(tmp_path: Path) -> None:
    out = tmp_path / "output"
    apply(out, plan(out, _tree(etc__a="1\n")))
    (out / "h/etc/notes.txt").write_text("mine\n")
    (out / "README").parent.mkdir(exist_ok=True)
    (out / "README").write_text("mine too\n")
    apply(out, plan(out, _tree(etc__z="2\n")))  # etc/a removed; etc/notes.txt is not gen's
    assert (out / "h/etc/notes.txt").read_text() == "mine\n"
    assert (out / "README").read_text() == "mine too\n"
    # A hand-written file where gen wants to write: refused, nothing written.
    (out / "h/etc/c").write_text("hand made\n")
    with pytest.raises(WriteError, match="output/h/etc/c exists but gen did not write it"):
        plan(out, _tree(etc__z="2\n", etc__c="3\n"))
    assert (out / "h/etc/c").read_text() == "hand made\n"


def test_removal_prunes_empty_folders_but_not_the_output_root(tmp_path: Path) -> None:
    out = tmp_path / "output"
    apply(out, plan(out, _tree(a__b__c="1\n", x="2\n")))
    apply(out, plan(out, _tree(x="2\n")))
    assert not (out / "h/a").exists()
    assert (out / "h/x").exists()


def test_orphaned_host_trees_are_planned_for_removal(tmp_path: Path) -> None:
    out = tmp_path / "output"
    apply(out, plan(out, _tree(a="1\n")))
    (out / "other").mkdir()
    (out / "other/keep").write_text("not gen's\n")
    assert _actions(plan_orphans(out, ["h"])) == []
    assert _actions(plan_orphans(out, [])) == [("h/a", "removed"), ("h/.gen-managed", "removed")]


def test_atomic_write_leaves_no_temp_files_and_sets_mode(tmp_path: Path) -> None:
    target = tmp_path / "d" / "f"
    atomic_write(target, "x\n", 0o600)
    atomic_write(target, "y\n", 0o644)
    assert target.read_text() == "y\n"
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert os.listdir(target.parent) == ["f"]


def test_apply_writes_each_file_with_its_rendered_mode(tmp_path: Path) -> None:
    out = tmp_path / "output"
    old = os.umask(0)  # the mode written must be the file's own, not a umask leftover
    try:
        tree = HostTree("h", (RenderedFile("etc/a", HEAD + "a\n", 0o600),
                              RenderedFile("usr/bin/b", HEAD + "b\n", 0o755),
                              RenderedFile("etc/c", HEAD + "c\n")))
        apply(out, plan(out, tree))
        modes = {p: (out / "h" / p).stat().st_mode & 0o777 for p in ("etc/a", "usr/bin/b", "etc/c")}
        assert modes == {"etc/a": 0o600, "usr/bin/b": 0o755, "etc/c": 0o644}
        changed = HostTree("h", (RenderedFile("etc/a", HEAD + "a2\n", 0o640),) + tree.files[1:])
        apply(out, plan(out, changed))
        assert (out / "h/etc/a").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


def test_atomic_write_refuses_a_symlinked_folder_by_its_own_name(tmp_path: Path) -> None:
    """The folder is opened without following a link; the refusal names it as the caller gave it."""
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    with pytest.raises(WriteError, match=rf"^{re.escape(str(tmp_path))}/link is a symlink \(-> real\)"):
        atomic_write(tmp_path / "link" / "f", "x\n")
    assert os.listdir(tmp_path / "real") == []


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("old\n")
    with pytest.raises(TypeError):
        atomic_write(target, None, 0o644)  # type: ignore[arg-type]
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["f"]


def test_paths_outside_the_tree_are_refused(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match="refusing to write outside"):
        plan(tmp_path, HostTree("h", (RenderedFile("../evil", "x"),)))


def test_unified_diff_shows_one_changed_line(tmp_path: Path) -> None:
    out = tmp_path / "output"
    apply(out, plan(out, _tree(u="a\nb\nc\n")))
    text = unified_diff(plan(out, _tree(u="a\nB\nc\n")))
    assert text.splitlines() == [
        "--- a/output/h/u", "+++ b/output/h/u", "@@ -1,4 +1,4 @@", f" {HEAD.strip()}", " a", "-b", "+B", " c"]


def test_unified_diff_of_a_new_and_a_removed_file_names_dev_null(tmp_path: Path) -> None:
    """git's spelling for the missing side, which `git apply` and patch read: "/dev/null"."""
    out = tmp_path / "output"
    apply(out, plan(out, _tree(gone="x\n")))
    text = unified_diff([*plan(out, _tree(new="y\n")), *plan_orphans(out, [])])
    heads = [line for line in text.splitlines() if line.startswith(("--- ", "+++ "))]
    assert "--- /dev/null" in heads and "+++ b/output/h/new" in heads
    assert "--- a/output/h/gone" in heads and "+++ /dev/null" in heads


def test_each_stray_is_named_by_what_it_is(tmp_path: Path) -> None:
    """O002 says what the entry gen did not render is: each kind in its own words."""
    import stat

    from generator.emit.writer import Stray, plan_trees

    out = tmp_path / "output"
    apply(out, plan(out, _tree(a="1\n")))
    host = out / "h"
    (host / "f").write_text("x\n")
    (host / "d").mkdir()
    os.mkfifo(host / "p")
    os.mknod(host / "s", 0o600 | stat.S_IFSOCK)
    os.mknod(host / "c", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(host / "b", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    os.symlink("../t\x1b", host / "l")
    strays: list[Stray] = []
    plan_trees(out, [_tree(a="1\n")], strays)
    assert {s.path: s.kind for s in strays} == {
        "h/f": "a file", "h/d": "a folder", "h/p": "a FIFO", "h/s": "a socket",
        "h/c": "a character device", "h/b": "a block device", "h/l": "a symlink (-> ../t\\x1b)"}


def test_a_same_size_edit_with_the_old_mtime_is_still_seen(tmp_path: Path) -> None:
    """The comparison reads the bytes: neither size nor mtime is trusted to say 'unchanged'."""
    out = tmp_path / "output"
    tree = _tree(etc__a="value=1\n", etc__b="2\n")
    apply(out, plan(out, tree))
    target = out / "h/etc/a"
    before = target.stat()
    target.write_text(HEAD + "value=2\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    changes = plan(out, tree)
    assert _actions(changes) == [("h/.gen-managed", "unchanged"), ("h/etc/a", "updated"), ("h/etc/b", "unchanged")]
    updated = [c for c in changes if c.action is Action.UPDATED][0]
    assert updated.old == HEAD + "value=2\n" and updated.new == HEAD + "value=1\n"


def test_a_file_that_is_not_utf8_is_updated_not_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "output"
    tree = _tree(etc__a="1\n")
    apply(out, plan(out, tree))
    (out / "h/etc/a").write_bytes(HEAD.encode() + b"\xff\n")
    assert ("h/etc/a", "updated") in _actions(plan(out, tree))


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_plan_trees_is_each_tree_planned_in_turn_with_few_folders_open(tmp_path: Path) -> None:
    """One output/ for a whole fleet: the same changes as a plan per tree, in tree order, and
    each host's folders closed before the next host's, so a fleet never runs out of fds."""
    from generator.emit import safe_fs
    from generator.emit.writer import plan_trees

    out = tmp_path / "output"
    trees = [HostTree(f"h{i}", (RenderedFile("etc/a/b/c", HEAD + str(i)), RenderedFile("x", HEAD)))
             for i in range(5)]
    apply(out, plan_trees(out, trees[:3]))
    (out / "h1/etc/a/b/c").write_text(HEAD + "edited")
    expected = [c for t in trees for c in plan(out, t)]
    assert _actions(expected)[:5] == [("h0/.gen-managed", "unchanged"), ("h0/etc/a/b/c", "unchanged"),
                                      ("h0/x", "unchanged"), ("h1/.gen-managed", "unchanged"),
                                      ("h1/etc/a/b/c", "updated")]
    assert plan_trees(out, trees) == expected
    peak = []
    real_close = safe_fs.OutputTree.forget_below

    def forget_below(self: safe_fs.OutputTree, top: str) -> None:
        peak.append(_open_fds())
        real_close(self, top)
        peak.append(_open_fds())

    before = _open_fds()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(safe_fs.OutputTree, "forget_below", forget_below)
        plan_trees(out, trees)
    assert _open_fds() == before
    # after each host only output/ and its parent stay open; while one is planned, also its
    # folders h, etc, etc/a and etc/a/b; h3 and h4 are not in output/ yet
    folders = 4
    assert peak[1::2] == [before + 2] * 5
    assert peak[0::2] == [before + 2 + folders] * 3 + [before + 2] * 2


def test_the_managed_list_is_read_once_and_compared_as_read(tmp_path: Path) -> None:
    """plan parses .gen-managed and compares those same bytes: an edited list is an update."""
    out = tmp_path / "output"
    apply(out, plan(out, _tree(etc__a="1\n")))
    listed = out / "h" / MANAGED_LIST
    listed.write_text(listed.read_text() + "etc/gone\n")
    (out / "h/etc/gone").write_text("no header\n")  # gen's by the list: planned for removal
    assert _actions(plan(out, _tree(etc__a="1\n"))) == [
        ("h/.gen-managed", "updated"), ("h/etc/a", "unchanged"), ("h/etc/gone", "removed")]


def test_trees_and_changes_are_slotted_and_survive_pickling() -> None:
    """A fleet holds 10,000 of each: no per-object __dict__ (less memory, fewer objects for
    the collector), still frozen, equal and hashable after a trip to a worker and back."""
    import dataclasses
    import pickle

    tree = HostTree("h", (RenderedFile("etc/a", HEAD, 0o600),))
    change = plan(Path("/nonexistent-output"), tree)[0]
    for value, field in ((tree, "host"), (tree.files[0], "mode"), (change, "mode")):
        assert not hasattr(value, "__dict__")
        assert pickle.loads(pickle.dumps(value)) == value
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, 0)
    assert hash(pickle.loads(pickle.dumps(change))) == hash(change)
