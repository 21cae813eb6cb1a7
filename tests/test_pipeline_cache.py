"""The render cache (generator/pipeline/cache.py) is untrusted storage.

Whatever is in the cache folder, the output and ``gen check`` must equal an uncached run:
a tampered entry (any field of any entry), a planted pickle or JSON "with code", a
symlinked entry, or a folder that is not the user's own or that others can write.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import shutil
import stat
from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.pipeline import cache as render_cache
from generator.pipeline.fleet import RenderResult, render_fleet


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Entries under GEN_CACHE's render/ (so both folders are checked); the session's folder is unset."""
    top = tmp_path / "cache"
    monkeypatch.delenv("GEN_RENDER_CACHE", raising=False)
    monkeypatch.setenv("GEN_CACHE", str(top))
    return top


def _entries(top: Path) -> list[Path]:
    return sorted((top / "render").glob("*/*.json"))


def _read(path: Path) -> dict[str, Any]:
    """An entry as {"header": ..., "payload": ..., "text": ...}."""
    head, body, text = path.read_bytes().split(b"\n", 2)
    return {"header": json.loads(head), "payload": json.loads(body), "text": text.decode()}


def _write(path: Path, entry: dict[str, Any]) -> None:
    """Write an entry back the way the cache serializes it, digest untouched."""
    path.write_bytes(json.dumps(entry["header"]).encode() + b"\n"
                     + json.dumps(entry["payload"], ensure_ascii=True, separators=(",", ":")).encode()
                     + b"\n" + entry["text"].encode())


def _resign(path: Path, payload: Any, text: str = "") -> None:
    """Write ``payload`` with a matching digest, as someone who can write the folder could."""
    path.write_bytes(render_cache.encode(path.stem, payload, text))


def _forged(path: Path) -> tuple[Any, str]:
    """An entry's payload and text with a line added to its first file (lengths kept in step)."""
    entry = _read(path)
    payload, text = entry["payload"], entry["text"]
    if isinstance(payload, dict) and payload.get("tree"):
        payload["tree"]["files"][0][1] += len("ExecStartPre=/bin/id\n")
        text = "ExecStartPre=/bin/id\n" + text
    return payload, text


def _same(a: RenderResult, b: RenderResult) -> None:
    assert [str(d) for d in a.diagnostics] == [str(d) for d in b.diagnostics]
    assert a.trees == b.trees
    assert a.changes == b.changes


def _check(root: Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["check", "--root", str(root)])
    return r.exit_code, r.stdout, r.stderr


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every leaf path in a JSON value (lists by index, objects by key)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(data, list) and data:
        for i, value in enumerate(data):
            yield from _leaves(value, path + (i,))
    else:
        yield path


