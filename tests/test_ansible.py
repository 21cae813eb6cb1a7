"""`gen ansible`: the inventory and playbook it writes, their determinism, and the validate command.

The playbook itself runs against real systemd hosts in tests/live/test_ansible_apply.py;
here ansible-core only parses it, and the unit check it embeds runs with this machine's
real ``systemd-analyze`` exactly the way Ansible's copy module calls it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ansible.parsing.dataloader import DataLoader
from click.testing import CliRunner, Result

from generator.emit.ansible import REMOVABLE_RE, SECRET_RE, VERIFY_UNIT
from generator.cli.main import main
from generator.emit.writer import MARKER

BIN = Path(sys.executable).parent
UNIT = "etc/systemd/system/sglang-qwen.service"
NAMES = ("inventory.yml", "site.yml", "rollout.yml", "gen-onhost.py", "gen-rollout.py", "gen-sandbox.py",
         "gen-digest.py")


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def repo(repo_copy: Path) -> Path:
    """The example repo with output/ rendered from its current sources."""
    rendered = _gen("render", "--all", "--root", str(repo_copy))
    assert rendered.exit_code == 0, rendered.stderr
    return repo_copy


def test_writes_inventory_and_playbook_deterministically(repo: Path) -> None:
    first = _gen("ansible", "--root", str(repo))
    assert first.exit_code == 0, first.stderr
    out = repo / "ansible"
    assert first.stdout.splitlines() == [f"created   {out / n}" for n in NAMES]
    texts = {p.name: p.read_text() for p in out.iterdir()}
    assert all(t.startswith(f"# {MARKER} ") for t in texts.values())
    again = _gen("ansible", "--root", str(repo))
    assert again.stdout.splitlines() == [f"unchanged {out / n}" for n in NAMES]
    assert {p.name: p.read_text() for p in out.iterdir()} == texts
    # Outside output/: the checked tree is untouched and still current.
    check = _gen("check", "--root", str(repo))
    assert check.exit_code == 0, check.stderr


@pytest.mark.parametrize("out", ["output", "output/llm-two", "models", "hosts/x", "templates", "catalogs/x",
                                 ".", "..", "/"])
def test_out_is_never_one_of_the_repositorys_own_folders(repo: Path, out: str) -> None:
    """--out output wrote the playbook into output/ (exit 0; every later run was then O002 on
    its files), --out models into what the next run reads as input, --out . beside hosts/."""
    before = sorted(str(p.relative_to(repo)) for p in repo.rglob("*"))
    target = out if out.startswith("/") else str(repo / out)
    result = _gen("ansible", "--root", str(repo), "--out", target)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--out'" in result.stderr
    assert sorted(str(p.relative_to(repo)) for p in repo.rglob("*")) == before


def test_strays_are_seen_in_a_folder_at_the_top_of_the_file_system() -> None:
    """``--out /etc``: the folder's parent is "/", whose name is empty, and the stray check
    found nothing there: gen ansible wrote beside every file of /etc with exit 0."""
    from generator.cli.ansible import ansible_strays

    found = ansible_strays(Path("/etc"), set())
    assert any(str(d.pos.path) == "/etc/passwd" for d in found), [str(d) for d in found][:5]


def test_inventory_lists_address_ssh_files_and_services(repo: Path) -> None:
    host = repo / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("ssh:\n  user: root\n", "ssh:\n  user: deploy\n  port: 2202\n"))
    assert _gen("render", "--all", "--root", str(repo)).exit_code == 0
    result = _gen("ansible", "--root", str(repo), "--out", str(repo / "deploy"))
    assert result.exit_code == 0, result.stderr
    inv = DataLoader().load((repo / "deploy/inventory.yml").read_text())
    assert inv["all"]["vars"]["gen_output_dir"] == "{{ inventory_dir }}/{{ gen_output_rel }}"
    assert inv["all"]["vars"]["gen_output_rel"] == "../output"
    hosts = inv["all"]["children"]["sglang_hosts"]["hosts"]
    assert list(hosts) == sorted(p.stem for p in (repo / "hosts").glob("*.yaml"))
    two = hosts["llm-two"]
    assert (two["ansible_host"], two["ansible_user"], two["ansible_port"]) == ("llm-two.lan", "deploy", 2202)
    assert two["gen_files"] == [
        {"path": "etc/sglang/qwen.env", "mode": "0644", "service": "sglang-qwen.service"},
        {"path": UNIT, "mode": "0644", "unit": "sglang-qwen.service", "service": "sglang-qwen.service"},
        {"path": "usr/local/libexec/gen/sglang-wait-ready", "mode": "0644", "service": ""},
    ]
    (svc,) = two["gen_services"]
    assert {k: svc[k] for k in ("name", "unit", "port", "health_url", "enabled", "group", "rank", "paths")} == {
        "name": "qwen", "unit": "sglang-qwen.service", "port": 30000, "health_url": "http://127.0.0.1:30000/health",
        "enabled": True, "group": "", "rank": 0,
        "paths": ["/etc/systemd/system/sglang-qwen.service", "/etc/sglang/qwen.env"]}
    unit_text = (repo / "output/llm-two" / UNIT).read_text()
    assert f"TimeoutStartSec={svc['timeout_start_s'] // 60}min" in unit_text
    pre = json.loads(base64.b64decode(svc["preflight"]))["services"][0]
    # Nothing of the service's flags: the host reads argv and environment from the staged files.
    assert pre == {"name": "qwen", "unit_file": "/var/lib/gen/next/" + UNIT,
                   "env_map": {"/etc/sglang/qwen.env": "/var/lib/gen/next/etc/sglang/qwen.env"}}
    box = json.loads(base64.b64decode(svc["sandbox"]))["services"][0]
    assert box["unit_file"] == "/var/lib/gen/next/" + UNIT
    assert box["env_map"] == {"/etc/sglang/qwen.env": "/var/lib/gen/next/etc/sglang/qwen.env"}
    # The multi-node deployment is one inventory group, its hosts in rank order.
    assert inv["all"]["vars"]["gen_groups"] == [
        {"name": "deepseek-v3-bf16", "group": "gen_group_deepseek_v3_bf16", "hosts": ["gpu-a", "gpu-b"]}]
    children = inv["all"]["children"]["sglang_hosts"]["children"]
    assert list(children["gen_group_deepseek_v3_bf16"]["hosts"]) == ["gpu-a", "gpu-b"]
    assert [s["rank"] for h in ("gpu-a", "gpu-b") for s in hosts[h]["gen_services"]] == [0, 1]
    # Every listed file is one the playbook can copy from output/<host>/.
    for name, entry in hosts.items():
        for f in entry["gen_files"]:
            assert (repo / "output" / name / f["path"]).is_file()


def test_refuses_when_output_is_not_current(repo: Path) -> None:
    unit = repo / "output/llm-two" / UNIT
    unit.write_text(unit.read_text().replace("--port 30000", "--port 1"))
    result = _gen("ansible", "--root", str(repo))
    assert result.exit_code == 1
    assert "output/ is not current; run `gen render --all` first" in result.stderr
    assert not (repo / "ansible").exists()


def test_refuses_to_overwrite_a_file_gen_did_not_write(repo: Path) -> None:
    (repo / "ansible").mkdir()
    (repo / "ansible/site.yml").write_text("- hosts: all\n")
    result = _gen("ansible", "--root", str(repo))
    assert result.exit_code == 3, result.stderr
    assert "exists but gen did not write it" in result.stderr
    assert (repo / "ansible/site.yml").read_text() == "- hosts: all\n"


def test_ansible_core_parses_the_playbook(repo: Path, tmp_path: Path) -> None:
    assert _gen("ansible", "--root", str(repo)).exit_code == 0
    env = os.environ | {"LC_ALL": "C.UTF-8", "ANSIBLE_HOME": str(tmp_path / "ah"),
                        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ah/tmp")}
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(repo / "ansible/inventory.yml"),
                           str(repo / "ansible/site.yml"), "--syntax-check"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(repo / "ansible/inventory.yml"),
                             str(repo / "ansible/site.yml"), "--list-hosts"],
                            capture_output=True, text=True, env=env, check=False, timeout=120)
    assert listed.returncode == 0 and "llm-two-full" in listed.stdout, listed.stdout + listed.stderr


def _validate(unit_text: str, unit_name: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the playbook's validate command as ansible's copy module does: %s, shlex split, no shell."""
    tmp = tmp_path / "tmpXk29ab"  # a random-looking name with no unit suffix, like ansible's
    tmp.write_text(unit_text)
    command = (VERIFY_UNIT + " " + unit_name) % str(tmp)
    return subprocess.run(shlex.split(command), capture_output=True, text=True, check=False, timeout=120)


