"""``gen verify``, ``gen status`` and ``gen preflight``: the live host against the render.

Each command renders in memory (nothing is written), reaches the host at its
inventory address over ssh (``--ssh-config`` for the operator's ssh config) and
prints one line per check; failures carry their evidence. Exit 1 on any failure,
3 when a host cannot be reached. ``gen verify --inventory FILE`` reaches the hosts the
way an Ansible inventory says and checks many hosts in parallel (``--jobs``).
"""

from __future__ import annotations

from pathlib import Path

import click

from generator.cli import complete, output
from generator.cli.common import (EXIT_CODES_HELP, JOBS, MAX_JOBS, RegularFile, guard, output_options, report_run, root_option)
from generator.errors import ExitCode, GenError
from generator.live.fleet import HostOutcome, fleet_exit_code, summary_table, verify_fleet
from generator.live.inventory import inventory_target, load_inventory
from generator.live.journal import status_text, unit_state
from generator.live.plan import HostPlan, host_plan
from generator.live.preflight import preflight_host
from generator.live.rollouts import last_rollout, outcome_line
from generator.live.results import CheckResult
from generator.live.target import HostUnreachableError, Target, shared_connection, target_for
from generator.pipeline.fleet import run_fleet

DEFAULT_JOBS = 8  # hosts verified at once: each is one ssh connection, mostly waiting


class UnknownServiceError(GenError, KeyError):
    """``--service`` names no service of the host, or ``--inventory`` no such host (exit 2)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


ssh_config_option = click.option(
    "--ssh-config", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
    help="ssh client config for reaching the hosts (identity, port, aliases).")


def _plans(root: Path, hosts: list[str] | None) -> list[HostPlan] | None:
    """Render the hosts in memory; None (after printing diagnostics) when the sources are bad."""
    rendered = run_fleet(root, hosts, detail=True)
    report_run(rendered)
    if not rendered.ok:
        return None
    return [host_plan(r) for r in rendered.renders]


def check_json(res: CheckResult) -> dict[str, str]:
    """One live check as ``--format json`` carries it."""
    return {"status": res.status.value, "host": res.host, "service": res.service, "check": res.check,
            "detail": res.detail, "evidence": res.evidence}


def _outcome_json(outcome: HostOutcome) -> dict[str, object]:
    report_ = outcome.report
    return {"host": outcome.host, "verdict": outcome.verdict, "passed": outcome.passed,
            "failed": outcome.failed, "seconds": round(outcome.seconds, 3), "error": outcome.error or None,
            "checks": [check_json(r) for r in report_.results] if report_ else [],
            "service_status": {name: text for name, text in report_.service_status} if report_ else {}}


def _check_service(plan: HostPlan, service: str | None) -> None:
    if service is not None and service not in {s.name for s in plan.services}:
        known = ", ".join(s.name for s in plan.services) or "none"
        raise UnknownServiceError(f"host '{plan.name}' has no service '{service}' (known: {known})")


def _targets(plans: list[HostPlan], inventory: Path | None, ssh_config: Path | None) -> list[Target]:
    """Each plan's ssh target: from the Ansible inventory when given, else from hosts/."""
    if inventory is None:
        return [target_for(plan, ssh_config) for plan in plans]
    hosts = load_inventory(inventory)
    missing = [p.name for p in plans if p.name not in hosts]
    if missing:
        raise UnknownServiceError(f"{inventory} does not list host(s) {', '.join(missing)} "
                                  f"(it lists {len(hosts)}: run `gen ansible` again, or pick hosts with --host)")
    return [inventory_target(p.name, hosts[p.name], ssh_config) for p in plans]


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", shell_complete=complete.host_names,
              help="Verify this host (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Verify every host in hosts/.")
@click.option("--inventory", type=RegularFile(path_type=Path), default=None,
              help="Reach the hosts as this Ansible inventory says (e.g. ansible/inventory.yml from "
                   "`gen ansible`): ansible_host, ansible_port, ansible_user, private key, ssh args.")
@click.option("--jobs", "-j", type=JOBS, default=DEFAULT_JOBS, show_default=True,
              help=f"Check this many hosts at once (1 to {MAX_JOBS}).")
