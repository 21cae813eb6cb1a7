"""The ``gen`` command line: click, output and exit codes only; the work is in the modules.

Exit codes: see ``generator.cli.common.EXIT_CODES_HELP`` (printed by ``gen --help``; also in the README).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from generator import __version__
from generator.cli import complete, output
from generator.cli.common import EXIT_CODES_HELP, JOBS, MAX_JOBS, guard, output_options, report, report_run, root_option
from generator.cli.generated import check_generated
from generator.load.captured import check_captured
from generator.errors import Diagnostic, Diagnostics, ExitCode, Position
from generator.pipeline.fleet import RenderResult, run_fleet
from generator.emit.writer import Action, Change, apply, unified_diff

# Commands beyond render/diff/check live in their own modules and are imported only when
# they run (or for --help): `gen check` in a pre-commit hook does not pay for SSH,
# testinfra, Ansible and import machinery.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "ansible": ("generator.cli.ansible", "ansible_command"),
    "host": ("generator.cli.host", "host"),
    "import": ("generator.cli.sglang", "import_command"),
    "model": ("generator.cli.model", "model"),
    "preflight": ("generator.cli.live", "preflight"),
    "schema": ("generator.cli.schema", "schema_command"),
    "show": ("generator.cli.show", "show"),
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
    # -v explains placements: it needs each host's full render (detail), not only its tree.
    result = run_fleet(root, hosts, jobs=jobs, detail=detail or output.current().verbose)
    for info in result.infos:
        output.current().say(f"gen: note: {info}", err=True)
    report_run(result)
    _note_snapshots(root)
    return result


def _note_snapshots(root: Path) -> None:
    """One info line naming the models whose checkpoint facts are unknown, and the command."""
    from generator.checkpoint.listing import missing_snapshots

    missing = missing_snapshots(root)
    if missing:
        output.current().say(f"gen: info: no checkpoint snapshot for model(s) {', '.join(missing)}: their "
                             "checkpoint checks were skipped; capture one with `gen model snapshot --model "
                             "NAME SOURCE` (catalogs/models/NAME.json)", err=True)


def _explain(root: Path, result: RenderResult) -> None:
    """-v: what placement, NUMA and defaults decided for each rendered host (stderr)."""
    if output.current().verbose and result.ok:
        from generator.cli.show import explain  # -v only

        explain(result)


# Enum .value is a property lookup; a fleet's 10,400 rows each need the name.
_ACTION_NAMES = {action: action.value for action in Action}


def _changes_json(changes: list[Change], with_diff: bool = False) -> list[dict[str, object]]:
    """Per file: its path under the repository and what applying does (and the diff, for diff)."""
    rows: list[dict[str, object]] = []
    for change in changes:
        row: dict[str, object] = {"path": f"output/{change.path}", "action": _ACTION_NAMES[change.action]}
        if with_diff:
            row["diff"] = unified_diff([change])
        rows.append(row)
    return rows


def _counts(changes: list[Change]) -> dict[str, int]:
    return {action.value: sum(c.action is action for c in changes) for action in Action}


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", shell_complete=complete.host_names,
              help="Render this host (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Render every host in hosts/.")
@root_option
@jobs_option
@output_options(output.JSON)
@guard
def render(host: tuple[str, ...], all_hosts: bool, root: Path, jobs: int | None) -> int:
    """Validate, then write output/<host>/ atomically; list what changed and a summary line.

    Unchanged files are listed too with -v. When ROOT/ansible/ exists, --all rewrites it
    from the same render (as `gen ansible` does); a render of some hosts that changed
    files says that ansible/ is now stale.
    """
    out = output.current()
    ansible_dir = root / "ansible"
    # The Ansible files need every host as loaded (placements, argv): a detail run.
    result = _render(root, _hosts(host, all_hosts, required=True), jobs, detail=all_hosts and ansible_dir.is_dir())
    out.results.update(written=False, hosts=[], files=[], counts={})
    if not result.ok:
        out.say("gen: nothing written", err=True)
        return ExitCode.FINDINGS
    _explain(root, result)
    apply(root / "output", result.changes)
    out.results.update(written=True, hosts=[t.host for t in result.trees],
                       files=_changes_json(result.changes), counts=_counts(result.changes))
    for change in result.changes:
        if change.action is not Action.UNCHANGED or out.verbose:
            out.say(f"{change.action.value:9} output/{change.path}")
    counts = _counts(result.changes)
    out.say(f"gen: {len(result.trees)} host(s): " + ", ".join(f"{n} {a}" for a, n in counts.items()))
    if ansible_dir.is_dir():
        _refresh_ansible(root, result, all_hosts)
    return ExitCode.OK


def _refresh_ansible(root: Path, result: RenderResult, all_hosts: bool) -> None:
    """After a render: rewrite ansible/ (--all), or say that it is stale (some hosts changed)."""
    out = output.current()
    if all_hosts:
        from generator.cli.ansible import rollout_for, write_ansible  # only a repo with ansible/ needs it

        plan, diags = rollout_for(root, result)
        report(diags)
        if plan is None:
            out.say("gen: ansible/ not rewritten (rollout.yaml has errors): it is now stale", err=True)
            out.results["ansible"] = "stale"
            return
        done, strays = write_ansible(root, result, root / "ansible", plan)
        if strays:
            report(strays)
            out.say("gen: ansible/ not rewritten (it holds entries gen does not write): it is now stale", err=True)
            out.results["ansible"] = "stale"
            return
        for path, action in done:
            if action != "unchanged" or out.verbose:
                out.say(f"{action:9} {path.relative_to(root)}")
        out.results["ansible"] = "refreshed"
    elif any(c.action is not Action.UNCHANGED for c in result.changes):
        # The playbook would refuse to run (its first task compares output/ with the digests).
        out.say("gen: ansible/ is now stale (written from the previous output/): run `gen ansible`, "
                "or `gen render --all`, which rewrites it", err=True)
        out.results["ansible"] = "stale"


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", shell_complete=complete.host_names,
              help="Only this host (repeatable).")
@root_option
@jobs_option
@output_options(output.JSON)
@guard
def diff(host: tuple[str, ...], root: Path, jobs: int | None) -> int:
    """Show a unified diff between output/ and a fresh render, then the plan; writes nothing.

    The plan says which services applying it adds, restarts and removes on which hosts,
    and why (the settings and variables that changed), in which batches of the playbook
    (rollout.yaml; not with --host), and ends with a summary line.
    """
    from generator.cli.ansible import rollout_for
    from generator.cli.plan_output import plan_json, plan_text
    from generator.pipeline.apply_plan import multinode_groups, plan_apply, rollout_steps

    out = output.current()
    out.results.update(files=[], counts={}, plan=None)
    # The plan needs each service's model and whether it is enabled: the full render (detail).
    result = _render(root, list(host) or None, jobs, detail=True)
    if not result.ok:
        return ExitCode.FINDINGS
    _explain(root, result)
    plan = plan_apply(result.changes, result.renders, result.hosts, result.models)
    steps = None
    if not host and not plan.empty:
        # The batches come from the whole fleet (a percentage is of every host of a wave):
        # with --host they are not known. Findings of rollout.yaml are gen check's too.
        rollout, rollout_diags = rollout_for(root, result)
        if rollout_diags:
            report(rollout_diags)
        steps = rollout_steps(plan, rollout, multinode_groups(result.renders)) if rollout is not None else None
    out.results.update(files=_changes_json(result.dirty, with_diff=True), counts=_counts(result.changes),
                       plan=plan_json(plan, steps))
    # Colored only when stdout is a terminal (and NO_COLOR is unset): a diff piped to a file
    # or a pager without -R stays plain text.
    color = output.color_wanted(sys.stdout)
    out.styled_data(output.diff_text(unified_diff(result.changes), color), nl=False)
    out.styled_data(plan_text(plan, click.style if color else output.unstyled, steps), nl=False)
    return ExitCode.FINDINGS if result.dirty else ExitCode.OK


@main.command(epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", shell_complete=complete.host_names,
              help="Only this host (repeatable): its sources and its output/ tree; the repository-wide "
                   "checks (schemas, docs, catalogs, ansible/, removed hosts) run without --host.")
@click.option("--sglang", "pin", metavar="PIN", shell_complete=complete.pins,
              help="Instead: check every service against SGLang PIN (upgrade impact); "
                   "lists each service that would break, with file, line and fix.")
@root_option
@jobs_option
@output_options(output.JSON, output.SARIF)
@guard
def check(host: tuple[str, ...], root: Path, pin: str | None, jobs: int | None) -> int:
    """Validate everything and fail when output/ or the generated schemas/docs are not current.

    For CI and pre-commit; --format sarif gives code scanning the findings by line. With
    --host, the hosts named (and the models they use) only, as render --host renders them.
    """
    out = output.current()
    if pin is not None:
        from generator.cli.sglang import check_pin  # only upgrade checks need it

        if host:
            raise click.UsageError("--sglang checks every service; give it without --host")
        return check_pin(root, pin)
    out.results.update(hosts=[], stale=[], current=False, scope=list(host) or None)
    if host:
        return _check_hosts(root, list(host), jobs)
    ansible_dir = root / "ansible"
    # The Ansible files need every host as loaded: the full render (detail).
    result = _render(root, None, jobs, detail=ansible_dir.is_dir())
    generated = check_generated(root)  # schemas/ and docs/manifests.md: checked even when sources are bad
    generated += check_captured(root)  # every catalogs/**/*.json proves its content (load/captured.py)
    report(generated)
    from generator.load.rollout import load_rollout  # rollout.yaml: checked whether or not ansible/ exists

    rollout_diags = Diagnostics()
    settings = load_rollout(root, rollout_diags)
    report(rollout_diags.sorted())
    if not result.ok or rollout_diags.has_errors:
        return ExitCode.FINDINGS
    _explain(root, result)
    stale = _stale(result)
    out.results.update(hosts=[t.host for t in result.trees], stale=_changes_json(result.dirty),
                       current=not result.dirty and not generated)
    if out.machine:
        out.diagnostics.extend(stale)
    for change in result.dirty:  # the error's detail: shown with -q too
        out.error_line(f"gen: output/{change.path} would be {change.action.value}")
    if result.dirty:
        out.fail("gen: output/ is not current; run `gen render --all`")
        return ExitCode.FINDINGS
    if ansible_dir.is_dir():
        from generator.cli.ansible import ansible_actions, ansible_strays, rollout_for  # only a repo with ansible/

        plan, plan_diags = rollout_for(root, result, settings)
        report(plan_diags)
        if plan is None:
            return ExitCode.FINDINGS
        actions = ansible_actions(root, result, ansible_dir, plan)
        stale_ansible = [(path, action) for path, _, action in actions if action != "unchanged"]
        strays = ansible_strays(ansible_dir, {path.name for path, _, _ in actions}, root)
        report(strays)  # a file beside gen's is read by Ansible too: O004
        out.results["current"] = out.results["current"] and not stale_ansible and not strays
        if out.machine:  # as O001 for output/: a positioned finding for JSON and SARIF readers
            out.diagnostics.extend(Diagnostic(Position(str(path.relative_to(root))), "O020",
                                              f"{path.relative_to(root)} would be {action}", hint="run `gen ansible`")
                                   for path, action in stale_ansible)
        if strays and not stale_ansible:
            return ExitCode.FINDINGS
        for path, action in stale_ansible:
            out.fail(f"gen: {path.relative_to(root)} would be {action}")
        if stale_ansible:
            out.fail("gen: ansible/ is not current; run `gen ansible`")
            return ExitCode.FINDINGS
    if generated:
        return ExitCode.FINDINGS
    out.say(f"gen: {len(result.trees)} host(s) checked, output/ is current")
    return ExitCode.OK


def _stale(result: RenderResult) -> list[Diagnostic]:
    """O001 for each file of output/ a render would change."""
    return [Diagnostic(Position(f"output/{c.path}"), "O001", f"output/{c.path} would be {c.action.value}",
                       hint="run `gen render --all`") for c in result.dirty]


def _check_hosts(root: Path, hosts: list[str], jobs: int | None) -> int:
    """``gen check --host``: the hosts' sources and their output/ trees, nothing repository-wide."""
    out = output.current()
    result = _render(root, hosts, jobs)
    if not result.ok:
        return ExitCode.FINDINGS
    _explain(root, result)
    out.results.update(hosts=[t.host for t in result.trees], stale=_changes_json(result.dirty),
                       current=not result.dirty)
    if out.machine:
        out.diagnostics.extend(_stale(result))
    for change in result.dirty:
        out.error_line(f"gen: output/{change.path} would be {change.action.value}")
    names = " ".join(f"--host {h}" for h in hosts)
    if result.dirty:
        out.fail(f"gen: output/ of {', '.join(hosts)} is not current; run `gen render {names}`")
        return ExitCode.FINDINGS
    out.say(f"gen: {len(result.trees)} host(s) checked ({', '.join(t.host for t in result.trees)}), their output/ "
            "is current; the repository-wide checks run without --host")
    return ExitCode.OK