def test_validate_command_accepts_a_good_unit_and_rejects_an_unknown_setting(repo: Path,
                                                                              tmp_path: Path) -> None:
    text = (repo / "output/llm-two" / UNIT).read_text()
    # The unit's programs must exist for systemd-analyze: point them at this machine's python.
    text = text.replace("/root/sglang-main/.venv/bin/python", shutil.which("python3") or "/usr/bin/python3")
    good = _validate(text, "sglang-qwen.service", tmp_path)
    assert (good.returncode, good.stdout, good.stderr) == (0, "", "")
    bad = _validate(text.replace("[Service]\n", "[Service]\nFrobnicateGPU=yes\n", 1), "sglang-qwen.service", tmp_path)
    assert bad.returncode == 1 and "FrobnicateGPU" in bad.stderr, bad.stderr


def test_secret_env_is_read_by_the_unit_listed_for_the_playbook_and_never_rendered(repo: Path) -> None:
    host = repo / "hosts/llm-two.yaml"
    text = host.read_text()
    assert "    port: 30000\n" in text
    host.write_text(text.replace("    port: 30000\n", "    port: 30000\n    secret_env: true\n", 1))
    rendered = _gen("render", "--all", "--root", str(repo))
    assert rendered.exit_code == 0, rendered.stderr
    unit = (repo / "output/llm-two" / UNIT).read_text()
    # After the rendered file, so it can carry what the rendered one must not.
    assert [ln for ln in unit.splitlines() if ln.startswith("EnvironmentFile=")] == \
        ["EnvironmentFile=/etc/sglang/qwen.env", "EnvironmentFile=/etc/sglang/secrets/qwen.env"]
    assert not any("secrets" in p.parts for p in (repo / "output").rglob("*"))
    assert "secrets/" not in (repo / "output/llm-two/.gen-managed").read_text()
    # Other hosts' units do not read one.
    assert "secrets/" not in (repo / "output/gpu-a/etc/systemd/system").joinpath(
        next(p.name for p in (repo / "output/gpu-a/etc/systemd/system").iterdir())).read_text()
    assert _gen("ansible", "--root", str(repo)).exit_code == 0
    hosts = DataLoader().load((repo / "ansible/inventory.yml").read_text())["all"]["children"]["sglang_hosts"]["hosts"]
    assert hosts["llm-two"]["gen_secret_env"] == ["/etc/sglang/secrets/qwen.env"]
    assert hosts["gpu-a"]["gen_secret_env"] == []
    assert all("/secrets/" not in f["path"] for h in hosts.values() for f in h["gen_files"])


