"""Every name gen derives is unique once derived (generator/load/names.py, systemd.name_problem).

The issue's finding: models ``deepseek-v3-bf16`` and ``deepseek_v3_bf16`` were one Ansible
group, so one multi-node deployment was never rolled out and the play succeeded. Variants:
names that differ only in case (one file on a case-insensitive checkout), services of one
host likewise, a host named like an inventory group, and names a YAML reader takes for
something else (Ansible read the hosts ``yes`` and ``on`` as one key, ``True``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml  # PyYAML: Ansible's YAML reader, the oracle for what an inventory key becomes
from click.testing import CliRunner, Result
from ruamel.yaml import YAML

from generator.cli.main import main
from generator.load.names import ansible_group
from generator.systemd import name_problem, yaml_reads_as


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"GEN_RENDER_CACHE": "off"})


def _second_deployment(repo: Path, model: str) -> None:
    """A second two-node deployment on hosts gpu-c/gpu-d, of a model named ``model``."""
    text = (repo / "models" / "deepseek-v3-bf16.yaml").read_text()
    (repo / "models" / f"{model}.yaml").write_text(
        text.replace("name: deepseek-v3-bf16", f"name: {model}").replace("hosts: [gpu-a, gpu-b]", "hosts: [gpu-c, gpu-d]"))
    for old, new, net in (("gpu-a", "gpu-c", "192.0.2.20"), ("gpu-b", "gpu-d", "192.0.2.21")):
        host = (repo / "hosts" / f"{old}.yaml").read_text()
        host = host.replace(f"name: {old}", f"name: {new}").replace(f"address: {old}.", f"address: {new}.")
        host = host.replace("address: 192.0.2.1", "address: 192.0.2.2").replace("model: deepseek-v3-bf16", f"model: {model}")
        (repo / "hosts" / f"{new}.yaml").write_text(host)
        assert net in host


def test_two_models_of_one_ansible_group_are_refused_at_both(repo_copy: Path) -> None:
    _second_deployment(repo_copy, "deepseek_v3_bf16")
    assert ansible_group("deepseek-v3-bf16") == ansible_group("deepseek_v3_bf16")
    for args in (("check",), ("ansible",), ("render", "--all")):
        result = _gen(*args, "--root", str(repo_copy))
        assert result.exit_code == 1, result.output
        found = [line for line in result.stderr.splitlines() if "error[R015]" in line]
        assert [line.split(":")[0] for line in found] == ["models/deepseek-v3-bf16.yaml", "models/deepseek_v3_bf16.yaml"]
        assert "gen_group_deepseek_v3_bf16" in found[0]
    assert not (repo_copy / "ansible").exists()


def test_two_distinct_groups_both_roll_out(repo_copy: Path) -> None:
    """The control: another name is another group, and the playbook has a play for each."""
    _second_deployment(repo_copy, "deepseek-v3-fp8")
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 0
    assert _gen("ansible", "--root", str(repo_copy)).exit_code == 0
    from ansible.parsing.dataloader import DataLoader  # the inventory's values are !unsafe: Ansible's own reader

    inv = DataLoader().load((repo_copy / "ansible" / "inventory.yml").read_text())
    children = inv["all"]["children"]["sglang_hosts"]["children"]
    assert {g: sorted(v["hosts"]) for g, v in children.items() if g.startswith("gen_group_")} == {
        "gen_group_deepseek_v3_bf16": ["gpu-a", "gpu-b"], "gen_group_deepseek_v3_fp8": ["gpu-c", "gpu-d"]}


@pytest.mark.parametrize("folder, name, other", [("models", "Qwen3.5-122b-a10b", "qwen3.5-122b-a10b"),
                                                 ("hosts", "LLM-two", "llm-two")])
def test_file_names_that_differ_only_in_case_are_refused_at_both(repo_copy: Path, folder: str, name: str,
                                                                 other: str) -> None:
    source = repo_copy / folder / f"{other}.yaml"
    (repo_copy / folder / f"{name}.yaml").write_text(source.read_text().replace(f"name: {other}", f"name: {name}"))
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1
    found = sorted(line.split(": error")[0] for line in result.stderr.splitlines() if "error[R013]" in line)
    assert found == sorted([f"{folder}/{name}.yaml", f"{folder}/{other}.yaml"]), result.stderr


def test_template_names_that_differ_only_in_case_are_refused(repo_copy: Path) -> None:
    shutil.copy(repo_copy / "templates" / "hardening.j2", repo_copy / "templates" / "Hardening.j2")
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1 and result.stderr.count("error[R013]") == 2, result.stderr


def test_services_of_one_host_that_differ_only_in_case_are_refused_at_both(repo_copy: Path) -> None:
    host = repo_copy / "hosts" / "llm-two.yaml"
    text = host.read_text()
    block = text[text.index("  - name: qwen"):]
    host.write_text(text + block.replace("name: qwen", "name: Qwen", 1))
    result = _gen("check", "--root", str(repo_copy))
    found = [line for line in result.stderr.splitlines() if "error[R014]" in line]
    assert len(found) == 2 and "sglang-Qwen.service and sglang-qwen.service" in found[1], result.stderr


@pytest.mark.parametrize("name", ["all", "ungrouped", "sglang_hosts", "gen_group_deepseek_v3_bf16", "gen_group_x",
                                  "gen_rollout_1", "gen_rollout_x"])
def test_a_host_named_like_an_inventory_group_is_refused(repo_copy: Path, name: str) -> None:
    old = repo_copy / "hosts" / "llm-two.yaml"
    (repo_copy / "hosts" / f"{name}.yaml").write_text(old.read_text().replace("name: llm-two", f"name: {name}")
                                                       .replace("address: llm-two.lan",
                                                                f"address: {name.replace('_', '-')}.lan"))
    old.unlink()
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1 and f"hosts/{name}.yaml:4:7: error[R016]" in result.stderr, result.stderr


# What PyYAML (Ansible) and ruamel (gen) read as a boolean, a number, null or a date.
YAML_WORDS = ["yes", "Yes", "on", "ON", "off", "no", "true", "False", "null", "Null", "1_000", "017", "0x1f", "0b1",
              "1e3", "12e3", "1.5", "5", "2024-01-01"]


@pytest.mark.parametrize("word", YAML_WORDS)
def test_a_name_a_yaml_reader_takes_for_something_else_is_refused(word: str) -> None:
    read = [yaml.safe_load(word), YAML(typ="safe").load(word), YAML(typ="safe").load("%YAML 1.1\n---\n" + word)]
    assert any(not isinstance(r, str) for r in read)  # the oracles agree it is no string to someone
    assert yaml_reads_as(word) is not None
    assert "YAML reader" in (name_problem(word) or "")


@pytest.mark.parametrize("name", ["qwen", "gpu-a", "llm-two", "deepseek-v3-bf16", "0.5.9", "a1", "e3", "h100-1",
                                  "node01", "yes-please", "on-call"])
def test_ordinary_names_stay_names(name: str) -> None:
    assert isinstance(yaml.safe_load(name), str) and isinstance(YAML(typ="safe").load(name), str)
    assert yaml_reads_as(name) is None and name_problem(name) is None


def test_hosts_yes_and_on_were_one_inventory_key() -> None:
    """Why: the oracle read two hosts as one."""
    assert yaml.safe_load("hosts:\n  yes:\n  on:\n") == {"hosts": {True: None}}


def test_the_yaml_1_1_spec_booleans_y_and_n_are_refused_too() -> None:
    """YAML 1.1 lists y/n as booleans (ruamel's 1.1 resolver does); PyYAML happens not to."""
    assert yaml_reads_as("y") == yaml_reads_as("N") == "a boolean"


# Windows reserves these in every folder, whatever follows the first dot: hosts/CON.yaml,
# output/nul.x/ and etc/sglang/com1.env cannot be checked out there.
DEVICE_NAMES = ["CON", "con", "Nul", "nul.x", "AUX", "prn.yaml", "COM1", "com9", "LPT1", "lpt0.a"]


@pytest.mark.parametrize("name", DEVICE_NAMES)
def test_a_windows_device_name_is_refused(name: str) -> None:
    assert "device name on Windows" in (name_problem(name) or "")


@pytest.mark.parametrize("name", ["console", "con-x", "conf", "com10", "lpt", "auxiliary", "nullable", "x.con", "com"])
def test_names_that_only_start_like_a_device_stay_names(name: str) -> None:
    assert name_problem(name) is None


def test_a_host_named_con_is_s007_at_its_name(repo_copy: Path) -> None:
    """The name check of hosts and models (the schema's, S007) refuses it before any file is named so."""
    old = repo_copy / "hosts" / "gpu-a.yaml"
    (repo_copy / "hosts" / "CON.yaml").write_text(old.read_text().replace("name: gpu-a", "name: CON"))
    old.unlink()
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1 and "hosts/CON.yaml:" in result.stderr and "error[S007]" in result.stderr, \
        result.stderr
    assert "device name on Windows" in result.stderr


IMPORT = ["import", "--sglang", "0.5.9", "--size-gb", "1", "--root", str(Path(__file__).resolve().parent.parent)]
COMMAND = ["--", "python", "-m", "sglang.launch_server", "--model-path", "/m/x"]


@pytest.mark.parametrize("name", ["x\ny: 1", "x\r", "a\x1b]8;;http://x\x1b\\", "tab\tname", "CON", "on", "../x", "",
                                  "a" * 101])
def test_gen_import_refuses_a_name_that_is_no_name(name: str) -> None:
    """`gen import --name $'x\\ny: 1'` printed a manifest with that name and exited 0."""
    result = _gen(*IMPORT, "--name", name, *COMMAND)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "is not a name" in result.stderr, result.stderr
    assert "\x1b" not in result.stderr and "Traceback" not in result.stderr


def test_gen_import_keeps_a_name_that_is_one() -> None:
    result = _gen(*IMPORT, "--name", "qwen-x", *COMMAND)
    assert result.exit_code == 0 and "name: qwen-x\n" in result.stdout, result.output


@pytest.mark.parametrize("name", ["con.j2", "NUL", "Aux.service.j2", "lpt1.j2"])
def test_a_template_named_like_a_windows_device_is_y017(repo_copy: Path, name: str) -> None:
    (repo_copy / "templates" / name).write_text("# a template\n")
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1 and f"templates/{name}: error[Y017]:" in result.stderr, result.stderr
    assert "device name on Windows" in result.stderr
