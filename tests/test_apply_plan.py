"""The plan `gen diff` ends with (generator/pipeline/apply_plan.py, generator/cli/plan_output.py):
which services are added, restart, are removed or only updated, on which hosts, and why."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from generator.cli import output
from generator.cli.main import main
from generator.cli.plan_output import plan_text
from generator.emit.writer import Action, Change
from generator.load.rollout import RolloutSettings
from generator.pipeline.apply_plan import (ADD, REMOVE, RESTART, ApplyPlan, HostPlan, ServicePlan, env_reason,
                                           plan_apply, rollout_steps, unit_reason)
from generator.plan.rollout import RolloutPlan, Wave


def _diff(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["diff", "--root", str(repo), *args])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stdout


def _plan(repo: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["diff", "--root", str(repo), "--format", "json", *args])
    return json.loads(result.stdout)["plan"]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _tail(stdout: str) -> list[str]:
    return stdout.split("\nPlan: what applying output/ does on the hosts\n")[1].splitlines()[1:]


def test_a_current_tree_plans_nothing(repo_copy: Path) -> None:
    assert _diff(repo_copy) == (0, "No changes. output/ matches the sources: applying it restarts nothing.\n")
    plan = _plan(repo_copy)
    assert plan == {"hosts": [], "counts": {"add": 0, "restart": 0, "remove": 0, "update": 0}, "rollout": None,
                    "summary": "No changes. output/ matches the sources: applying it restarts nothing."}


def test_a_model_change_restarts_its_services_and_names_the_flag(repo_copy: Path) -> None:
    _edit(repo_copy / "models/qwen3.5-122b-a10b.yaml", "mem_fraction_static: 0.85", "mem_fraction_static: 0.8")
    code, stdout = _diff(repo_copy)
    assert code == 1
    assert _tail(stdout) == [
        "", "llm-two:", "  ~ sglang-qwen.service  restart: unit: ExecStart (--mem-fraction-static)", "",
        "Rollout (site.yml, in order; a batch without changes runs and changes nothing):",
        "  wave 2 (qwen3.5-122b-a10b): 1 batch(es), changes in 1", "    batch 1 (1 host(s)): llm-two", "",
        "Hosts affected: 1: llm-two (1 to restart)", "Batches affected: 1 of 3.",
        "Plan: 0 to add, 1 to restart, 0 to remove."]


def test_an_environment_change_names_the_variables(repo_copy: Path) -> None:
    _edit(repo_copy / "hosts/llm-two.yaml", "    gpus: [0, 1, 2, 3]\n",
          "    gpus: [0, 1, 2, 3]\n    env: {NCCL_DEBUG: WARN}\n")
    (service,) = _plan(repo_copy)["hosts"][0]["services"]
    assert (service["action"], service["reasons"]) == ("restart", ["environment: NCCL_DEBUG"])
    assert service["files"] == ["output/llm-two/etc/sglang/qwen.env"]


def test_a_new_a_removed_and_a_disabled_service(repo_copy: Path) -> None:
    (repo_copy / "models/small.yaml").write_text("name: small\nweights: {path: /shared/models/small, size_gb: 10}\n")
    host = repo_copy / "hosts/llm-two.yaml"
    _edit(host, "gpus: [4, 5, 6, 7]", "gpus: [5, 6, 7]")
    _edit(host, "    gpus: [0, 1, 2, 3]\n", "    gpus: [0, 1, 2, 3]\n  - {name: small, model: small, port: 30001, gpus: [4]}\n")
    code, stdout = _diff(repo_copy)
    assert code == 1 and _tail(stdout)[1:3] == [
        "llm-two:", "  + sglang-small.service  add: a new service: installed and started"]
    # the new service rendered; then disabled, then the first one dropped
    CliRunner().invoke(main, ["render", "--all", "--root", str(repo_copy)])
    _edit(host, "port: 30001, gpus: [4]}", "port: 30001, gpus: [4], enabled: false, env: {A: b}}")
    _edit(host, "  - name: qwen\n    model: qwen3.5-122b-a10b\n    port: 30000\n    listen: 127.0.0.1\n"
                "    gpus: [0, 1, 2, 3]\n", "")
    code, stdout = _diff(repo_copy)
    assert _tail(stdout) == [
        "", "llm-two:",
        "  - sglang-qwen.service   remove: no longer rendered: stopped, disabled and its files removed",
        "  = sglang-small.service  update, no restart: environment: A; enabled: false: its files are updated, "
        "it is not started", "",
        "Rollout (site.yml, in order; a batch without changes runs and changes nothing):",
        "  prepare (every host at once): removes services on llm-two", "",
        "Hosts affected: 1: llm-two (1 to remove, 1 to update)", "Batches affected: 0 of 3.",
        "Plan: 0 to add, 0 to restart, 1 to remove. 1 to update without a restart (enabled: false)."]


def test_a_removed_host_removes_its_services(repo_copy: Path) -> None:
    (repo_copy / "hosts/llm-two-full.yaml").unlink()
    (host,) = _plan(repo_copy)["hosts"]
    assert host["host"] == "llm-two-full"
    assert [(s["service"], s["action"]) for s in host["services"]] == [("kimi", "remove")]
    assert host["other_files"] == [{"path": "output/llm-two-full/usr/local/libexec/gen/sglang-wait-ready",
                                    "action": "removed"}]


def test_every_rank_of_a_multinode_group_restarts_when_one_changes(repo_copy: Path) -> None:
    """The playbook restarts all ranks together; the plan says so, also for a rank outside --host."""
    _edit(repo_copy / "hosts/gpu-a.yaml", "interface: enp26s0np0", "interface: eth9")
    for args in ((), ("--host", "gpu-a")):
        plan = _plan(repo_copy, *args)
        rows = [(h["host"], s["service"], s["action"], s["multinode_group"], s["reasons"]) for h in plan["hosts"]
                for s in h["services"]]
        assert rows == [
            ("gpu-a", "deepseek", "restart", "deepseek-v3-bf16", ["environment: GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME"]),
            ("gpu-b", "deepseek", "restart", "deepseek-v3-bf16", [
                "restarts with its multi-node group deepseek-v3-bf16: gpu-a/deepseek changed (every rank starts "
                "together)"])], args
        assert plan["summary"] == "Plan: 0 to add, 2 to restart, 0 to remove."


def test_a_comment_only_change_still_says_what_changed() -> None:
    old = "# Generated by gen 0.1.0\n[Service]\nExecStart=/p -m x \\\n  --tp 4\n"
    assert unit_reason(old, old.replace("0.1.0", "0.2.0")) == "unit: comments only"
    assert unit_reason(old, old.replace("--tp 4", "--tp 8")) == "unit: ExecStart (--tp)"
    assert unit_reason(old, old.replace("  --tp 4\n", "  --tp 4 \\\n  --ep 2\n")) == "unit: ExecStart (--ep)"
    assert unit_reason(old, old + "CPUAffinity=0-3\n") == "unit: CPUAffinity"
    assert env_reason("# c\nA=1\nB=2\n", "# c\nA=1\nB=3\nC=4\n") == "environment: B, C"
    assert env_reason("# c\nA=1\n", "# d\nA=1\n") == "environment: comments only"


def test_the_plan_of_changes_alone() -> None:
    """Without renders (nothing loaded): services are read from the paths; unknown ones are removed."""
    changes = [Change("h/etc/systemd/system/sglang-a.service", Action.REMOVED, "x", None),
               Change("h/etc/sglang/a.env", Action.REMOVED, "A=1\n", None),
               Change("h/.gen-managed", Action.UPDATED, "a", "b")]
    plan = plan_apply(changes, [], [], {})
    assert [(s.service, s.action, s.files) for s in plan.services] == [
        ("a", "remove", ("output/h/etc/systemd/system/sglang-a.service", "output/h/etc/sglang/a.env"))]
    assert plan.hosts[0].other_files == ()  # the managed list is gen's bookkeeping, no host file


def test_the_plan_is_painted_on_a_terminal_and_plain_otherwise(repo_copy: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _edit(repo_copy / "models/qwen3.5-122b-a10b.yaml", "mem_fraction_static: 0.85", "mem_fraction_static: 0.8")
    _, plain = _diff(repo_copy)
    assert "\x1b[" not in plain
    monkeypatch.setattr(output, "color_wanted", lambda stream=None: True)  # stdout as a terminal
    result = CliRunner().invoke(main, ["diff", "--root", str(repo_copy)], color=True)
    assert click.style("~ sglang-qwen.service", fg="yellow", bold=True) in result.stdout
    assert click.style("-  --mem-fraction-static 0.85 \\", fg="red") in result.stdout
    assert click.unstyle(result.stdout) == plain


def test_no_color_wins_over_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert output.color_wanted(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not output.color_wanted(Tty())


def test_text_from_the_repository_is_escaped_before_it_is_painted() -> None:
    plan = ApplyPlan((HostPlan("h\x1b[2J", (ServicePlan("h\x1b[2J", "a\x1b]8;;x", "restart", ("unit: X\x07",), ()),)),),
                     {"add": 0, "restart": 1, "remove": 0, "update": 0})
    text = plan_text(plan, click.style)
    assert "\x1b[2J" not in text and "\x1b]8" not in text and "\x07" not in text
    assert "h\\x1b[2J:" in click.unstyle(text)


# --- the batches of the playbook the changes fall in ----------------------------------------

def _svc(host: str, service: str, action: str, model: str, group: str | None = None) -> ServicePlan:
    return ServicePlan(host, service, action, (), (), True, group, model)


def test_the_changes_fall_in_the_batches_of_their_models_waves() -> None:
    """A wave restarts only its own models' services: a's change is another wave's; the
    multi-node group is one batch of all its ranks; a removal happens in prepare."""
    services = [_svc("a", "x", RESTART, "other"), _svc("b", "m1", RESTART, "m"), _svc("e", "m1", ADD, "m"),
                _svc("p", "g", RESTART, "g", "g"), _svc("q", "g", RESTART, "g", "g"), _svc("c", "old", REMOVE, "m")]
    by_host: dict[str, list[ServicePlan]] = {}
    for s in services:
        by_host.setdefault(s.host, []).append(s)
    counts = {a: sum(s.action == a for s in services) for a in (ADD, RESTART, REMOVE, "update")}
    plan = ApplyPlan(tuple(HostPlan(h, tuple(ss)) for h, ss in sorted(by_host.items())), counts)
    waves = (Wave(("m",), ("a", "b", "c", "d", "e"), (1, 2, 2), RolloutSettings()),
             Wave(("other",), ("a",), (1,), RolloutSettings(canary=0)))
    steps = rollout_steps(plan, RolloutPlan(waves, ()), {"g": ("p", "q"), "h": ("r", "s")})
    assert [(b.play, b.index, b.canary, b.hosts, b.changed) for b in steps.batches] == [
        ("multi-node g", 1, False, ("p", "q"), ("p", "q")),
        ("multi-node h", 1, False, ("r", "s"), ()),
        ("wave 1 (m)", 1, True, ("a",), ()),
        ("wave 1 (m)", 2, False, ("b", "c"), ("b",)),
        ("wave 1 (m)", 3, False, ("d", "e"), ("e",)),
        ("wave 2 (other)", 1, False, ("a",), ("a",))]
    assert steps.removed_in_prepare == ("c",)
    text = plan_text(plan, steps=steps).splitlines()
    start = text.index("Rollout (site.yml, in order; a batch without changes runs and changes nothing):")
    assert text[start + 1:] == [
        "  prepare (every host at once): removes services on c",
        "  multi-node g: 1 batch(es), changes in 1",
        "    batch 1 (2 host(s)): p, q",
        "  wave 1 (m): 3 batch(es), changes in 2",
        "    batch 2 (2 host(s)): b, and 1 host(s) without changes",
        "    batch 3 (2 host(s)): e, and 1 host(s) without changes",
        "  wave 2 (other): 1 batch(es), changes in 1",
        "    batch 1 (1 host(s)): a",
        "",
        "Hosts affected: 6: a (1 to restart), b (1 to restart), c (1 to remove), e (1 to add), p (1 to restart), "
        "q (1 to restart)",
        "Batches affected: 4 of 6.",
        "Plan: 1 to add, 4 to restart, 1 to remove."]


def test_the_json_lists_every_batch_and_the_ones_that_change(repo_copy: Path) -> None:
    """The example fleet: two waves (qwen has its own rollout:) and the multi-node group."""
    _edit(repo_copy / "hosts/llm-two.yaml", "    gpus: [0, 1, 2, 3]\n", "    gpus: [0, 1, 2, 3]\n    env: {A: b}\n")
    doc = _plan(repo_copy)["rollout"]
    assert [(b["play"], b["batch"], b["canary"], b["hosts"], b["changed"]) for b in doc["batches"]] == [
        ("multi-node deepseek-v3-bf16", 1, False, ["gpu-a", "gpu-b"], []),
        ("wave 1 (kimi-k2.5-eagle3)", 1, False, ["llm-two-full"], []),
        ("wave 2 (qwen3.5-122b-a10b)", 1, False, ["llm-two"], ["llm-two"])]
    assert (doc["affected"], doc["total"], doc["removed_in_prepare"]) == (1, 3, [])


def test_with_host_the_batches_are_not_known(repo_copy: Path) -> None:
    _edit(repo_copy / "models/qwen3.5-122b-a10b.yaml", "mem_fraction_static: 0.85", "mem_fraction_static: 0.8")
    code, stdout = _diff(repo_copy, "--host", "llm-two")
    assert code == 1 and "Rollout (" not in stdout and "Batches affected" not in stdout
    assert _plan(repo_copy, "--host", "llm-two")["rollout"] is None


def test_rollout_settings_with_errors_leave_the_batches_out_and_say_why(repo_copy: Path) -> None:
    (repo_copy / "rollout.yaml").write_text("canary: many\n")
    _edit(repo_copy / "models/qwen3.5-122b-a10b.yaml", "mem_fraction_static: 0.85", "mem_fraction_static: 0.8")
    result = CliRunner().invoke(main, ["diff", "--root", str(repo_copy)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "rollout.yaml:1:" in result.stderr and "Batches affected" not in result.stdout
