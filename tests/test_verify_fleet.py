"""``gen verify`` over a fleet without hosts: the summary table, exit codes, ordering, inventory.

The live run against two real systemd hosts is tests/live/test_ansible_apply.py. Here the
per-host verifier is a stand-in (``standin_verify``: reports made from CheckResults, with a
sleep so hosts finish out of order), and the Ansible inventory is read by the real
``ansible-inventory`` from ansible-core.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.live.fleet import (
    HostOutcome,
    fleet_exit_code,
    summary_table,
    verify_fleet,
)
from generator.live.inventory import InventoryError, inventory_target, load_inventory
from generator.live.plan import HostPlan, host_plan
from generator.live.results import result
from generator.live.target import HostUnreachableError, Target
from generator.live.verify import HostReport
from generator.pipeline.fleet import run


def _report(host: str, passed: int, failed: int) -> HostReport:
    results = [result(True, host, "-", f"ok-{i}") for i in range(passed)]
    results += [result(False, host, "qwen", f"bad-{i}", "evidence") for i in range(failed)]
    return HostReport(host, tuple(results), ())


def _outcome(host: str, passed: int, failed: int, seconds: float) -> HostOutcome:
    return HostOutcome(host, _report(host, passed, failed), "", seconds)


def test_summary_table_lines_up_and_counts() -> None:
    outcomes = [_outcome("gpu-a", 31, 0, 2.04), _outcome("llm-two-full", 29, 2, 12.5),
                HostOutcome("gpu-b", None, "cannot reach gpu-b at 10.0.0.2 over ssh", 10.0)]
    assert summary_table(outcomes).splitlines() == [
        "host          passed  failed  seconds  result",
        "gpu-a             31       0      2.0  ok",
        "llm-two-full      29       2     12.5  FAILED",
        "gpu-b              -       -     10.0  UNREACHABLE",
        "gen: 3 host(s): 1 ok, 1 failed, 1 unreachable; 60 check(s) passed, 2 failed",
    ]


def test_exit_code_is_1_on_any_failed_check_else_3_when_unreachable_else_0() -> None:
    ok, bad = _outcome("a", 3, 0, 1.0), _outcome("b", 2, 1, 1.0)
    gone = HostOutcome("c", None, "ssh failed", 1.0)
    assert fleet_exit_code([ok, ok]) == 0
    assert fleet_exit_code([ok, bad]) == 1
    assert fleet_exit_code([ok, gone]) == 3
    assert fleet_exit_code([gone, bad]) == 1  # a failed check outranks an unreachable host
    assert fleet_exit_code([]) == 0


def test_progress_line_per_finished_host() -> None:
    assert _outcome("gpu-a", 31, 1, 4.21).progress_line(3, 40) == "[3/40] gpu-a: FAILED, 31 passed, 1 failed (4.2 s)"
    gone = HostOutcome("gpu-b", None, "ssh: timeout", 10.0)
    assert gone.progress_line(4, 40) == "[4/40] gpu-b: UNREACHABLE (10.0 s): ssh: timeout"


@pytest.fixture
def plans(repo_root: Path) -> list[HostPlan]:
    rendered = run(repo_root, None)
    assert rendered.ok
    return [host_plan(r) for r in rendered.renders]


def test_hosts_run_in_parallel_and_come_back_in_input_order(plans: list[HostPlan]) -> None:
    """Four hosts, two jobs: never more than two at once, progress in finishing order."""
    delays = {p.name: 0.05 * (len(plans) - i) for i, p in enumerate(plans)}  # the first finishes last
    running, peak, lock = [0], [0], threading.Lock()

    def standin_verify(plan: HostPlan, target: Target) -> HostReport:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(delays[plan.name])
        with lock:
            running[0] -= 1
        if plan.name == "gpu-b":
            raise HostUnreachableError(f"cannot reach {plan.name} at {target.address} over ssh")
        return _report(plan.name, 5, 1 if plan.name == "llm-two" else 0)

    seen: list[tuple[str, int, int]] = []
    work = [(p, Target(p.address)) for p in plans]
    outcomes = verify_fleet(work, 2, lambda o, done, total: seen.append((o.host, done, total)),
                            check=standin_verify)
    assert [o.host for o in outcomes] == [p.name for p in plans]
    assert peak[0] == 2
    assert [d for _, d, _ in seen] == list(range(1, len(plans) + 1)) and {t for _, _, t in seen} == {len(plans)}
    assert [h for h, _, _ in seen] != [p.name for p in plans]  # finishing order, not input order
    verdicts = {o.host: o.verdict for o in outcomes}
    assert verdicts == {p.name: "FAILED" if p.name == "llm-two" else "UNREACHABLE" if p.name == "gpu-b" else "ok"
                        for p in plans}
    assert fleet_exit_code(outcomes) == 1


def test_a_bug_in_a_check_is_not_hidden_as_a_host_failure(plans: list[HostPlan]) -> None:
    def standin_verify(plan: HostPlan, target: Target) -> HostReport:
        raise ZeroDivisionError("a bug")

    with pytest.raises(ZeroDivisionError):
        verify_fleet([(plans[0], Target(plans[0].address))], 2, check=standin_verify)


@pytest.fixture
def ansible_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANSIBLE_HOME", str(tmp_path / "ansible-home"))
    monkeypatch.setenv("ANSIBLE_LOCAL_TEMP", str(tmp_path / "ansible-home/tmp"))
    for var in ("ANSIBLE_REMOTE_USER", "ANSIBLE_REMOTE_PORT", "ANSIBLE_PRIVATE_KEY_FILE",
                "ANSIBLE_SSH_COMMON_ARGS", "ANSIBLE_SSH_EXTRA_ARGS", "ANSIBLE_HOST_KEY_CHECKING", "ANSIBLE_CONFIG"):
        monkeypatch.delenv(var, raising=False)


INVENTORY = """\
all:
  vars:
    ansible_ssh_common_args: "-o UserKnownHostsFile=/dev/null -o 'ProxyJump bastion.example'"
  children:
    sglang_hosts:
      hosts:
        gpu-a:
          ansible_host: 10.1.2.3
          ansible_port: 2222
          ansible_user: deploy
          ansible_ssh_private_key_file: ~/.ssh/fleet
        gpu-b:
    other:
      hosts:
        bare:
          ansible_connection: local
