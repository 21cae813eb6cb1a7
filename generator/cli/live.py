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

from generator.cli.common import EXIT_CODES_HELP, JOBS, MAX_JOBS, RegularFile, guard, report, root_option
from generator.errors import ExitCode, GenError
from generator.live.fleet import HostOutcome, fleet_exit_code, summary_table, verify_fleet
from generator.live.inventory import inventory_target, load_inventory
from generator.live.journal import status_text, unit_state
from generator.live.plan import HostPlan, host_plan
from generator.live.preflight import preflight_host
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
    report(rendered.diagnostics)
    if not rendered.ok:
        return None
    return [host_plan(r) for r in rendered.renders]


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
@click.option("--host", multiple=True, metavar="NAME", help="Verify this host (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Verify every host in hosts/.")
@click.option("--inventory", type=RegularFile(path_type=Path), default=None,
              help="Reach the hosts as this Ansible inventory says (e.g. ansible/inventory.yml from "
                   "`gen ansible`): ansible_host, ansible_port, ansible_user, private key, ssh args.")
@click.option("--jobs", "-j", type=JOBS, default=DEFAULT_JOBS, show_default=True,
              help=f"Check this many hosts at once (1 to {MAX_JOBS}).")
@ssh_config_option
@root_option
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

    def progress(outcome: HostOutcome, done: int, total: int) -> None:
        if many:
            click.echo(outcome.progress_line(done, total), err=True)

    outcomes = verify_fleet(list(zip(plans, targets)), jobs, progress)
    for outcome in outcomes:
        if outcome.report is None:
            click.echo(f"FAIL {outcome.host} - ssh: {outcome.error}")
            continue
        for res in outcome.report.results:
            click.echo(res.render())
        for _name, text in outcome.report.service_status:
            click.echo(text)
        click.echo(f"gen: {outcome.host}: {outcome.passed} passed, {outcome.failed} failed")
    if many:
        click.echo(summary_table(outcomes))
    return fleet_exit_code(outcomes)


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--host", required=True, metavar="NAME", help="The host to ask.")
@click.option("--service", metavar="NAME", default=None, help="Only this service (journal always shown).")
@ssh_config_option
@root_option
@guard
def status(host: str, service: str | None, ssh_config: Path | None, root: Path) -> int:
    """systemd state of each service; a failing one's journal since its last start, in full."""
    plans = _plans(root, [host])
    if plans is None:
        return ExitCode.FINDINGS
    plan = plans[0]
    _check_service(plan, service)
    unhealthy = False
    try:
        with shared_connection(target_for(plan, ssh_config)) as infra:
            for svc in plan.services:
                if service is not None and svc.name != service:
                    continue
                state = unit_state(infra, svc.unit)
                unhealthy = unhealthy or not state.healthy
                click.echo(status_text(infra, state, with_journal=service is not None))
    except RuntimeError as exc:  # testinfra raises on ssh's 255
        raise HostUnreachableError(f"cannot reach {plan.name} at {plan.address} over ssh: {exc}") from exc
    return ExitCode.FINDINGS if unhealthy else ExitCode.OK


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--host", required=True, metavar="NAME", help="The host to run on.")
@click.option("--service", metavar="NAME", default=None, help="Only this service.")
@ssh_config_option
@root_option
@guard
def preflight(host: str, service: str | None, ssh_config: Path | None, root: Path) -> int:
    """On the host, its own SGLang parses and validates the rendered argv; checkpoints checked."""
    plans = _plans(root, [host])
    if plans is None:
        return ExitCode.FINDINGS
    plan = plans[0]
    _check_service(plan, service)
    rep = preflight_host(plan, target_for(plan, ssh_config), service)
    for res in rep.results:
        click.echo(res.render())
    for note in rep.notes:
        click.echo(f"note: {note}")
    return ExitCode.FINDINGS if rep.failed else ExitCode.OK
