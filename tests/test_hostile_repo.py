"""One hostile repository (tests/fixtures/hostile/) that combines the output-side attacks of issue 10.

* ``repo/``: valid but hostile inputs (a model_root with ``%n`` and a blank, a source_dir
  with bind-spec colons, a service named to reach the other's secret file). It must
  render, and systemd must read every path back as written.
* ``secrets/``: the same host with secret flags and variables; every one refused with
  the ``# expect:`` line written under it, nothing written.
* ``attacks.yaml``: what a pull request can plant under ``output/`` (symlinks at every
  level, a ghost tree, a managed list naming ``..``, a FIFO, a fake ownership header,
  temp files, a hard link). Each is planted on a freshly rendered copy; gen must refuse
  it with the message listed (or, for temp files and hard links, handle it as listed),
  and the folder outside the repository must be byte-for-byte what it was.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from ruamel.yaml import YAML
from systemd_unquote import systemd_load

from generator.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"
ATTACKS: list[dict[str, Any]] = YAML(typ="safe").load((HOSTILE / "attacks.yaml").read_text())


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry below ``root`` without following links: mode, inode, content or target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            data = os.readlink(p).encode() if p.is_symlink() else p.read_bytes() if stat.S_ISREG(st.st_mode) else b""
            out[str(p.relative_to(root))] = (st.st_mode, st.st_ino, data)
    return out


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """(repo, outside): the hostile repo rendered once, and a folder outside it."""
    repo = tmp_path / "repo"
    shutil.copytree(HOSTILE / "repo", repo)
    for part in ("templates", "catalogs"):
        shutil.copytree(ROOT / part, repo / part)
    outside = tmp_path / "outside"
    (outside / "etc" / "sglang").mkdir(parents=True)
    (outside / "keep.txt").write_text("precious\n")
    (outside / "etc" / "sglang" / "evil.env").write_text("precious env\n")
    first = _gen("render", "--all", "--root", str(repo))
    assert first.exit_code == 0, first.stderr
    return repo, outside


def test_hostile_values_render_and_read_back(hostile: tuple[Path, Path]) -> None:
    repo, _ = hostile
    unit = (repo / "output/evil/etc/systemd/system/sglang-evil.service").read_text()
    dump = [ln.lstrip("\t") for ln in systemd_load("sglang-evil.service", unit, system_units=True).dump.split("\n")]
    assert "RequiresMountsFor: /shared/mo dels%n (origin-file)" in dump
    assert [ln for ln in dump if ln.startswith("BindReadOnlyPaths:")] == [
        "BindReadOnlyPaths: /root/sg:/etc:norbind:/root/sg:/etc:norbind:rbind"]
    assert "EnvironmentFile: /etc/sglang/secrets/evil.env" in dump  # not evil.secret's env file
    files = {str(p.relative_to(repo / "output/evil")) for p in (repo / "output/evil").rglob("*") if p.is_file()}
    assert "etc/sglang/evil.secret.env" in files and not any("secrets" in f or "credstore" in f for f in files)


def test_secrets_in_the_inputs_are_refused_each_with_its_message(hostile: tuple[Path, Path]) -> None:
    repo, _ = hostile
    overlay = HOSTILE / "secrets" / "hosts" / "evil.yaml"
    expected = [ln.split("# expect: ", 1)[1] for ln in overlay.read_text().splitlines() if "# expect: " in ln]
    shutil.copyfile(overlay, repo / "hosts" / "evil.yaml")
    before = _snapshot(repo / "output")
    for args in (["check"], ["render", "--all"]):
        result = _gen(*args, "--root", str(repo))
        assert result.exit_code == 1
        assert [ln for ln in result.stderr.splitlines() if ": error[" in ln] == expected
        assert "sk-hostile" not in result.stderr + result.stdout and "hf_hostile" not in result.stderr
    assert _snapshot(repo / "output") == before


def _plant(repo: Path, outside: Path, step: dict[str, str]) -> None:
    def where(text: str) -> Path:
        return Path(text.replace("OUTSIDE", str(outside))) if text.startswith("OUTSIDE") else repo / text

    kind = next(k for k in ("symlink", "file", "append", "fifo", "hardlink") if k in step)
    path = where(step[kind])
    if step.get("replace") or kind == "fifo":
        path.unlink()
    if kind == "symlink" and path.exists():
        os.rename(path, path.with_name(path.name + ".moved"))  # keep it; plant the link in its place
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        path.symlink_to(where(step["to"]))
    elif kind == "file":
        path.write_text(step["text"])
    elif kind == "append":
        path.write_text(path.read_text() + step["text"])
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        os.link(where(step["to"]), path)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a["name"] for a in ATTACKS])
def test_output_attack_is_refused_and_nothing_outside_changes(hostile: tuple[Path, Path],
                                                               attack: dict[str, Any]) -> None:
    repo, outside = hostile
    for step in attack["plant"]:
        _plant(repo, outside, step)
    before = _snapshot(outside)
    if "check" in attack:
        check = _gen("check", "--root", str(repo))
        assert check.exit_code == 1 and attack["check"] in check.stderr.splitlines(), check.stderr
    result = _gen("render", "--all", "--root", str(repo))
    assert result.exit_code == attack["exit"], result.stderr
    if "expect" in attack:
        expect = attack["expect"].replace("OUTSIDE", str(outside))
        assert result.stderr.startswith(expect), result.stderr
        assert _gen("check", "--root", str(repo)).exit_code == 3  # check refuses the same way
        assert "Traceback" not in result.stderr
    assert _snapshot(outside) == before, "gen changed something outside the repository"
    for rel in attack.get("kept", []):
        assert (repo / rel).exists()
    for rel in attack.get("gone", []):
        assert not (repo / rel).exists()
    if attack["exit"] == 0:
        assert _gen("check", "--root", str(repo)).exit_code == 0