@ssh_config_option
@root_option
@output_options(output.JSON)
@guard
def verify(host: tuple[str, ...], all_hosts: bool, inventory: Path | None, jobs: int,
           ssh_config: Path | None, root: Path) -> int:
    """Check that the live hosts run exactly what gen renders (pytest-testinfra over ssh).

    One line per check, in host order, failures with their evidence. With more than one
    host, hosts are checked in parallel (--jobs), a line per finished host goes to stderr,
    and a table (host, passed, failed, seconds, result) ends the output.
    """
    if bool(host) == all_hosts:
        raise click.UsageError("give --host NAME or --all")
    plans = _plans(root, list(host) or None)
    if plans is None:
        return ExitCode.FINDINGS
    targets = _targets(plans, inventory, ssh_config)
    many = len(plans) > 1
    out = output.current()

    def progress(outcome: HostOutcome, done: int, total: int) -> None:
        if many:
            out.say(outcome.progress_line(done, total), err=True)

    outcomes = verify_fleet(list(zip(plans, targets, strict=True)), jobs, progress)
    out.results["hosts"] = [_outcome_json(o) for o in outcomes]
    for outcome in outcomes:
        if outcome.report is None:
            out.data(f"FAIL {outcome.host} - ssh: {outcome.error}")
            continue
        for res in outcome.report.results:
            if res.failed or res.warned:
                out.data(res.render())  # -q: failures and warnings only
            else:
                out.say(res.render())
        for _name, text in outcome.report.service_status:
            out.data(text)
        out.say(f"gen: {outcome.host}: {outcome.passed} passed, {outcome.failed} failed")
    if many:
        out.say(summary_table(outcomes))
    return fleet_exit_code(outcomes)


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--host", required=True, metavar="NAME", shell_complete=complete.host_names, help="The host to ask.")
@click.option("--service", metavar="NAME", default=None, shell_complete=complete.service_names,
              help="Only this service (journal always shown).")
@ssh_config_option
@root_option
@output_options(output.JSON)
@guard
def status(host: str, service: str | None, ssh_config: Path | None, root: Path) -> int:
    """systemd state of each service and its last rollout's outcome (kept on the host by the
    playbook); a failing one's journal since its last start, in full."""
    plans = _plans(root, [host])
    if plans is None:
        return ExitCode.FINDINGS
    plan = plans[0]
    _check_service(plan, service)
    unhealthy = False
    out = output.current()
    rows: list[dict[str, object]] = out.results.setdefault("services", [])
    try:
        with shared_connection(target_for(plan, ssh_config)) as infra:
            for svc in plan.services:
                if service is not None and svc.name != service:
                    continue
                state = unit_state(infra, svc.unit)
                unhealthy = unhealthy or not state.healthy
                outcome = last_rollout(infra, svc.unit)
                text = status_text(infra, state, with_journal=service is not None)
                # The last rollout's outcome, kept on the host by the playbook, under the summary.
                first, _, rest = text.partition("\n")
                text = f"{first}\n  {outcome_line(outcome)}" + (f"\n{rest}" if rest else "")
                rows.append({"service": svc.name, "unit": svc.unit, "healthy": state.healthy,
                             "state": dict(state.props), "last_rollout": outcome, "text": text})
                if state.healthy:
                    out.say(text)
                else:
                    out.data(text)
    except RuntimeError as exc:  # testinfra raises on ssh's 255
        raise HostUnreachableError(f"cannot reach {plan.name} at {plan.address} over ssh: {exc}") from exc
    return ExitCode.FINDINGS if unhealthy else ExitCode.OK


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--host", required=True, metavar="NAME", shell_complete=complete.host_names, help="The host to run on.")
@click.option("--service", metavar="NAME", default=None, shell_complete=complete.service_names,
              help="Only this service.")
@click.option("--sandbox", is_flag=True, default=False,
              help="Only the sandbox check: a probe in each rendered unit's own sandbox (systemd-run).")
@ssh_config_option
@root_option
@output_options(output.JSON)
@guard
def preflight(host: str, service: str | None, sandbox: bool, ssh_config: Path | None, root: Path) -> int:
    """On the host, its own SGLang parses and validates the rendered argv; checkpoints checked.

    With --sandbox instead: each rendered unit's sandbox (User, DevicePolicy/DeviceAllow,
    Protect*, paths, SystemCallFilter, NUMA/CPU affinity, environment files, credentials)
    is rebuilt with systemd-run, and a probe in it opens the placed GPUs' /dev/nvidia*
    nodes, initializes CUDA where torch is importable, reads the model folder and writes
    the cache folders.
    """
    plans = _plans(root, [host])
    if plans is None:
        return ExitCode.FINDINGS
    plan = plans[0]
    _check_service(plan, service)
    if sandbox:
        from generator.live.sandbox import sandbox_host  # only this option needs it

        rep = sandbox_host(plan, target_for(plan, ssh_config), service)
    else:
        rep = preflight_host(plan, target_for(plan, ssh_config), service)
    out = output.current()
    out.results.update(host=rep.host, checks=[check_json(r) for r in rep.results], notes=list(rep.notes))
    for res in rep.results:
        if res.failed:
            out.data(res.render())
        else:
            out.say(res.render())
    for note in rep.notes:
        out.say(f"note: {note}")
    return ExitCode.FINDINGS if rep.failed else ExitCode.OK