def _shape(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """A leaf path with list indexes beyond the first level of a file/diagnostic generalized."""
    return tuple("#" if isinstance(p, int) and i < len(path) - 1 else p for i, p in enumerate(path))


def _tampered(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "\nExecStartPre=/bin/id"
    if value is None:
        return "forged"
    return None  # an empty list or object


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        data = data[p]
    data[path[-1]] = value


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        data = data[p]
    return data


def test_entries_are_json_with_key_and_digest(repo_copy: Path, cache: Path) -> None:
    render_fleet(repo_copy, None)
    entries = _entries(cache)
    assert entries, "the run must have stored entries"
    for path in entries:
        entry = _read(path)
        assert set(entry["header"]) == {"format", "key", "digest"}
        assert entry["header"]["key"] == path.stem
        before = path.read_bytes()
        _write(path, entry)
        assert path.read_bytes() == before  # the tests below rewrite entries byte for byte
    assert not list((cache / "render").rglob("*.pickle"))
    mode = (cache / "render").stat().st_mode & 0o777
    assert mode == 0o700


def test_tampering_with_every_field_of_every_entry_changes_nothing(repo_copy: Path, cache: Path) -> None:
    """Each field of every entry, changed in every entry at once: output and check equal uncached."""
    uncached = render_fleet(repo_copy, None, use_cache=False)
    assert CliRunner().invoke(main, ["render", "--all", "--root", str(repo_copy)]).exit_code == 0
    expected_check = _check(repo_copy)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    assert expected_check[0] == 0
    pristine = {p: p.read_bytes() for p in _entries(cache)}
    documents = {p: _read(p) for p in pristine}
    shapes: dict[tuple[Any, ...], list[tuple[Path, tuple[Any, ...]]]] = {}
    for path, doc in documents.items():
        for leaf in _leaves(doc):
            shapes.setdefault(_shape(leaf), []).append((path, leaf))
    assert len(shapes) >= 15, sorted(shapes, key=str)  # envelope, outcome, diagnostics, files
    for shape, places in sorted(shapes.items(), key=lambda kv: str(kv[0])):
        for path, data in pristine.items():
            path.write_bytes(data)
        for path, leaf in places:
            doc = copy.deepcopy(documents[path])
            _set(doc, leaf, _tampered(_get(doc, leaf)))
            _write(path, doc)
        _same(render_fleet(repo_copy, None), uncached)
        for path, leaf in places:  # the run above may have replaced them: tamper again
            doc = copy.deepcopy(documents[path])
            _set(doc, leaf, _tampered(_get(doc, leaf)))
            _write(path, doc)
        assert _check(repo_copy) == expected_check, shape


def test_a_forged_entry_with_a_matching_digest_is_still_checked_for_shape(repo_copy: Path, cache: Path) -> None:
    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    for path in _entries(cache):
        entry = _read(path)
        payload = entry["payload"]
        if isinstance(payload, dict) and payload.get("tree"):
            payload["tree"]["files"][0][0] = "../../etc/cron.d/evil"  # outside the host tree
            payload["tree"]["files"][1][2] = 0o104755  # not a permission mode
        elif isinstance(payload, dict):
            payload["surprise"] = 1
        _resign(path, payload, entry["text"])
    _same(render_fleet(repo_copy, None), uncached)


def test_planted_pickle_and_json_never_run(repo_copy: Path, cache: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    bomb = pickle.dumps(Boom())
    for path in _entries(cache):
        path.with_suffix(".pickle").write_bytes(bomb)  # where the old cache looked
        path.write_bytes(bomb)
    _same(render_fleet(repo_copy, None), uncached)
    for path in _entries(cache):
        _resign(path, {"__reduce__": ["os.system", [f"touch {marker}"]], "py/object": "os.system",
                       "!!python/object/apply:os.system": [f"touch {marker}"]})
    _same(render_fleet(repo_copy, None), uncached)
    assert not marker.exists()


def test_symlinked_entry_is_a_miss(repo_copy: Path, cache: Path, tmp_path: Path) -> None:
    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for i, path in enumerate(_entries(cache)):
        target = elsewhere / f"{i}.json"
        target.write_bytes(render_cache.encode(path.stem, *_forged(path)))
        path.unlink()
        path.symlink_to(target)
    _same(render_fleet(repo_copy, None), uncached)


@pytest.mark.parametrize("how", ["writable", "link"])
def test_an_entry_folder_others_can_write_or_a_linked_one_is_a_miss(repo_copy: Path, cache: Path,
                                                                     tmp_path: Path, how: str) -> None:
    """Forged entries in an xx/ folder that is group-writable, or a link to elsewhere, are not read."""
    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    for path in _entries(cache):
        _resign(path, *_forged(path))
    render_cache._SAFE_SUBFOLDERS.clear()  # this process read them while they were safe
    for sub in sorted({p.parent for p in _entries(cache)}):
        if how == "writable":
            sub.chmod(0o770)
        else:
            moved = tmp_path / "moved" / sub.name
            moved.parent.mkdir(exist_ok=True)
            sub.rename(moved)
            sub.symlink_to(moved)
    _same(render_fleet(repo_copy, None), uncached)
    render_cache._SAFE_SUBFOLDERS.clear()


def _refused(repo: Path, top: Path) -> None:
    uncached = render_fleet(repo, None, use_cache=False)
    result = render_fleet(repo, None)
    _same(result, uncached)
    assert len(result.notices) == 1 and "render cache not used" in result.notices[0]
    assert not _entries(top) or all(p.stat().st_mtime_ns for p in _entries(top))
    r = CliRunner().invoke(main, ["check", "--root", str(repo)])
    warnings = [ln for ln in r.stderr.splitlines() if "render cache not used" in ln]
    assert len(warnings) == 1, r.stderr


@pytest.mark.parametrize("which", ["top", "render"])
def test_group_or_world_writable_folder_is_not_used(repo_copy: Path, cache: Path, which: str) -> None:
    render_fleet(repo_copy, None)
    before = {p: p.read_bytes() for p in _entries(cache)}
    folder = cache if which == "top" else cache / "render"
    folder.chmod(0o777 if which == "top" else 0o720)
    _refused(repo_copy, cache)
    assert {p: p.read_bytes() for p in _entries(cache)} == before  # nothing stored either


def test_folder_of_another_user_is_not_used(repo_copy: Path, cache: Path) -> None:
    if os.getuid() != 0:
        pytest.fail("this test creates a folder owned by another user and needs root")
    (cache / "render").mkdir(parents=True)
    os.chown(cache, 65534, 65534)
    _refused(repo_copy, cache)
    assert not _entries(cache)


def test_entry_owned_by_another_user_is_a_miss(repo_copy: Path, cache: Path) -> None:
    if os.getuid() != 0:
        pytest.fail("this test chowns an entry and needs root")
    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    for path in _entries(cache):
        _resign(path, *_forged(path))
        os.chown(path, 65534, 65534)
    _same(render_fleet(repo_copy, None), uncached)


def test_render_cache_variable_folder_is_checked_too(repo_copy: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "entries"
    monkeypatch.setenv("GEN_RENDER_CACHE", str(folder))
    render_fleet(repo_copy, None)
    assert list(folder.glob("*/*.json")) and folder.stat().st_mode & 0o777 == 0o700
    folder.chmod(0o770)
    result = render_fleet(repo_copy, None)
    assert len(result.notices) == 1 and "writable by group or others" in result.notices[0]


def test_cache_off(repo_copy: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GEN_RENDER_CACHE", raising=False)
    monkeypatch.setenv("GEN_CACHE", "off")
    assert render_cache.open_cache().path is None
    result = render_fleet(repo_copy, None)
    assert result.ok and not result.notices
    shutil.rmtree(tmp_path / "nothing", ignore_errors=True)


def test_a_warm_run_is_answered_from_the_cache(repo_copy: Path, cache: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The control for the tests above: untouched entries are used, so a refused entry is a real miss."""
    from generator.pipeline import host

    calls: list[str] = []
    real = host._outcome  # one per host file planned and rendered (process_group's members)

    def counted(sf: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(sf.stem)
        return real(sf, *args, **kwargs)

    monkeypatch.setattr(host, "_outcome", counted)
    cold = render_fleet(repo_copy, None, jobs=1)
    assert sorted(calls) == ["gpu-a", "gpu-b", "llm-two", "llm-two-full"]
    calls.clear()
    _same(render_fleet(repo_copy, None, jobs=1), cold)
    assert calls == []
    first = _entries(cache)[0]
    entry = _read(first)
    entry["header"]["digest"] = "0" * 64
    _write(first, entry)
    _same(render_fleet(repo_copy, None, jobs=1), cold)
    assert len(calls) <= 1


def test_an_entry_moved_to_another_hosts_key_is_a_miss(repo_copy: Path, cache: Path) -> None:
    """Entries name their host file: one host's result cannot answer for another, signed or not."""
    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    hosts = [p for p in _entries(cache) if isinstance(_read(p)["payload"], dict)
             and "stem" in _read(p)["payload"]]
    assert len(hosts) == 4
    entries = [_read(p) for p in hosts]
    for path, entry in zip(hosts, entries[1:] + entries[:1]):
        _resign(path, entry["payload"], entry["text"])
    _same(render_fleet(repo_copy, None), uncached)


def test_library_versions_are_what_importlib_metadata_says() -> None:
    """The key's library versions come from a listing of the dist-info folders (cheap);
    importlib.metadata is the reference they must equal."""
    assert render_cache.library_versions() == render_cache._metadata_versions()
    assert all(v != "absent" for v in render_cache.library_versions().values())


def test_an_egg_info_on_the_path_is_left_to_importlib_metadata(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Jinja2.egg-info").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    asked: list[bool] = []
    monkeypatch.setattr(render_cache, "_metadata_versions", lambda: asked.append(True) or {"jinja2": "egg"})
    assert render_cache.library_versions() == {"jinja2": "egg"} and asked


def test_a_warm_run_loads_no_yaml_schema_templating_or_pool(repo_copy: Path, cache: Path) -> None:
    """A fresh process whose `gen render --all` the cache answers entirely: output current, and
    cerberus, jinja2, the planners, the process pool, importlib.metadata, the fsync threads
    (concurrent.futures, logging), traceback and ruamel.yaml (no file is parsed) never imported.
    (What a cold run needs is imported where the work is done; this keeps it that way.)"""
    import os
    import subprocess
    import sys

    probe = ("import sys\nfrom generator.cli.main import main\ntry:\n    main(sys.argv[1:], prog_name='gen')\n"
             "finally:\n    print(sorted(m for m in ('cerberus', 'jinja2', 'multiprocessing', 'concurrent.futures.process',"
             " 'importlib.metadata', 'generator.load.schema', 'generator.load.sources', 'generator.pipeline.host',"
             " 'generator.emit.render', 'concurrent.futures', 'logging', 'traceback', 'ruamel.yaml')"
             " if m in sys.modules), file=sys.stderr)\n")
    env = {**os.environ, "GEN_CACHE": str(cache)}
    command = [sys.executable, "-c", probe, "render", "--all", "--root", str(repo_copy)]
    cold = subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert cold.returncode == 0, cold.stderr
    assert "'jinja2'" in cold.stderr.splitlines()[-1]  # the control: a cold run does load them
    warm = subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert warm.returncode == 0, warm.stderr
    assert warm.stderr.splitlines()[-1] == "[]", warm.stderr
    assert "0 created, 0 updated" in warm.stdout


def _reference_hash(digest: Any, folder: Path, label: str) -> None:
    """The key's tree walk as pathlib spells it (sorted rglob): what _hash_tree must equal."""
    from generator.load.files import read_file

    if folder.is_symlink() or not folder.is_dir():
        digest.update(f"{label}: {'a symlink' if folder.is_symlink() else 'none'}\0".encode())
        return
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        name = f"{label}/{path.relative_to(folder)}".encode("utf-8", "surrogateescape")
        if path.is_dir() and not path.is_symlink():
            digest.update(name + b"/\0")
            continue
        data = None if path.is_symlink() else read_file(path, str(path), limit=None)[0]
        data = data if data is not None else b"\0not a regular file"
        digest.update(name + f"\0{len(data)}\0".encode())
        digest.update(data)


def test_the_tree_hash_is_the_sorted_walk_of_every_entry(tmp_path: Path) -> None:
    """Folders right after their parent in name order ("a", "a/x", "a-b"), dotfiles, links
    (to a folder: named, not walked; dangling), a FIFO, a name that is not UTF-8, and
    __pycache__ left out: the same digest as the plain sorted walk, and every change counts."""
    import hashlib

    top = tmp_path / "tree"
    for folder in ("a", "a-b", "a/deep/er", "sub/__pycache__"):
        (top / folder).mkdir(parents=True)
    for name, data in (("a/x", b"1"), ("a-b/y", b"2"), (".hidden", b""), ("a/deep/er/z", b"3"),
                       ("sub/__pycache__/m.pyc", b"4"), ("top.yaml", b"k: v\n")):
        (top / name).write_bytes(data)
    (top / "link").symlink_to(top / "a")
    (top / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(top / "fifo")
    (top / os.fsdecode(b"n\xffm")).write_bytes(b"\xff")

    def both(folder: Path) -> tuple[str, str]:
        ours, reference = hashlib.sha256(), hashlib.sha256()
        render_cache._hash_tree(ours, folder, "t")
        _reference_hash(reference, folder, "t")
        return ours.hexdigest(), reference.hexdigest()

    first = both(top)
    assert first[0] == first[1]
    for folder in (top / "link", tmp_path / "missing", top / "sub" / "__pycache__"):
        assert len(set(both(folder))) == 1
    (top / "sub/__pycache__/m.pyc").write_bytes(b"5")
    assert both(top) == first  # __pycache__ is never part of the key
    (top / "a/deep/er/z").write_bytes(b"4")
    assert both(top)[0] == both(top)[1] != first[0]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_entry_that_is_a_fifo_or_a_device_is_a_miss_without_waiting(repo_copy: Path, cache: Path,
                                                                        kind: str) -> None:
    """Opening a FIFO for reading waits for a writer: the open must not (O_NONBLOCK)."""
    if os.getuid() != 0 and kind == "device":
        pytest.fail("this test makes a device node and needs root")
    import threading

    render_fleet(repo_copy, None)
    uncached = render_fleet(repo_copy, None, use_cache=False)
    entries = _entries(cache)
    for path in entries:
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path, 0o600)
        else:
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    done: list[RenderResult] = []
    worker = threading.Thread(target=lambda: done.append(render_fleet(repo_copy, None)), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # stuck in open(): give each FIFO a writer so the thread ends, then fail
        for _ in range(100):
            for path in entries:
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass  # no reader waits on this one now
            worker.join(0.1)
        pytest.fail(f"reading a {kind} cache entry waited")
    _same(done[0], uncached)
