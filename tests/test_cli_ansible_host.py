"""`gen ansible --host`: an inventory and playbook that roll out the named hosts alone, and
every rank of their multi-node groups with them (generator/cli/ansible.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.parsing.dataloader import DataLoader
from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    return result


@pytest.fixture
def repo(repo_copy: Path) -> Path:
    """The example repo with output/ rendered from its current sources."""
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 0
    return repo_copy


def _hosts(repo: Path) -> list[str]:
    inventory = DataLoader().load((repo / "ansible/inventory.yml").read_text())
    return sorted(inventory["all"]["children"]["sglang_hosts"]["hosts"])


def test_the_whole_fleet_without_host(repo: Path) -> None:
    assert _gen("ansible", "--root", str(repo)).exit_code == 0
    assert _hosts(repo) == ["gpu-a", "gpu-b", "llm-two", "llm-two-full"]


def test_one_host_alone_and_gen_check_says_ansible_is_not_the_fleets(repo: Path) -> None:
    result = _gen("ansible", "--host", "llm-two", "--root", str(repo))
    assert result.exit_code == 0, result.stderr
    assert _hosts(repo) == ["llm-two"]
    assert result.stderr.splitlines()[-1] == "gen: ansible/ rolls out llm-two only; `gen ansible` writes the whole " \
                                             "fleet again"
    check = _gen("check", "--root", str(repo))
    assert check.exit_code == 1 and "ansible/inventory.yml would be updated" in check.stderr
    assert _gen("ansible", "--root", str(repo)).exit_code == 0 and _gen("check", "--root", str(repo)).exit_code == 0


def test_a_rank_brings_its_whole_multinode_group(repo: Path) -> None:
    result = _gen("ansible", "--host", "gpu-a", "--root", str(repo))
    assert result.exit_code == 0, result.stderr
    assert _hosts(repo) == ["gpu-a", "gpu-b"]
    assert "gen: ansible/ rolls out gpu-a, gpu-b only (gpu-b: other ranks of their multi-node groups); " \
           "`gen ansible` writes the whole fleet again" in result.stderr


def test_only_the_named_hosts_output_must_be_current(repo: Path) -> None:
    other = repo / "hosts/llm-two-full.yaml"
    other.write_text(other.read_text().replace("port: 30000", "port: 30009", 1))
    assert _gen("ansible", "--root", str(repo)).exit_code == 1  # the fleet: llm-two-full is stale
    assert _gen("ansible", "--host", "llm-two", "--root", str(repo)).exit_code == 0
    mine = repo / "hosts/llm-two.yaml"
    mine.write_text(mine.read_text().replace("port: 30000", "port: 30008", 1))
    refused = _gen("ansible", "--host", "llm-two", "--root", str(repo))
    assert refused.exit_code == 1
    assert "gen: output/ is not current; run `gen render --host llm-two` first" in refused.stderr


def test_an_unknown_host_is_a_usage_error(repo: Path) -> None:
    assert _gen("ansible", "--host", "nope", "--root", str(repo)).exit_code == 2
