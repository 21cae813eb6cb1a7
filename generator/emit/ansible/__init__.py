"""An Ansible inventory and playbook that roll the rendered tree out to the hosts.

gen does not deploy: it hands ``output/<host>/`` to Ansible. :func:`generate` is pure
(renders in, file texts out) and writes, beside each other:

* ``inventory.yml`` (:mod:`.inventory`): every host with its files (mode, owner service) and
  services (health URL, TimeoutStartSec, enabled, multi-node group and rank, the
  preflight and sandbox specs); one inventory group per multi-node deployment;
* ``site.yml`` (:mod:`.plays`): guard, prepare, one play per multi-node group, then the
  single-node services in waves (:mod:`generator.plan.rollout`: canary, then batches, as
  Ansible's ``serial`` lists and ``max_fail_percentage``);
* ``rollout.yml`` (:mod:`.tasks`): the steps each rollout play imports (tags ``copy``,
  ``preflight``, ``restart``, ``verify``);
* ``gen-onhost.py``, ``gen-sandbox.py``, ``gen-rollout.py``: the standalone on-host
  scripts the tasks run with Ansible's ``script`` module (copies of
  ``generator/live/onhost*.py``, read as text: emit does not import live);
* ``gen-digest.py`` (:mod:`.digest`): the playbook's first task, on the controller: each
  host's ``output/`` tree against the digest recorded in the inventory (``gen_digest``).

Every file carries gen's header and is deterministic (same inputs, same bytes). Every
value from the repository is written by :mod:`.yamltext` as data (``!unsafe``), so
Ansible never evaluates repository text as a template.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from generator import __version__
from generator.emit.ansible.digest import tree_digest
from generator.emit.ansible.inventory import groups, inventory
from generator.emit.ansible.plays import DIGEST_SCRIPT, REMOVABLE_RE, SECRET_RE, TASKS_FILE, VERIFY_UNIT, plays
from generator.emit.ansible.tasks import tasks_text
from generator.emit.ansible.yamltext import dump
from generator.emit.render import HostRender
from generator.emit.writer import MARKER
from generator.load.rollout import DEFAULTS, RolloutSettings, model_settings
from generator.plan.rollout import Replica, RolloutPlan, multinode_override_warnings, plan_rollout

INVENTORY = "inventory.yml"
PLAYBOOK = "site.yml"
_GENERATOR = Path(__file__).resolve().parents[2]
# File in ansible/ -> the standalone script under generator/ it is a copy of: the on-host
# scripts the tasks run with Ansible's script module, and the controller's digest check.
SCRIPTS = (("gen-onhost.py", "live/onhost.py"), ("gen-rollout.py", "live/onhost_rollout.py"),
           ("gen-sandbox.py", "live/onhost_sandbox.py"), (DIGEST_SCRIPT, "emit/ansible/digest.py"))

__all__ = ["INVENTORY", "PLAYBOOK", "REMOVABLE_RE", "SECRET_RE", "VERIFY_UNIT", "AnsibleFiles", "generate"]


@dataclass(frozen=True)
class AnsibleFiles:
    """The generated files: name (relative to the output folder) -> text."""

    files: tuple[tuple[str, str], ...]


def _header(what: str) -> str:
    return (f"# {MARKER} {__version__} with `gen ansible`. DO NOT EDIT.\n"
            f"# {what}\n"
            "# Change hosts/ or models/, run `gen render --all`, then `gen ansible` again.\n")


def rollout_plan(renders: Sequence[HostRender], repo: RolloutSettings = DEFAULTS) -> RolloutPlan:
    """The waves and batches of RENDERS' single-node services under REPO's and each model's settings."""
    replicas, settings, multinode = [], {}, {}
    for render in sorted(renders, key=lambda r: r.host.name):
        for rs in render.services:
            model = rs.placement.model
            if rs.placement.cluster is not None:
                multinode[model.name] = (model.name, bool(model.rollout),
                                         model.pos("rollout", key=True) if model.rollout else None)
                continue
            settings[model.name] = model_settings(repo, model.rollout, model.doc)
            replicas.append(Replica(render.host.name, model.name, rs.placement.service.name,
                                    rs.placement.service.pos("model")))
    plan = plan_rollout(replicas, settings)
    warnings = multinode_override_warnings(list(multinode.values()))
    return replace(plan, diagnostics=plan.diagnostics + tuple(warnings))


def playbook_text(renders: Sequence[HostRender], plan: RolloutPlan | None = None) -> str:
    """site.yml, with gen's header."""
    plan = plan if plan is not None else rollout_plan(renders)
    return (_header("Guard, prepare, each multi-node group at once, then single-node services: canary, batches.")
            + "\n" + plays(groups(renders), plan))


def generate(renders: Sequence[HostRender], out_dir: Path, output_dir: Path,
             plan: RolloutPlan | None = None) -> AnsibleFiles:
    """Every file for RENDERS, to be written into ``out_dir``, rolled out as PLAN says
    (default: :func:`rollout_plan` under gen's default settings).

    The inventory points at ``output_dir`` relative to itself, so the set works from any
    checkout of the repository.
    """
    plan = plan if plan is not None else rollout_plan(renders)
    rel = Path(os.path.relpath(output_dir.resolve(), out_dir.resolve())).as_posix()
    # What the playbook's first task compares output/ with (read from disk: gen ansible has
    # checked that output/ is the render).
    digests = {r.host.name: tree_digest(str(output_dir / r.host.name)) for r in renders}
    inv = _header("Ansible inventory of hosts/ with the files gen rendered for each host.") + "\n" \
        + dump(inventory(renders, rel, digests, plan))
    tasks = _header("The rollout steps each play of site.yml imports.") + "\n" + tasks_text()
    scripts = tuple((name, _header(f"Script run by the playbook (copy of generator/{src}).")
                     + (_GENERATOR / src).read_text(encoding="utf-8")) for name, src in SCRIPTS)
    return AnsibleFiles(((INVENTORY, inv), (PLAYBOOK, playbook_text(renders, plan)), (TASKS_FILE, tasks), *scripts))
