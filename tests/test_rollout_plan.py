"""The rollout strategy (issue 23 item 1): settings, their checks, the waves and batches, the plays.

generator/load/rollout.py reads rollout.yaml and a model's ``rollout:``;
generator/plan/rollout.py makes the batches (canary, then batch-sized, never more
replicas of a model than its max_unavailable); site.yml carries them as Ansible's own
``serial`` lists, and the rollout steps check the batch on the live state again and roll
a batch past its failure budget back as a whole. The steps' expressions are evaluated by
ansible-core's own Templar; the order of a wave's hosts by ansible-playbook itself.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from click.testing import CliRunner, Result
from hypothesis import given, settings, strategies as st
from hypothesis_budget import examples
from repo_builder import host_yaml, model_yaml, write_repo

from generator.cli.main import main
from generator.emit.ansible.tasks import tasks_text
from generator.errors import Diagnostics
from generator.load.rollout import RolloutSettings, Size, load_rollout
from generator.plan.rollout import Replica, batches, plan_rollout

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(autouse=True)
def _private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_RENDER_CACHE", str(tmp_path / "cache"))


def test_canary_then_batches_in_name_order() -> None:
    replicas = [Replica(f"h{i}", f"m{i}", "s") for i in range(6)]
    plan = plan_rollout(replicas, {f"m{i}": RolloutSettings(batch=Size(2)) for i in range(6)})
    (wave,) = plan.waves
    assert wave.serial == (1, 2, 2, 1) and wave.hosts == tuple(f"h{i}" for i in range(6))
    assert wave.batches == (("h0",), ("h1", "h2"), ("h3", "h4"), ("h5",))
    assert plan.largest_batch == 2


def test_replicas_of_a_model_never_share_a_batch_by_default() -> None:
    # m on a, b, c; the others alone. Batch 3 would take a, b, c together.
    replicas = [Replica(h, "m", "s") for h in "abc"] + [Replica(h, f"o{h}", "s") for h in "def"]
    settings_ = {m: RolloutSettings(canary=0, batch=Size(3)) for m in ["m", "od", "oe", "of"]}
    (wave,) = plan_rollout(replicas, settings_).waves
    assert wave.batches == (("a", "d", "e"), ("b", "f"), ("c",))
    two = {m: RolloutSettings(canary=0, batch=Size(3), max_unavailable=Size(2)) for m in settings_}
    assert plan_rollout(replicas, two).waves[0].batches == (("a", "b", "d"), ("c", "e", "f"))


def test_percentages_round_down_to_at_least_one() -> None:
    assert (Size(25, True).of(6), Size(50, True).of(6), Size(10, True).of(6), Size(100, True).of(3)) == (1, 3, 1, 3)
    replicas = [Replica(h, "m", "s") for h in "abcd"]
    plan = plan_rollout(replicas, {"m": RolloutSettings(canary=0, batch=Size(100, True),
                                                         max_unavailable=Size(50, True))})
    assert plan.waves[0].batches == (("a", "b"), ("c", "d")) and dict(plan.max_unavailable) == {"m": 2}


def test_models_that_agree_share_a_wave_and_others_get_their_own() -> None:
    replicas = [Replica("a", "x", "s"), Replica("b", "y", "s"), Replica("c", "z", "s"), Replica("a", "z", "t")]
    waves = plan_rollout(replicas, {"z": RolloutSettings(canary=0, max_fail_percentage=20)}).waves
    assert [(w.models, w.hosts) for w in waves] == [(("x", "y"), ("a", "b")), (("z",), ("a", "c"))]
    assert waves[1].settings.max_fail_percentage == 20


@settings(max_examples=examples(200))
@given(st.dictionaries(st.sampled_from("abcdefghij"), st.sets(st.sampled_from("MNOP"), min_size=1, max_size=3),
                       min_size=1), st.integers(0, 4), st.integers(1, 5), st.integers(1, 3))
def test_batches_cover_every_host_once_within_sizes_and_caps(hosts: dict[str, set[str]], canary: int, batch: int,
                                                              cap: int) -> None:
    names = sorted(hosts)
    models_of = {h: frozenset(ms) for h, ms in hosts.items()}
    caps = {m: cap for ms in hosts.values() for m in ms}
    made = batches(names, models_of, caps, canary, batch)
    assert sorted(h for b in made for h in b) == names and all(made)
    for i, chosen in enumerate(made):
        target = canary if i == 0 and canary > 0 else batch
        assert len(chosen) <= target
        for model in caps:
            assert sum(model in models_of[h] for h in chosen) <= cap
        later = [h for b in made[i + 1:] for h in b]
        if len(chosen) < target:  # not full: every later host would have broken a cap here
            for host in later:
                assert any(sum(m in models_of[h] for h in chosen) >= cap for m in models_of[host])


def test_settings_are_checked_with_positions(tmp_path: Path) -> None:
    (tmp_path / "rollout.yaml").write_text("canary: -1\nbatch: ten\nmax_unavailable: 0\nmax_fail_percentage: 101\n"
                                           "maxunavailable: 1\n")
    diags = Diagnostics()
    assert load_rollout(tmp_path, diags) == RolloutSettings()
    assert [str(d) for d in diags.sorted()] == [
        "rollout.yaml:1:9: error[S005]: 'canary' must be at least 0, got -1",
        "rollout.yaml:2:8: error[A001]: 'batch' is neither a number of hosts nor a percentage like '25%' "
        "(write 10 or '10%'), got 'ten'",
        "rollout.yaml:3:18: error[S005]: 'max_unavailable' must be at least 1, got 0",
        "rollout.yaml:4:22: error[S005]: 'max_fail_percentage' must be at most 100, got 101",
        "rollout.yaml:5:1: error[S001]: unknown key 'maxunavailable' (did you mean 'max_unavailable'?)"]
    (tmp_path / "rollout.yaml").write_text("batch: 101%\n")
    diags = Diagnostics()
    load_rollout(tmp_path, diags)
    assert [d.code for d in diags.sorted()] == ["A001"] and "from '1%' to '100%'" in diags.sorted()[0].message


def _fleet(root: Path, rollout: str = "", qwen_rollout: str = "") -> Path:
    """Six hosts (two GPUs): model m on a, b and c (replicas), a model of its own on each of d, e, f."""
    hosts, models = {}, {"m": model_yaml("m", extra=qwen_rollout)}
    for i, h in enumerate("abcdef"):
        model = "m" if h in "abc" else f"o{h}"
        models.setdefault(model, model_yaml(model))
        hosts[h] = host_yaml(h, (2,), services=f"  - name: s{h}\n    model: {model}\n    port: {30000 + i}\n")
    write_repo(root, hosts, models)
    for part in ("templates", "catalogs"):
        shutil.copytree(ROOT / part, root / part)
    if rollout:
        (root / "rollout.yaml").write_text(rollout)
    return root


def test_gen_ansible_renders_the_waves_as_serial_lists(tmp_path: Path) -> None:
    repo = _fleet(tmp_path / "repo", "canary: 1\nbatch: 2\n")
    for args in (("render", "--all"), ("ansible",)):
        result = _gen(*args, "--root", str(repo))
        assert result.exit_code == 0, result.stderr
    plays = DataLoader().load((repo / "ansible/site.yml").read_text())
    (wave,) = plays[2:]
    assert wave["serial"] == [1, 2, 2, 1] and wave["max_fail_percentage"] == 0
    inventory = DataLoader().load((repo / "ansible/inventory.yml").read_text())
    order = list(inventory["all"]["children"]["sglang_hosts"]["children"]["gen_rollout_1"]["hosts"])
    # a canary; then b cannot join c (both serve m): b, d; then c, e; then f.
    assert order == ["a", "b", "d", "c", "e", "f"]
    assert inventory["all"]["vars"]["gen_max_unavailable"]["m"] == 1
    # Ansible's executor takes a play's hosts with get_hosts(pattern, order): the planned order,
    # which its serial list then cuts into the planned batches.
    manager = InventoryManager(loader=DataLoader(), sources=[str(repo / "ansible/inventory.yml")])
    assert [h.name for h in manager.get_hosts(wave["hosts"], order="inventory")] == order


def test_warnings_of_the_plan_are_positioned(tmp_path: Path) -> None:
    repo = _fleet(tmp_path / "repo", "canary: 6\n", qwen_rollout="rollout:\n  batch: 2\n")
    host = repo / "hosts/a.yaml"
    host.write_text(host.read_text() + "  - name: s2\n    model: m\n    port: 31000\n")  # two replicas on a
    for args in (("render", "--all"), ("ansible",)):
        result = _gen(*args, "--root", str(repo))
        assert result.exit_code == 0, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if "warning[A" in ln]
    assert any(ln.startswith("rollout.yaml:1:9: warning[A002]: canary 6 takes all 3 host(s)") for ln in lines), lines
    assert any(ln.startswith("hosts/a.yaml:") and "warning[A004]: host 'a' runs 2 services of model 'm'" in ln
               for ln in lines), lines
    assert sum("warning[A004]" in ln for ln in lines) == 1, lines  # once per host and model, not per replica
    check = _gen("check", "--root", str(repo))  # ansible/ exists: the same warnings, exit 0
    assert check.exit_code == 0 and "warning[A002]" in check.stderr, check.stderr


def test_a_bad_model_rollout_is_an_error_at_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    repo = _fleet(tmp_path / "repo", qwen_rollout="rollout:\n  max_unavailable: '0%'\n")
    result = _gen("render", "--all", "--root", str(repo))
    assert result.exit_code == 1
    assert "models/m.yaml:5:20: error[A001]: 'rollout.max_unavailable' must be a percentage from '1%' to '100%'" \
        in result.stderr, result.stderr


def _task(name: str, tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "rollout.yml").write_text(tasks_text())
    tasks = DataLoader().load_from_file(str(tmp_path / "rollout.yml"), trusted_as_template=True)
    (task,) = [t for t in tasks if t["name"].startswith(name)]
    return task


def _render(expr: Any, variables: dict[str, Any], task: dict[str, Any]) -> Any:
    for name, value in (task.get("vars") or {}).items():
        variables = variables | {name: Templar(loader=DataLoader(), variables=variables).template(value)}
    return Templar(loader=DataLoader(), variables=variables).template(expr)


def _hostvars(batch: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {h: {"inventory_hostname": h, **v} for h, v in batch.items()}


def test_a_batch_that_would_take_two_replicas_down_is_refused_before_it_is_touched(tmp_path: Path) -> None:
    task = _task("Refuse a batch that would restart more replicas", tmp_path)
    (that,) = task["ansible.builtin.assert"]["that"]
    batch = {"a": {"gen_restart_models": ["m"]}, "b": {"gen_restart_models": ["m", "x"]}, "c": {"gen_restart_models": []}}
    for cap, ok in ((1, False), (2, True)):
        variables = {"ansible_play_batch": list(batch), "hostvars": _hostvars(batch), "item": {"key": "m", "value": cap}}
        assert _render(trust_as_template("{{ " + that + " }}"), variables, task) is ok
    variables = {"ansible_play_batch": list(batch), "hostvars": _hostvars(batch), "item": {"key": "m", "value": 1}}
    assert "restart 2 replicas of model m at once (a, b)" in _render(task["ansible.builtin.assert"]["fail_msg"],
                                                                       variables, task)


@pytest.mark.parametrize(("budget", "whole"), [(0, True), (49, True), (50, False), (100, False)])
def test_a_batch_past_its_failure_budget_rolls_back_as_a_whole(tmp_path: Path, budget: int, whole: bool) -> None:
    task = _task("Decide what rolls back", tmp_path)
    scope = [{"unit": "sglang-s.service", "model": "m"}, {"unit": "sglang-t.service", "model": "m"}]
    batch = {"a": {"gen_failures": [{"unit": "sglang-s.service"}]}, "b": {"gen_failures": []}}
    both = ["sglang-s.service", "sglang-t.service"]
    for host, expect in (("a", both if whole else ["sglang-s.service"]), ("b", both if whole else [])):
        variables = {"ansible_play_batch": ["a", "b"], "hostvars": _hostvars(batch), "gen_rollout_group": "",
                     "gen_max_fail_percentage": budget, "gen_scope": scope, "gen_changed": ["sglang-s.service"],
                     "gen_restart": both, **batch[host]}
        rollback = _render(task["ansible.builtin.set_fact"]["gen_rollback"], variables, task)
        assert sorted(r["unit"] for r in rollback) == expect, (host, budget)


def test_rollout_settings_of_a_multi_node_model_are_a_warning(repo_copy: Path) -> None:
    model = repo_copy / "models/deepseek-v3-bf16.yaml"
    text = model.read_text()
    model.write_text(text + "rollout:\n  canary: 2\n")
    line = len(text.splitlines()) + 1
    for args in (("render", "--all"), ("ansible",)):
        result = _gen(*args, "--root", str(repo_copy))
        assert result.exit_code == 0, result.stderr
    assert f"models/deepseek-v3-bf16.yaml:{line}:1: warning[A003]: model 'deepseek-v3-bf16' is multi-node: its ranks " \
           "always restart together" in result.stderr, result.stderr


@pytest.mark.parametrize("written", ["1%", "25%", "100%", "5", " 5%", "05%", "5 %", "0%", "101%", "%", "5%%", "5.5%",
                                     "٥%", "25％", "1e3", ""])
def test_gen_and_the_editor_schema_agree_on_every_spelling_of_a_size(tmp_path: Path, written: str) -> None:
    """The editor's schema (schemas/rollout.schema.json, as committed) and gen check accept the
    same strings: ' 5%' and '05%' passed gen while the editor flagged them."""
    schema = json.loads((Path(__file__).resolve().parents[1] / "schemas/rollout.schema.json").read_text())
    editor_ok = jsonschema.Draft202012Validator(schema).is_valid({"batch": written})
    (tmp_path / "rollout.yaml").write_text(f"batch: {json.dumps(written)}\n")
    diags = Diagnostics()
    load_rollout(tmp_path, diags)
    assert (not diags.sorted()) == editor_ok, (written, [str(d) for d in diags.sorted()])
    if not editor_ok:
        assert [d.code for d in diags.sorted()] == ["A001"], [str(d) for d in diags.sorted()]


def test_a_percentage_with_blanks_or_zeros_says_how_to_write_it(tmp_path: Path) -> None:
    (tmp_path / "rollout.yaml").write_text('batch: " 05 %"\n')
    diags = Diagnostics()
    load_rollout(tmp_path, diags)
    assert [str(d) for d in diags.sorted()] == [
        "rollout.yaml:1:8: error[A001]: 'batch' is a percentage written with blanks or leading zeros: "
        "write '5%', got ' 05 %'"]