def test_secret_env_must_be_a_boolean(repo: Path) -> None:
    host = repo / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("    port: 30000\n", "    port: 30000\n    secret_env: yes-please\n", 1))
    result = _gen("check", "--root", str(repo))
    assert result.exit_code == 1
    assert "hosts/llm-two.yaml:38:17: error[S002]: 'services[0].secret_env' must be true or false" in result.stderr


@pytest.mark.parametrize(("path", "removable"), [
    ("etc/systemd/system/sglang-qwen.service", True),
    ("etc/systemd/system/sglang-kimi:tp8.service", True),
    ("etc/sglang/qwen.env", True),
    ("usr/local/libexec/gen/sglang-wait-ready", True),
    ("etc/sglang/qwen.secret.env", False),  # the operator's, never gen's
    ("etc/systemd/system/sshd.service", False),
    ("etc/systemd/system/sglang-qwen.service.d/override.conf", False),
    ("etc/sglang/../passwd.env", False),
    ("etc/sglang/sub/qwen.env", False),
    ("/etc/sglang/qwen.env", False),
    ("etc/passwd", False),
    ("usr/local/libexec/gen/../../bin/sh", False),
    ("var/lib/gen/previous/sglang-qwen.service", True),  # a dropped service's previous set
    ("var/lib/gen/previous/../../../etc", False),
    ("var/lib/gen/next", False),
])
def test_only_paths_of_the_shapes_gen_writes_are_ever_removed(path: str, removable: bool) -> None:
    """The playbook's filter on the host's list (Ansible's ``match`` is re.match, ``search`` re.search)."""
    assert (re.match(REMOVABLE_RE, path) is not None and re.search(SECRET_RE, path) is None) is removable


