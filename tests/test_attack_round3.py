"""The fresh attack after issue 22's fixes: classes no finding named, each planted by a pull request.

* Every file gen reads from the repository is read as a regular file, bounded: the generated
  docs and schemas that `gen check` compares (a link to /dev/zero hung it), the catalog a
  snapshot compares with, the hosts shell completion reads (with gen's bounded loader: no
  alias bomb, no /dev/zero).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"GEN_RENDER_CACHE": "off"})


@pytest.mark.parametrize("rel", ["docs/manifests.md", "schemas/host.schema.json", "schemas/model.schema.json"])
@pytest.mark.parametrize("target", ["/dev/zero", "/proc/self/environ"])
def test_a_generated_file_linked_elsewhere_is_d001_not_a_hang(repo_copy: Path, rel: str, target: str) -> None:
    root = Path(__file__).resolve().parent.parent
    for folder in ("docs", "schemas"):
        shutil.copytree(root / folder, repo_copy / folder)
    path = repo_copy / rel
    path.unlink()
    os.symlink(target, path)
    start = time.monotonic()
    result = _gen("check", "--root", str(repo_copy))
    assert time.monotonic() - start < 60
    assert result.exit_code == 1 and f"{rel}: error[D001]: {rel} is a symbolic link" in result.stderr, result.stderr


def test_the_catalog_a_snapshot_compares_with_is_never_a_links_target(tmp_path: Path) -> None:
    from generator.cli.sglang import _same_capture

    link = tmp_path / "0.5.9.json"
    os.symlink("/dev/zero", link)
    assert _same_capture(link, {"format": 1}) is False  # at once, not reading forever


@pytest.mark.parametrize("text", [None, "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    + "services: [{name: x}]\n"])
def test_shell_completion_reads_hosts_with_gens_bounded_loader(repo_copy: Path, text: str | None) -> None:
    from click.shell_completion import ShellComplete

    from generator.cli.main import main as cli

    bomb = repo_copy / "hosts" / "bomb.yaml"
    if text is None:
        os.symlink("/dev/zero", bomb)
    else:
        bomb.write_text(text)  # a billion laughs: 9**9 values once expanded
    start = time.monotonic()
    words = ShellComplete(cli, {}, "gen", "_GEN_COMPLETE").get_completions(
        ["status", "--root", str(repo_copy), "--service"], "")
    assert time.monotonic() - start < 30
    assert {w.value for w in words} >= {"qwen"}


@pytest.mark.parametrize("entry, words", [
    ("filter_plugins/pwn.py", "loads plugins"),
    ("group_vars/all.yml", "group_vars/"),
    ("host_vars/llm-two.yml", "host_vars/"),
    ("ansible.cfg", "ansible.cfg"),
    ("library/x.py", "library/"),
    ("notes.txt", "gen did not write it"),
])
def test_ansible_holds_exactly_what_gen_ansible_writes(repo_copy: Path, entry: str, words: str) -> None:
    """A pull request's ansible/filter_plugins/x.py is Python run on the operator's controller
    by the playbook gen wrote (Ansible loads plugins beside the playbook; group_vars/ beside the
    inventory sets ansible_ssh_common_args for every host)."""
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 0
    assert _gen("ansible", "--root", str(repo_copy)).exit_code == 0
    path = repo_copy / "ansible" / entry
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n")
    before = sorted(p.read_bytes() for p in (repo_copy / "ansible").rglob("*") if p.is_file())
    top = entry.split("/")[0]
    for args in (("check",), ("ansible",)):
        result = _gen(*args, "--root", str(repo_copy))
        assert result.exit_code == 1, (args, result.output)
        assert f"ansible/{top}: error[O004]" in result.stderr and words in result.stderr, result.stderr
    assert sorted(p.read_bytes() for p in (repo_copy / "ansible").rglob("*") if p.is_file()) == before


def test_a_folders_files_are_bounded_together(repo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 host files of 256 KiB each were 2.5 GB held at once; now the folder has a total."""
    from generator.load import files

    monkeypatch.setattr(files, "MAX_FOLDER_BYTES", 3000)
    for i in range(3):
        (repo_copy / "hosts" / f"pad-{i}.yaml").write_text("# " + "x" * 2000 + "\n")
    found = {sf.display: sf.error.code if sf.error else None for sf in files.source_files(repo_copy, "hosts")}
    assert list(found.values()).count("Y010") >= 3 and found["hosts/gpu-a.yaml"] is None
