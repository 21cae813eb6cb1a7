"""``gen verify``, ``gen status`` and ``gen preflight``: the live host against the render.

Each command renders in memory (nothing is written), reaches the host at its
inventory address over ssh (``--ssh-config`` for the operator's ssh config) and
prints one line per check; failures carry their evidence. Exit 1 on any failure,
3 when a host cannot be reached.
"""

from __future__ import annotations

from pathlib import Path

import click

from .cli_common import ENV_FAILURE, EXIT_CODES_HELP, guard, report, root_option
from .errors import ExitCode, GenError
from .live.journal import status_text, unit_state
from .live.plan import HostPlan, host_plan
from .live.preflight import preflight_host
from .live.target import HostUnreachableError, shared_connection, target_for
from .live.verify import verify_host
from .pipeline import run


class UnknownServiceError(GenError, KeyError):
    """``--service`` names no service of the host."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


ssh_config_option = click.option(
    "--ssh-config", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
    help="ssh client config for reaching the hosts (identity, port, aliases).")


def _plans(root: Path, hosts: list[str] | None) -> list[HostPlan] | None:
    """Render the hosts in memory; None (after printing diagnostics) when the sources are bad."""
    rendered = run(root, hosts)
    report(rendered.diagnostics)
    if not rendered.ok:
        return None
    return [host_plan(r) for r in rendered.renders]


def _check_service(plan: HostPlan, service: str | None) -> None:
    if service is not None and service not in {s.name for s in plan.services}:
        known = ", ".join(s.name for s in plan.services) or "none"
        raise UnknownServiceError(f"host '{plan.name}' has no service '{service}' (known: {known})")


@click.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", help="Verify this host (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Verify every host in hosts/.")
@ssh_config_option
@root_option
@guard
def verify(host: tuple[str, ...], all_hosts: bool, ssh_config: Path | None, root: Path) -> int:
    """Check that the live host runs exactly what gen renders (pytest-testinfra over ssh)."""
    if bool(host) == all_hosts:
        raise click.UsageError("give --host NAME or --all")
    plans = _plans(root, list(host) or None)
    if plans is None:
        return ExitCode.FINDINGS
    failed = unreachable = False
    for plan in plans:
        try:
            rep = verify_host(plan, target_for(plan, ssh_config))
        except HostUnreachableError as exc:
            click.echo(f"FAIL {plan.name} - ssh: {exc}")
            unreachable = True
            continue
        for res in rep.results:
            click.echo(res.render())
        for _name, text in rep.service_status:
            click.echo(text)
        passed = sum(not r.failed for r in rep.results)
        click.echo(f"gen: {plan.name}: {passed} passed, {len(rep.results) - passed} failed")
        failed = failed or rep.failed
    return ExitCode.FINDINGS if failed else ENV_FAILURE if unreachable else ExitCode.OK


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


def register_live_commands(main: click.Group) -> None:
    """Add ``gen verify``, ``gen status`` and ``gen preflight`` to the top-level group."""
    for command in (verify, status, preflight):
        main.add_command(command)
