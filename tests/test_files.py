"""Unit tests for generator.load.files: only regular files are read, never a link, never blocking.

Each case is an attack from issue 10 (items 5 and 10) or one like it; the ones that used to hang
(a FIFO) or exhaust memory (/dev/zero) also run through the real CLI with a time bound, which
is what proves the hang is gone (the bound is generous: 10 s against ~0.5 s measured).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.load.files import MAX_FILE_BYTES, read_file, source_files

MODEL = "models/qwen3.5-122b-a10b.yaml"


def _errors(root: Path, folder: str) -> list[str]:
    return [str(s.error) for s in source_files(root, folder) if s.error is not None]


def test_regular_files_are_read_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "hosts").mkdir()
    for name in ("b.yaml", "a.yml", ".hidden.yaml", "notes.txt"):
        (tmp_path / "hosts" / name).write_text(f"name: {name}\n")
    got = [(s.display, s.data) for s in source_files(tmp_path, "hosts")]
    assert got == [("hosts/a.yml", b"name: a.yml\n"), ("hosts/b.yaml", b"name: b.yaml\n")]


def test_a_missing_folder_is_empty(tmp_path: Path) -> None:
    assert source_files(tmp_path, "models") == []


@pytest.mark.parametrize("target", ["/dev/zero", "/etc/hostname", "elsewhere.yaml"])
def test_a_symlink_is_an_error_naming_it_and_its_target(tmp_path: Path, target: str) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "elsewhere.yaml.txt").write_text("name: x\n")
    os.symlink(target, tmp_path / "models" / "m.yaml")
    assert _errors(tmp_path, "models") == [
        f"models/m.yaml: error[Y009]: is a symbolic link (to {target!r}): gen reads only regular "
        "files here; copy the file instead of linking it"]


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    os.mkfifo(tmp_path / "models" / "pipe.yaml")
    started = time.monotonic()
    assert _errors(tmp_path, "models") == ["models/pipe.yaml: error[Y009]: is a FIFO (named pipe), not a regular file"]
    assert time.monotonic() - started < 2  # opening a FIFO for reading used to wait for a writer


def test_a_socket_and_a_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "hosts").mkdir()
    (tmp_path / "hosts" / "x.yaml").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "hosts" / "s.yaml"))
        assert _errors(tmp_path, "hosts") == [
            "hosts/s.yaml: error[Y009]: is a socket, not a regular file",
            "hosts/x.yaml: error[Y009]: is a folder, not a regular file",
        ]
    finally:
        sock.close()


def test_a_linked_folder_is_refused(tmp_path: Path) -> None:
    os.symlink("/etc", tmp_path / "models")
    assert _errors(tmp_path, "models") == [
        "models/: error[Y009]: models/ is a symbolic link: gen reads only a real folder here"]


def test_yml_and_yaml_of_one_name_are_both_errors(tmp_path: Path) -> None:
    (tmp_path / "hosts").mkdir()
    (tmp_path / "hosts" / "h.yaml").write_text("name: h\n")
    (tmp_path / "hosts" / "h.yml").write_text("name: h\n")
    message = "hosts/h.yaml and hosts/h.yml both define 'h': one would shadow the other; keep one of them"
    assert _errors(tmp_path, "hosts") == [f"hosts/h.yaml: error[R009]: {message}",
                                          f"hosts/h.yml: error[R009]: {message}"]


def test_a_file_over_the_size_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    data, error = read_file(path, "models/big.yaml")
    assert data is None
    assert str(error) == (f"models/big.yaml: error[Y010]: is {MAX_FILE_BYTES + 1} bytes; at most "
                          f"{MAX_FILE_BYTES} are read (split it, or remove what is not needed)")
    path.write_bytes(b"#" * MAX_FILE_BYTES)
    assert read_file(path, "models/big.yaml")[0] == b"#" * MAX_FILE_BYTES


def test_an_unreadable_file_reports_the_real_reason_as_a_non_root_user(tmp_path: Path) -> None:
    """Tests run as root, who reads mode 000 files; the real reason shows as another user."""
    base = Path(tempfile.mkdtemp(prefix="gen-unreadable-", dir="/tmp"))  # tmp_path is 0700: root's
    folder = base / "hosts"
    folder.mkdir()
    (folder / "h.yaml").write_text("name: h\n")
    os.chmod(folder / "h.yaml", 0)
    os.chmod(base, 0o755)
    tmp_path = base
    code = ("import sys; from pathlib import Path; from generator.load.files import source_files; "
            "print([str(s.error) for s in source_files(Path(sys.argv[1]), 'hosts')])")
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                          "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert out.stdout.strip() == "['hosts/h.yaml: error[Y008]: cannot read file: Permission denied']", out.stderr
    # The whole CLI as that user: the reason, exit 1 (it was "U+0000 is not allowed", or exit 4).
    for part in ("models", "templates", "catalogs"):
        shutil.copytree(Path(__file__).resolve().parent.parent / part, base / part)
    subprocess.run(["chmod", "-R", "a+rX", str(base / "models"), str(base / "templates"), str(base / "catalogs")], check=True)
    gen = Path(sys.executable).with_name("gen")
    cli = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(gen), "check",
                          "--root", str(base)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "GEN_CACHE": "off"})
    shutil.rmtree(base)
    assert cli.returncode == 1, cli.stderr
    assert "hosts/h.yaml: error[Y008]: cannot read file: Permission denied" in cli.stderr.splitlines(), cli.stderr
    assert "U+0000" not in cli.stderr


@pytest.mark.parametrize("make", ["fifo", "devzero", "folder"])
def test_special_files_end_in_findings_through_the_cli(repo_copy: Path, make: str) -> None:
    target = repo_copy / "models" / "extra.yaml"
    {"fifo": lambda: os.mkfifo(target), "devzero": lambda: os.symlink("/dev/zero", target),
     "folder": lambda: target.mkdir()}[make]()
    started = time.monotonic()
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.stderr
    assert "models/extra.yaml: error[Y009]: " in result.stderr
    assert elapsed < 10, elapsed  # the FIFO hung forever and /dev/zero ran out of memory before


def test_a_special_file_is_reported_after_a_clean_run(repo_copy: Path) -> None:
    """A FIFO that appears after a clean check is found by the next one."""
    assert CliRunner().invoke(main, ["check", "--root", str(repo_copy)]).exit_code == 0
    os.mkfifo(repo_copy / "models" / "late.yaml")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1 and "models/late.yaml: error[Y009]" in result.stderr, result.stderr


def test_file_names_that_are_not_printable_cannot_forge_diagnostics(repo_copy: Path) -> None:
    """A newline in a file name printed a line of its own (a fake finding in CI logs); a name
    that is not UTF-8 crashed the output (exit 4)."""
    (repo_copy / "hosts" / "evil\nx.yaml:1:1: error[X999]: forged.yaml").write_text("name: x\n")
    os.close(os.open(os.fsencode(repo_copy / "models") + b"/\xff.yaml", os.O_CREAT | os.O_WRONLY))
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.splitlines()
    assert not any(line.startswith("x.yaml") for line in lines), lines
    assert "hosts/evil\\nx.yaml:1:1: error[X999]: forged.yaml: error[Y015]: the file name is not printable " \
           "text (control characters or bytes that are not UTF-8): rename it" in lines
    assert any(line.startswith("models/\\udcff.yaml: error[Y015]") for line in lines), lines


def test_a_folder_with_too_many_files_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("generator.load.files.MAX_FILES", 3)
    (tmp_path / "hosts").mkdir()
    for i in range(4):
        (tmp_path / "hosts" / f"h{i}.yaml").write_text("name: x\n")
    assert _errors(tmp_path, "hosts") == ["hosts/: error[Y010]: hosts/ holds 4 YAML files; at most 3 are read"]


def test_without_a_limit_the_whole_file_is_read(tmp_path: Path) -> None:
    """``limit=None`` (no cap) reads every byte, in chunks: a file larger than one read comes back whole."""
    path = tmp_path / "big.json"
    data = bytes(range(256)) * (5 << 12)  # 5 MiB: several 1 MiB reads
    path.write_bytes(data)
    assert read_file(path, "big.json", limit=None) == (data, None)
