"""``gen ansible``: write the Ansible inventory and playbook for the rendered tree.

The files go to ``ansible/`` beside ``output/`` (or ``--out``); they are written only when
output/ is current, since the playbook copies exactly what is in output/. The rollout
strategy comes from ``ROOT/rollout.yaml`` and the models' ``rollout:`` (A codes). When
``ROOT/ansible/`` exists, ``gen check`` requires it to be current too
(:func:`ansible_actions`, the same computation this command writes from).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from generator.emit.ansible import generate, rollout_plan
from generator.cli import complete, output
from generator.cli.common import EXIT_CODES_HELP, guard, output_options, report, report_run, root_option
from generator.emit.safe_fs import OutputTree
from generator.errors import Diagnostic, Diagnostics, ExitCode, Position
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


# Why an entry beside gen's files matters: Ansible reads more of the folder than it is given.
_READ_BY_ANSIBLE = {
    "group_vars": "Ansible reads group_vars/ beside the inventory and the playbook (variables such as "
                  "ansible_ssh_common_args for every host)",
    "host_vars": "Ansible reads host_vars/ beside the inventory and the playbook",
    "ansible.cfg": "Ansible reads ansible.cfg from the folder it runs in",
    "library": "Ansible loads modules from library/ beside the playbook",
    "module_utils": "Ansible loads module_utils/ beside the playbook",
    "roles": "Ansible finds roles/ beside the playbook",
    "collections": "Ansible finds collections/ beside the playbook",
}


def ansible_strays(out: Path, names: set[str], root: Path | None = None) -> list[Diagnostic]:
    """O004 for each entry of ``out`` that is not one of the files ``gen ansible`` writes there.

    The operator runs the playbook from a checkout that a pull request may have changed, and
    Ansible takes in more of its folder than it is named: group_vars/ and host_vars/ beside
    the inventory, plugins (``*_plugins/``), library/ and roles/ beside the playbook. A
    ``filter_plugins/x.py`` there is Python run on the controller, as the operator whose
    keys reach every host. Nothing is followed or opened; symlinks count as entries.
    ROOT's own ``ansible.cfg`` counts too: the README runs ansible-playbook from the
    repository's root, which reads it, and it can name plugin folders anywhere.
    """
    found = []
    if root is not None and os.path.lexists(root / "ansible.cfg"):
        found.append(Diagnostic(Position("ansible.cfg"), "O004",
                                "ansible.cfg in the repository: ansible-playbook run from here reads it, and it "
                                "can name plugin folders whose code runs on the controller",
                                hint="delete it (git rm); give Ansible's settings on the command line (-f N) "
                                     "or keep them outside the repository (ANSIBLE_CONFIG=~/.ansible.cfg)"))
    with OutputTree(out.parent, display=str(out.parent)) as tree:
        if tree.lstat((out.name,)) is None:
            return found
        entries = tree.listdir((out.name,))
    shown = out.name if out.parent == Path(".") else str(out)
    for entry in entries:
        if entry in names:
            continue
        why = _READ_BY_ANSIBLE.get(entry) or ("Ansible loads plugins from it beside the playbook"
                                              if entry.endswith("_plugins") else "gen did not write it")
        found.append(Diagnostic(Position(f"{shown}/{entry}"), "O004",
                                f"{shown}/{entry} is not a file gen ansible writes: {why}; the playbook "
                                "must run with exactly what gen wrote", hint="delete it (git rm)"))
    return found


def _with_group_ranks(root: Path, hosts: list[str]) -> tuple[RenderResult, list[str]]:
    """A detail run of HOSTS and of every other rank of their multi-node groups (their ranks
    restart together: a playbook must never hold part of a group); the hosts run."""
    wanted = list(hosts)
    while True:
        result = run_fleet(root, wanted, detail=True)
        peers = sorted({peer for render in result.renders for rs in render.services if rs.placement.cluster
                        and rs.placement.model.multinode for peer in rs.placement.model.multinode.hosts} - set(wanted))
        if not peers or not result.ok:
            return result, wanted
        wanted += peers


@click.command("ansible", epilog=EXIT_CODES_HELP)
@click.option("--host", "hosts", multiple=True, metavar="NAME", shell_complete=complete.host_names,
              help="Only this host (repeatable), and the other ranks of its multi-node groups: the inventory "
                   "and playbook then roll out these hosts alone (as a saved `terraform plan -target`); "
                   "`gen ansible` without --host writes the whole fleet again.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=f"Folder for inventory.yml and site.yml (default: ROOT/{DEFAULT_OUT}).")
@root_option
@output_options()
@guard
def ansible_command(hosts: tuple[str, ...], out: Path | None, root: Path) -> int:
    """Write an Ansible inventory of hosts/ and a playbook that rolls out output/.

    \b
    Apply:   ansible-playbook -i ansible/inventory.yml ansible/site.yml
    Preview: ansible-playbook -i ansible/inventory.yml ansible/site.yml --check --diff
    """
    out = out if out is not None else root / DEFAULT_OUT
    if hosts:
        result, named = _with_group_ranks(root, list(hosts))
    else:
        result, named = run_fleet(root, None, detail=True), []  # each service's argv and placement
    plan, rollout_diags = rollout_for(root, result) if result.ok else (None, [])
    report_run(result, rollout_diags)
    if not result.ok or plan is None:
        output.current().error_line("gen: nothing written")
        return ExitCode.FINDINGS
    if result.dirty:
        which = " ".join(f"--host {h}" for h in named) if named else "--all"
        output.current().error_line(f"gen: {OUTPUT_DIR}/ is not current; run `gen render {which}` first "
                                    "(the playbook copies what is in output/)")
        return ExitCode.FINDINGS
    done, strays = write_ansible(root, result, out, plan)
    if strays:
        report(strays)
        output.current().error_line("gen: nothing written")
        return ExitCode.FINDINGS
    for path, action in done:
        output.current().say(f"{action:9} {path}")
    if named:
        added = [h for h in named if h not in hosts]
        output.current().say(f"gen: {out.name}/ rolls out {', '.join(named)} only"
                             + (f" ({', '.join(added)}: other ranks of their multi-node groups)" if added else "")
                             + "; `gen ansible` writes the whole fleet again", err=True)
    return ExitCode.OK


def write_ansible(root: Path, result: RenderResult, out: Path,
                  plan: RolloutPlan) -> tuple[list[tuple[Path, str]], list[Diagnostic]]:
    """Write the files of :func:`ansible_actions` that changed: (path, action) of each file.

    Nothing is written while ``out`` holds an entry gen does not write (its O004 findings are
    returned instead): the playbook must run with exactly what gen wrote.
    """
    actions = ansible_actions(root, result, out, plan)
    strays = ansible_strays(out, {path.name for path, _, _ in actions}, root)
    if strays:
        return [], strays
    done = []
    for path, text, action in actions:
        if action != "unchanged":
            atomic_write(path, text)
        done.append((path, action))
    return done, []
