"""Fast tests of the generated playbook's decisions, evaluated by Ansible's own templar.

The guard that keeps a multi-node group together, the preflight stop condition and the
secret-file check were tested only live (tests/live), where one run proves one direction.
Here the conditions are read from the ``site.yml`` and ``rollout.yml`` that ``gen ansible``
writes for the example repo and evaluated with ansible-core's real Jinja templar for each
case: a mutant of the text gen emits (``or`` made ``and``, a dropped clause, a changed
batch, a lost ``always`` tag) fails here in seconds, without a host.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from click.testing import CliRunner

from conftest import REPO_PARTS, ROOT
from generator.cli.main import main


@pytest.fixture(scope="module")
def playbook(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any]]:
    """(site.yml plays, rollout.yml tasks) as ansible-core's DataLoader reads them."""
    repo = tmp_path_factory.mktemp("repo")
    for part in REPO_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, repo / part)
        elif src.is_file():
            shutil.copy2(src, repo / part)
    result = CliRunner().invoke(main, ["ansible", "--root", str(repo)])
    assert result.exit_code == 0, result.stderr
    loader = DataLoader()
    return (loader.load_from_file(str(repo / "ansible/site.yml")),
            loader.load_from_file(str(repo / "ansible/rollout.yml")))


def _task(tasks: list[Any], starts: str) -> dict[str, Any]:
    [task] = [t for t in tasks if str(t.get("name", "")).startswith(starts)]
    return task


def _play_tasks(plays: list[Any]) -> list[Any]:
    return [t for play in plays for t in play.get("tasks", [])]


def _true(expression: str, variables: dict[str, Any]) -> bool:
    """A ``when:``/``that:`` condition as Ansible evaluates it (the playbook is trusted: gen wrote it)."""
    templar = Templar(loader=DataLoader(), variables=variables)
    return bool(templar.evaluate_conditional(trust_as_template(expression)))


GROUP = {"name": "big", "group": "gen_group_big", "hosts": ["n0", "n1"]}


@pytest.mark.parametrize(("play_hosts", "allowed"), [
    (["n0", "n1", "other"], True),  # the whole group in the run
    (["other"], True),  # the group left out
    (["n0", "n1"], True),  # --limit gen_group_big
    (["n0", "other"], False),  # rank 1 excluded: rank 0 would wait for it forever
    (["n1"], False),  # rank 0 excluded
])
def test_guard_keeps_a_multinode_group_together(playbook: tuple[list[Any], list[Any]],
                                                 play_hosts: list[str], allowed: bool) -> None:
    guard = _task(_play_tasks(playbook[0]), "Every multi-node group is either wholly in this run")
    that = guard["ansible.builtin.assert"]["that"]
    variables = {"item": GROUP, "ansible_play_hosts_all": play_hosts}
    assert all(_true(c, variables) for c in that) is allowed


@pytest.mark.parametrize(("batch", "check_mode", "stops"), [
    (["a"], False, False),  # a passed its preflight, alone in its batch
    (["a", "b"], False, True),  # b of the same batch failed: a stops too, before any restart
    (["a", "b"], True, False),  # the --check preview goes on to show every diff
    (["b"], False, True),
    (["c"], False, False),  # a later batch never sees an earlier batch's hosts
])
def test_preflight_stops_the_whole_batch(playbook: tuple[list[Any], list[Any]], batch: list[str],
                                         check_mode: bool, stops: bool) -> None:
    stop = _task(playbook[1], "Stop before anything running is touched when a preflight check failed")
    hostvars = {"a": {"gen_pre_failures": []}, "b": {"gen_pre_failures": ["u on b sandbox: no /dev/nvidia0"]},
                "c": {"gen_pre_failures": []}}
    variables: dict[str, Any] = {"hostvars": hostvars, "ansible_play_batch": batch,
                                 "ansible_check_mode": check_mode, "inventory_hostname": batch[0]}
    templar = Templar(loader=DataLoader(), variables=variables)
    variables["F"] = templar.template(trust_as_template(stop["vars"]["F"]))
    assert _true(stop["when"], variables) is stops
    assert "ansible.builtin.fail" in stop


def test_secret_file_check_runs_whatever_the_tags(playbook: tuple[list[Any], list[Any]]) -> None:
    """``--tags restart`` (or any tag) must not skip the secret files' check: it carries ``always``."""
    tasks = _play_tasks(playbook[0])
    for starts in ("Look at the secret environment files", "Require each secret environment file"):
        assert "always" in _task(tasks, starts)["tags"], starts
    require = _task(tasks, "Require each secret environment file")
    assert require["ansible.builtin.assert"]["that"] == [
        "item.stat.exists", "item.stat.isreg", "item.stat.uid == 0", "item.stat.mode == '0600'"]
    ok = {"exists": True, "isreg": True, "uid": 0, "mode": "0600"}
    for bad in ({"uid": 1000}, {"mode": "0644"}, {"isreg": False}, {"exists": False}):
        stat = {**ok, **bad}
        assert not all(_true(c, {"item": {"stat": stat}}) for c in require["ansible.builtin.assert"]["that"])
    assert all(_true(c, {"item": {"stat": ok}}) for c in require["ansible.builtin.assert"]["that"])
