"""The ``gen`` command line: click, output and exit codes only; the work is in the modules.

Exit codes: see ``generator.cli.common.EXIT_CODES_HELP`` (printed by ``gen --help``; also in the README).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from generator import __version__
from generator.cli.common import EXIT_CODES_HELP, JOBS, MAX_JOBS, guard, report, root_option
from generator.errors import ExitCode
from generator.pipeline.fleet import RenderResult, run_fleet
from generator.emit.writer import apply, unified_diff

# Commands beyond render/diff/check live in their own modules and are imported only when
# they run (or for --help): `gen check` in a pre-commit hook does not pay for SSH,
# testinfra, Ansible and import machinery.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "ansible": ("generator.cli.ansible", "ansible_command"),
    "import": ("generator.cli.sglang", "import_command"),
    "preflight": ("generator.cli.live", "preflight"),
    "sglang": ("generator.cli.sglang", "sglang"),
    "status": ("generator.cli.live", "status"),
    "verify": ("generator.cli.live", "verify"),
}


class LazyGroup(click.Group):
    """A click group whose listed commands in LAZY_COMMANDS load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attr = LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gen")
def main() -> None:
    """Render version-pinned SGLang systemd services from models/ and hosts/."""


def _hosts(host: tuple[str, ...], all_hosts: bool, required: bool) -> list[str] | None:
    if host and all_hosts:
        raise click.UsageError("give --host or --all, not both")
    if not host and not all_hosts and required:
        raise click.UsageError("give --host NAME or --all")
    return list(host) if host else None


# Per-host work runs in a process pool; output is the same for any N.
jobs_option = click.option("--jobs", "-j", type=JOBS, default=None, metavar="N",
                           help=f"Render N hosts at once, 1 to {MAX_JOBS} (default: one per CPU).")


def _render(root: Path, hosts: list[str] | None, jobs: int | None, detail: bool = False) -> RenderResult:
    result = run_fleet(root, hosts, jobs=jobs, detail=detail)
    for notice in result.notices:
        click.echo(f"gen: warning: {notice}", err=True)
    report(result.diagnostics)
    return result


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", help="Render this host (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Render every host in hosts/.")
@root_option
@jobs_option
@guard
def render(host: tuple[str, ...], all_hosts: bool, root: Path, jobs: int | None) -> int:
    """Validate, then write output/<host>/ atomically; print what changed per file."""
    result = _render(root, _hosts(host, all_hosts, required=True), jobs)
    if not result.ok:
        click.echo("gen: nothing written", err=True)
        return ExitCode.FINDINGS
    apply(root / "output", result.changes)
    for change in result.changes:
        click.echo(f"{change.action.value:9} output/{change.path}")
    return ExitCode.OK


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", help="Only this host (repeatable).")
@root_option
@jobs_option
@guard
def diff(host: tuple[str, ...], root: Path, jobs: int | None) -> int:
    """Show a unified diff between output/ and a fresh render; writes nothing."""
    result = _render(root, list(host) or None, jobs)
    if not result.ok:
        return ExitCode.FINDINGS
    text = unified_diff(result.changes)
    click.echo(text, nl=False)
    return ExitCode.FINDINGS if result.dirty else ExitCode.OK


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--sglang", "pin", metavar="PIN",
              help="Instead: check every service against SGLang PIN (upgrade impact); "
                   "lists each service that would break, with file, line and fix.")
@root_option
@jobs_option
@guard
def check(root: Path, pin: str | None, jobs: int | None) -> int:
    """Validate everything and fail when output/ is not current (for CI and pre-commit)."""
    if pin is not None:
        from generator.cli.sglang import check_pin  # only upgrade checks need it

        return check_pin(root, pin)
    ansible_dir = root / "ansible"
    # The Ansible files need every host as loaded, which the render cache does not keep.
    result = _render(root, None, jobs, detail=ansible_dir.is_dir())
    if not result.ok:
        return ExitCode.FINDINGS
    for change in result.dirty:
        click.echo(f"gen: output/{change.path} would be {change.action.value}", err=True)
    if result.dirty:
        click.echo("gen: output/ is not current; run `gen render --all`", err=True)
        return ExitCode.FINDINGS
    if ansible_dir.is_dir():
        from generator.cli.ansible import ansible_actions  # only a repo with ansible/ needs it

        stale = [(path, action) for path, _, action in ansible_actions(root, result, ansible_dir)
                 if action != "unchanged"]
        for path, action in stale:
            click.echo(f"gen: {path.relative_to(root)} would be {action}", err=True)
        if stale:
            click.echo("gen: ansible/ is not current; run `gen ansible`", err=True)
            return ExitCode.FINDINGS
    click.echo(f"gen: {len(result.trees)} host(s) checked, output/ is current")
    return ExitCode.OK