def test_playbook_order_guard_prepare_groups_then_waves(repo: Path) -> None:
    assert _gen("ansible", "--root", str(repo)).exit_code == 0
    plays = DataLoader().load((repo / "ansible/site.yml").read_text())
    # kimi with the repository's rollout.yaml, qwen with its own batch: two waves.
    assert [p["hosts"] for p in plays] == ["sglang_hosts", "sglang_hosts", "gen_group_deepseek_v3_bf16",
                                           "gen_rollout_1", "gen_rollout_2"]
    guard, prepare, group, kimi, qwen = plays
    assert guard["tasks"][0]["run_once"] is True and guard["tasks"][0]["tags"] == ["always"]
    # Prepare runs on every host at once (forks); any failure stops all.
    assert "serial" not in prepare and prepare["any_errors_fatal"] is True
    assert "gen_host_list" not in prepare["vars"]  # per host, in the inventory
    # All ranks in one batch; each wave in its serial batches; all import the same steps.
    assert "serial" not in group and group["vars"]["gen_rollout_group"] == "deepseek-v3-bf16"
    assert group["vars"]["gen_rollout_models"] == ["deepseek-v3-bf16"]
    assert (kimi["vars"]["gen_rollout_models"], kimi["serial"], kimi["max_fail_percentage"]) == \
        (["kimi-k2.5-eagle3"], [1], 0)
    assert (qwen["vars"]["gen_rollout_models"], qwen["serial"]) == (["qwen3.5-122b-a10b"], [1])
    assert kimi["vars"]["gen_rollout_group"] == "" and kimi["any_errors_fatal"] is True
    assert group["tasks"] == kimi["tasks"] == qwen["tasks"] == [
        {"name": "The rollout steps", "ansible.builtin.import_tasks": "rollout.yml"}]
    names = [t["name"] for t in prepare["tasks"]]
    # Secrets first (nothing changes on a host without them), dropped services before the list.
    assert names.index("Require each secret environment file to exist, be owned by root, mode 0600") < \
        names.index("Stop and disable the units of dropped services") < \
        names.index("Remove the files of dropped services (and their previous sets)") < \
        names.index("Record the files gen owns on this host now (the rendered list and the previous sets)")
    record = prepare["tasks"][-1]["ansible.builtin.copy"]["content"]
    assert "inventory_hostname ~ '/.gen-managed'" in record and "var/lib/gen/previous/{{ s.unit }}" in record


def test_rollout_steps_gate_before_touching_and_roll_back_before_failing(repo: Path) -> None:
    assert _gen("ansible", "--root", str(repo)).exit_code == 0
    tasks = DataLoader().load((repo / "ansible/rollout.yml").read_text())
    names = [t["name"] for t in tasks]
    order = ["Preflight with the host's own SGLang (parse and validate the new argv)",
             "Preflight inside the new unit's own sandbox (devices, model folder, cache folders)",
             "Stop before anything running is touched when a preflight check failed on a host of this batch",
             "Keep the live files of each changed service as its previous set (under /var/lib/gen/previous)",
             "Install the rendered files (units pass systemd-analyze verify first)",
             "Restart every changed service of the batch at once (no rank waits for another)",
             "Wait until each restarted service is active and answers its own /health",
             "Roll back (previous set restored byte for byte, reloaded, restarted; a new service is disabled)",
             "Wait until each rolled-back service is healthy again",
             "Fail with the reason first, then the failed check, the rollback and the journal excerpt",
             "Verify that each enabled service answers /health with 200"]
    assert [n for n in names if n in order] == order
    by_name = {t["name"]: t for t in tasks}
    # Tags an operator expects.
    assert {tag for t in tasks for tag in t.get("tags", [])} == {"always", "copy", "preflight", "restart", "verify"}
    # Checks record instead of failing, so a group's rollback runs on every rank.
    for name in (order[0], order[1], order[6], order[8]):
        assert by_name[name]["failed_when"] is False, name
    # The scripts the tasks run are the generated copies of the on-host modules.
    for script in ("gen-onhost.py", "gen-rollout.py", "gen-sandbox.py"):
        assert (repo / "ansible" / script).read_text().startswith(f"# {MARKER} ")
