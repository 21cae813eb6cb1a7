"""``gen ansible``: write the Ansible inventory and playbook for the rendered tree.

The files go to ``ansible/`` beside ``output/`` (or ``--out``); they are written only when
output/ is current, since the playbook copies exactly what is in output/. The rollout
strategy comes from ``ROOT/rollout.yaml`` and the models' ``rollout:`` (A codes). When
``ROOT/ansible/`` exists, ``gen check`` requires it to be current too
(:func:`ansible_actions`, the same computation this command writes from).
"""

from __future__ import annotations

from pathlib import Path

import click

from generator.emit.ansible import generate, rollout_plan
from generator.cli import output
from generator.cli.common import EXIT_CODES_HELP, guard, output_options, report, root_option
from generator.errors import Diagnostic, Diagnostics, ExitCode
from generator.load.rollout import RolloutSettings, load_rollout
from generator.plan.rollout import RolloutPlan
from generator.pipeline.fleet import OUTPUT_DIR, RenderResult, run_fleet
from generator.emit.writer import WriteError, atomic_write, owns_header, read_existing

DEFAULT_OUT = "ansible"


def rollout_for(root: Path, result: RenderResult,
                settings: RolloutSettings | None = None) -> tuple[RolloutPlan | None, list[Diagnostic]]:
    """The rollout plan of a detail run under ROOT/rollout.yaml (or SETTINGS, already loaded)
    and the models' ``rollout:``, with its diagnostics (None when rollout.yaml has errors)."""
    diags = Diagnostics()
    if settings is None:
        settings = load_rollout(root, diags)
    if diags.has_errors:
        return None, diags.sorted()
    plan = rollout_plan(result.renders, settings)
    for diagnostic in plan.diagnostics:
        diags.add(diagnostic)
    return plan, diags.sorted()


def ansible_actions(root: Path, result: RenderResult, out: Path,
                    plan: RolloutPlan | None = None) -> list[tuple[Path, str, str]]:
    """(path, text, action) of each file ``gen ansible`` writes into ``out``, from a detail run.

    The action is created, updated or unchanged; a file there that gen did not write
    raises WriteError. PLAN: from :func:`rollout_for` (default: gen's default settings).
    """
    files = generate(result.renders, out, root / OUTPUT_DIR, plan)
    actions = []
    for name, text in files.files:
        path = out / name
        old = read_existing(path)
        if old is not None and old != text and not owns_header(old):
            raise WriteError(f"{path} exists but gen did not write it; move it away, then run again")
        actions.append((path, text, "created" if old is None else "unchanged" if old == text else "updated"))
    return actions


@click.command("ansible", epilog=EXIT_CODES_HELP)
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=f"Folder for inventory.yml and site.yml (default: ROOT/{DEFAULT_OUT}).")
@root_option
@output_options()
@guard
def ansible_command(out: Path | None, root: Path) -> int:
    """Write an Ansible inventory of hosts/ and a playbook that rolls out output/.

    \b
    Apply:   ansible-playbook -i ansible/inventory.yml ansible/site.yml
    Preview: ansible-playbook -i ansible/inventory.yml ansible/site.yml --check --diff
    """
    out = out if out is not None else root / DEFAULT_OUT
    result = run_fleet(root, None, detail=True)  # each service's argv and placement, for the rollout
    plan, rollout_diags = rollout_for(root, result) if result.ok else (None, [])
    report(list(result.diagnostics) + rollout_diags)
    if not result.ok or plan is None:
        output.current().error_line("gen: nothing written")
        return ExitCode.FINDINGS
    if result.dirty:
        output.current().error_line(f"gen: {OUTPUT_DIR}/ is not current; run `gen render --all` first "
                                    "(the playbook copies what is in output/)")
        return ExitCode.FINDINGS
    for path, action in write_ansible(root, result, out, plan):
        output.current().say(f"{action:9} {path}")
    return ExitCode.OK


def write_ansible(root: Path, result: RenderResult, out: Path, plan: RolloutPlan) -> list[tuple[Path, str]]:
    """Write the files of :func:`ansible_actions` that changed; (path, action) of each file."""
    done = []
    for path, text, action in ansible_actions(root, result, out, plan):
        if action != "unchanged":
            atomic_write(path, text)
        done.append((path, action))
    return done