"""


def test_inventory_is_read_by_ansible_and_becomes_ssh_targets(tmp_path: Path, ansible_env: None) -> None:
    path = tmp_path / "inventory.yml"
    path.write_text(INVENTORY)
    hosts = load_inventory(path)
    assert set(hosts) == {"gpu-a", "gpu-b", "bare"}
    a = inventory_target("gpu-a", hosts["gpu-a"])
    assert (a.address, a.port, a.user) == ("10.1.2.3", 2222, "deploy")
    assert a.identity_file == str(Path("~/.ssh/fleet").expanduser())
    assert a.ssh_args == ("-o", "UserKnownHostsFile=/dev/null", "-o", "ProxyJump bastion.example")  # group vars
    assert a.ssh_argv()[-4:] == ["-o", "ProxyJump bastion.example", "--", "10.1.2.3"]
    b = inventory_target("gpu-b", hosts["gpu-b"], environ={"ANSIBLE_REMOTE_USER": "ops", "ANSIBLE_REMOTE_PORT": "23",
                                                           "ANSIBLE_HOST_KEY_CHECKING": "False"})
    assert (b.address, b.port, b.user) == ("gpu-b", 23, "ops")  # the inventory name is the address
    assert b.ssh_args[-2:] == ("-o", "StrictHostKeyChecking=no")
    # Host variables win over the environment, as in Ansible.
    assert inventory_target("gpu-a", hosts["gpu-a"], environ={"ANSIBLE_REMOTE_USER": "ops"}).user == "deploy"
    with pytest.raises(InventoryError, match="ansible_connection=local"):
        inventory_target("bare", hosts["bare"])
    with pytest.raises(InventoryError, match="is a template"):
        inventory_target("x", {"ansible_host": "{{ lookup('env', 'H') }}"})


def test_unsafe_values_of_a_generated_inventory_are_taken_as_written(tmp_path: Path, ansible_env: None) -> None:
    """`gen ansible` tags every value !unsafe; ansible-inventory prints them wrapped, gen unwraps them."""
    path = tmp_path / "inventory.yml"
    path.write_text('all:\n  hosts:\n    gpu-a:\n      ansible_host: !unsafe "10.1.2.3"\n'
                    '      ansible_user: !unsafe "deploy"\n      ansible_ssh_common_args: !unsafe "-o X={{ y }}"\n')
    hosts = load_inventory(path)
    target = inventory_target("gpu-a", hosts["gpu-a"])
    assert (target.address, target.user) == ("10.1.2.3", "deploy")
    assert target.ssh_args == ("-o", "X={{", "y", "}}")  # data, never evaluated nor refused


def test_unparsable_inventory_is_an_environment_failure(tmp_path: Path, ansible_env: None) -> None:
    path = tmp_path / "inventory.yml"
    path.write_text("all: [this, is, not, an, inventory\n")
    with pytest.raises(InventoryError, match="ansible-inventory"):
        load_inventory(path)


def test_verify_refuses_hosts_the_inventory_does_not_list(repo_root: Path, tmp_path: Path,
                                                          ansible_env: None) -> None:
    path = tmp_path / "inventory.yml"
    path.write_text("all:\n  hosts:\n    gpu-a:\n      ansible_host: 127.0.0.1\n")
    out = CliRunner().invoke(main, ["verify", "--all", "--inventory", str(path), "--root", str(repo_root)])
    assert out.exit_code == 2, out.output
    assert "does not list host(s) gpu-b, llm-two, llm-two-full" in out.stderr


def test_unreachable_hosts_each_get_a_row_and_exit_3(repo_root: Path, tmp_path: Path, ansible_env: None) -> None:
    """Every host points at a port nothing listens on (127.0.0.1:1): no check runs, exit 3."""
    path = tmp_path / "inventory.yml"
    path.write_text("all:\n  hosts:\n" + "".join(
        f"    {name}:\n      ansible_host: 127.0.0.1\n      ansible_port: 1\n"
        for name in ("gpu-a", "gpu-b", "llm-two", "llm-two-full")))
    out = CliRunner().invoke(main, ["verify", "--all", "--inventory", str(path), "--jobs", "4",
                                    "--root", str(repo_root)])
    assert out.exit_code == 3, out.output
    progress = [ln for ln in out.stderr.splitlines() if ln.startswith("[")]
    assert sorted(ln.split("]")[0] for ln in progress) == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert all("UNREACHABLE" in ln for ln in progress)
    table = out.stdout.splitlines()[-6:]
    assert table[0].split() == ["host", "passed", "failed", "seconds", "result"]
    assert [row.split()[0] for row in table[1:5]] == ["gpu-a", "gpu-b", "llm-two", "llm-two-full"]
    assert all(row.split()[1:3] == ["-", "-"] and row.endswith("UNREACHABLE") for row in table[1:5])
    assert table[5] == "gen: 4 host(s): 0 ok, 0 failed, 4 unreachable; 0 check(s) passed, 0 failed"

