"""``gen check`` covers everything gen generates and every input (generator/cli/main.py check).

* ``ansible/``, when it exists, must be what ``gen ansible`` would write now;
* a model no host uses is still checked (generator/pipeline/models.py): broken is an error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _unused_model(root: Path, name: str, extra: str) -> Path:
    path = root / "models" / f"{name}.yaml"
    path.write_text(f"name: {name}\ndescription: used by no host\nweights:\n  path: /shared/models/{name}\n"
                    f"  size_gb: 16\nserved_model_name: {name}\n{extra}")
    return path


def test_stale_ansible_folder_fails_check(repo_copy: Path) -> None:
    root = str(repo_copy)
    assert _gen("check", "--root", root).exit_code == 0
    assert _gen("ansible", "--root", root).exit_code == 0
    current = _gen("check", "--root", root)
    assert current.exit_code == 0, current.stderr
    # The port changes and that host's output/ is rendered again, but ansible/ still has the
    # old health URL: render says so plainly, check fails.
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("port: 30000", "port: 30007", 1))
    partial = _gen("render", "--host", "llm-two", "--root", root)
    assert partial.exit_code == 0
    assert "gen: ansible/ is now stale (written from the previous output/): run `gen ansible`" in partial.stderr
    stale = _gen("check", "--root", root)
    assert stale.exit_code == 1
    assert "gen: ansible/inventory.yml would be updated" in stale.stderr
    assert "gen: ansible/ is not current; run `gen ansible`" in stale.stderr
    assert _gen("ansible", "--root", root).exit_code == 0
    assert _gen("check", "--root", root).exit_code == 0


def test_render_all_refreshes_an_existing_ansible_folder(repo_copy: Path) -> None:
    root = str(repo_copy)
    assert _gen("ansible", "--root", root).exit_code == 0
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("port: 30000", "port: 30007", 1))
    rendered = _gen("render", "--all", "--root", root)
    assert rendered.exit_code == 0, rendered.stderr
    assert "updated   ansible/inventory.yml" in rendered.stdout and "stale" not in rendered.stderr
    assert "health_url: !unsafe \"http://127.0.0.1:30007/health\"" in (repo_copy / "ansible/inventory.yml").read_text()
    assert _gen("check", "--root", root).exit_code == 0
    # Without ansible/ a render writes none.
    shutil.rmtree(repo_copy / "ansible")
    assert _gen("render", "--all", "--root", root).exit_code == 0 and not (repo_copy / "ansible").exists()


def test_missing_ansible_file_fails_check(repo_copy: Path) -> None:
    root = str(repo_copy)
    assert _gen("ansible", "--root", root).exit_code == 0
    (repo_copy / "ansible/site.yml").unlink()
    r = _gen("check", "--root", root)
    assert r.exit_code == 1 and "gen: ansible/site.yml would be created" in r.stderr


def test_hand_written_file_in_ansible_is_refused_by_check(repo_copy: Path) -> None:
    (repo_copy / "ansible").mkdir()
    (repo_copy / "ansible/site.yml").write_text("- hosts: all\n")
    r = _gen("check", "--root", str(repo_copy))
    assert r.exit_code == 3 and "exists but gen did not write it" in r.stderr


def test_broken_unused_model_is_an_error(repo_copy: Path) -> None:
    _unused_model(repo_copy, "spare", "args:\n  --no-such-flag: 1\n")
    r = _gen("check", "--root", str(repo_copy))
    assert r.exit_code == 1, r.stderr
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("models/spare.yaml")]
    assert line.startswith("models/spare.yaml:8:3: error[F001]: unknown flag '--no-such-flag'"), line
    assert "model 'spare' is used by no host" in line
    # The same through render --all: nothing is written.
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 1


def test_valid_unused_model_passes_and_a_pin_that_knows_its_flag_is_enough(repo_copy: Path) -> None:
    _unused_model(repo_copy, "spare", "args:\n  --asr-max-buffer-seconds: 30\n")  # only in 0.5.23
    _unused_model(repo_copy, "plain", "")
    r = _gen("check", "--root", str(repo_copy))
    assert r.exit_code == 0, r.stderr
    findings = [ln for ln in r.stderr.splitlines() if not ln.startswith("gen: info: no checkpoint snapshot")]
    assert not any("spare" in ln or "plain" in ln for ln in findings), r.stderr


def test_a_stale_ansible_file_is_an_o020_diagnostic_in_json(repo_copy: Path) -> None:
    root = str(repo_copy)
    assert _gen("ansible", "--root", root).exit_code == 0
    (repo_copy / "ansible/site.yml").write_text((repo_copy / "ansible/site.yml").read_text() + "# edited\n")
    result = _gen("check", "--root", root, "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert [(d["file"], d["code"], d["message"]) for d in doc["diagnostics"] if d["code"] == "O020"] == [
        ("ansible/site.yml", "O020", "ansible/site.yml would be updated")]
    assert doc["current"] is False
