"""A playbook that cannot run stale (issue 23 item 2): output/ digests recorded, checked first.

``gen ansible`` records each host's output/ tree digest in the inventory; the playbook's
first task recomputes them on the controller (ansible/gen-digest.py, a copy of
generator/emit/ansible/digest.py) and stops before any host is reached. Here the real
ansible-playbook runs against an inventory whose hosts all point at 127.0.0.1:1, where
nothing listens: a run that got past the check would be UNREACHABLE there, so "stale,
nothing reached" is told apart from "reached".
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible.parsing.dataloader import DataLoader
from click.testing import CliRunner, Result

from generator.cli.main import main
from generator.emit.ansible.digest import ABSENT, stale_hosts, tree_digest

BIN = Path(sys.executable).parent
UNIT = "etc/systemd/system/sglang-qwen.service"


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(autouse=True)
def _private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_RENDER_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def repo(repo_copy: Path) -> Path:
    for args in (("render", "--all"), ("ansible",)):
        assert _gen(*args, "--root", str(repo_copy)).exit_code == 0
    return repo_copy


def test_tree_digest_sees_content_names_links_and_nothing_else(tmp_path: Path) -> None:
    top = tmp_path / "t"
    (top / "a").mkdir(parents=True)
    (top / "a" / "f").write_text("x")
    first = tree_digest(str(top))
    assert first.startswith("sha256:") and tree_digest(str(top)) == first
    os.utime(top / "a" / "f", (0, 0))
    (top / "a" / "f").chmod(0o600)
    assert tree_digest(str(top)) == first  # times and modes are not content
    (top / "a" / "f").write_text("y")
    changed = tree_digest(str(top))
    assert changed != first
    (top / "a" / "g").write_text("")
    added = tree_digest(str(top))
    assert added != changed
    (top / "a" / "g").unlink()
    (top / "a" / "g").symlink_to("/etc/passwd")
    assert tree_digest(str(top)) not in (changed, added)  # a link is named, never followed
    (top / "a" / "g").unlink()
    assert tree_digest(str(top)) == changed
    (top / "a" / "f").rename(top / "a" / "h")
    assert tree_digest(str(top)) != changed  # the path is part of it
    assert tree_digest(str(tmp_path / "none")) == ABSENT


def test_a_name_with_a_line_break_is_one_entry_never_two(tmp_path: Path) -> None:
    """One file named "f\\n<sha256 of g's bytes> g" holding f's bytes once digested as the two
    files f and g: a tree could hide its files behind another tree's digest."""
    two, one = tmp_path / "two", tmp_path / "one"
    two.mkdir()
    one.mkdir()
    (two / "f").write_text("x")
    (two / "g").write_text("y")
    (one / ("f\n" + hashlib.sha256(b"y").hexdigest() + " g")).write_text("x")
    assert tree_digest(str(one)) != tree_digest(str(two))
    (one / os.fsdecode(b"h\xff")).write_bytes(b"")  # a name that is no UTF-8 is digested, not an error
    assert tree_digest(str(one)).startswith("sha256:")


def test_gen_ansible_records_each_hosts_tree_digest(repo: Path) -> None:
    inv = DataLoader().load((repo / "ansible/inventory.yml").read_text())
    hosts = inv["all"]["children"]["sglang_hosts"]["hosts"]
    assert set(hosts) == {p.name for p in (repo / "output").iterdir()}
    for name, hostvars in hosts.items():
        assert hostvars["gen_digest"] == tree_digest(str(repo / "output" / name)), name
    assert stale_hosts(str(repo / "output"), {n: h["gen_digest"] for n, h in hosts.items()}) == []
    copy = (repo / "ansible/gen-digest.py").read_text()
    assert copy.endswith((Path(__file__).parents[1] / "generator/emit/ansible/digest.py").read_text())


def _playbook(repo: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"LC_ALL": "C.UTF-8", "ANSIBLE_HOME": str(tmp_path / "ah"),
                        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ah/tmp"), "ANSIBLE_NOCOLOR": "1",
                        "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_RETRY_FILES_ENABLED": "False"}
    # Every host at a port nothing listens on: reaching any host would be UNREACHABLE.
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(repo / "ansible/inventory.yml"),
                           str(repo / "ansible/site.yml"), "-e", "ansible_host=127.0.0.1", "-e", "ansible_port=1",
                           *args], capture_output=True, text=True, env=env, check=False, timeout=300)


@pytest.mark.parametrize("change", ["edit", "add", "remove"])
def test_a_stale_ansible_folder_stops_the_playbook_before_any_host(repo: Path, tmp_path: Path, change: str) -> None:
    current = _playbook(repo, tmp_path)
    assert "UNREACHABLE" in current.stdout, current.stdout  # the check passed: hosts were tried
    tree = repo / "output/llm-two"
    if change == "edit":  # `gen render` after an edit, `gen ansible` forgotten
        (tree / UNIT).write_text((tree / UNIT).read_text().replace("--port 30000", "--port 30001"))
    elif change == "add":  # a new service rendered
        (tree / "etc/sglang/new.env").write_text("X=1\n")
    else:
        (tree / "etc/sglang/qwen.env").unlink()
    # Whatever the run asks for: a preview, only some tags, only another host.
    variants = ((), ("--check", "--diff"), ("--tags", "restart"), ("--limit", "gpu-a")) if change == "edit" else ((),)
    for args in variants:
        stale = _playbook(repo, tmp_path, *args)
        assert stale.returncode != 0, stale.stdout
        out = stale.stdout
        assert "ansible/ is stale: output/ of llm-two changed since `gen ansible` wrote this playbook; " \
               "nothing was touched. Run `gen ansible`" in out, out
        assert "UNREACHABLE" not in out and "PLAY [Prepare" not in out, out
    if change == "add":  # a file gen does not render is O002: render writes nothing until it is gone
        refused = _gen("render", "--all", "--root", str(repo))
        assert refused.exit_code == 1 and "error[O002]" in refused.stderr, refused.output
        (tree / "etc/sglang/new.env").unlink()
    # `gen render --all` puts output/ back and rewrites ansible/ from it.
    assert _gen("render", "--all", "--root", str(repo)).exit_code == 0
    again = _playbook(repo, tmp_path)
    assert "ansible/ is stale" not in again.stdout and "UNREACHABLE" in again.stdout, again.stdout
