"""What applying a fresh render does on the hosts: which services are added, restart or go.

``gen diff`` ends with this plan, as ``terraform plan`` ends with one. It is derived from
the files that change in ``output/`` the way the playbook (generator/emit/ansible/)
decides, so it says what a run would do:

* a service whose unit is new is **added** (installed, then started unless ``enabled:
  false``);
* a service whose unit or environment file changes **restarts**, and the plan says which
  settings of the unit (``ExecStart`` flags, ``CPUAffinity``, ...) and which variables of
  the environment changed; every rank of a multi-node group restarts when any rank
  changes (their ranks start together), and says so;
* a service whose unit file goes is **removed** (stopped, disabled, its files deleted);
* a service with ``enabled: false`` is never started: its changed files are only
  **updated**;
* a change to a file no service owns (the readiness check) restarts nothing: it is read
  at the next start.

Hosts are listed with what changes on each. Nothing here reads a host or prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from generator.emit.render import ENV_DIR, UNIT_DIR, HostRender
from generator.emit.writer import MANAGED_LIST, Action, Change
from generator.load.resolve import Host, Model
from generator.plan.rollout import RolloutPlan

ADD, RESTART, REMOVE, UPDATE = "add", "restart", "remove", "update"
ACTIONS = (ADD, RESTART, REMOVE, UPDATE)  # the order a host's services are listed in

_UNIT_RE = re.compile(rf"^{re.escape(UNIT_DIR)}/sglang-(?P<name>[^/]+)\.service$")
_ENV_RE = re.compile(rf"^{re.escape(ENV_DIR)}/(?P<name>[^/]+)\.env$")
_SETTING_RE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9]*)=")
_FLAG_RE = re.compile(r"(?<!\S)(--[A-Za-z0-9][A-Za-z0-9_.-]*)")
_VAR_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")


@dataclass(frozen=True)
class ServicePlan:
    """One service's fate: its host, name, what happens and why, and the files behind it."""

    host: str
    service: str
    action: str
    reasons: tuple[str, ...]
    files: tuple[str, ...]  # paths under the repository (output/<host>/...)
    enabled: bool = True
    group: str | None = None  # the multi-node model whose ranks restart together
    model: str | None = None  # the model it serves (None: a service no longer in the inventory)

    @property
    def unit(self) -> str:
        """The systemd unit, e.g. ``sglang-qwen.service``."""
        return f"sglang-{self.service}.service"


@dataclass(frozen=True)
class HostPlan:
    """One host: its services' plans and the changed files no service owns."""

    host: str
    services: tuple[ServicePlan, ...]
    other_files: tuple[tuple[str, str], ...] = ()  # (path under the repository, created/updated/removed)

    def count(self, action: str) -> int:
        """How many of the host's services take ``action``."""
        return sum(s.action == action for s in self.services)


@dataclass(frozen=True)
class ApplyPlan:
    """Every host that changes, in name order, and the counts of the summary line."""

    hosts: tuple[HostPlan, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def services(self) -> tuple[ServicePlan, ...]:
        """Every service that changes, host by host."""
        return tuple(s for h in self.hosts for s in h.services)

    @property
    def empty(self) -> bool:
        """True when applying changes nothing on any host."""
        return not self.hosts

    def summary_line(self) -> str:
        """terraform's shape: ``Plan: 1 to add, 2 to restart, 0 to remove.`` (or No changes)."""
        if self.empty:
            return "No changes. output/ matches the sources: applying it restarts nothing."
        line = f"Plan: {self.counts[ADD]} to add, {self.counts[RESTART]} to restart, {self.counts[REMOVE]} to remove."
        if self.counts[UPDATE]:
            line += f" {self.counts[UPDATE]} to update without a restart (enabled: false)."
        return line


def _split(change: Change) -> tuple[str, str]:
    host, _, relpath = change.path.partition("/")
    return host, relpath


def _changed_lines(old: str | None, new: str | None) -> tuple[list[str], list[str]]:
    """The lines only in ``old`` and only in ``new`` (as sets: order changes are no reason)."""
    before, after = (old or "").split("\n"), (new or "").split("\n")
    gone, came = set(before) - set(after), set(after) - set(before)
    return [ln for ln in before if ln in gone], [ln for ln in after if ln in came]


def _unit_logical(text: str | None) -> list[str]:
    """A unit's settings as logical lines: continuation lines (``\\``) joined, comments left out."""
    out: list[str] = []
    pending = ""
    for line in (text or "").split("\n"):
        if not pending and (line.startswith("#") or line.startswith(";")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def unit_reason(old: str | None, new: str | None) -> str | None:
    """Which settings of a unit changed: ``unit: ExecStart (--tp-size, --port), CPUAffinity``.

    Comment lines (the generated header, the explanations) are no reason to restart, but
    the unit file still changes: ``unit: comments only`` then."""
    gone, came = _changed_lines("\n".join(_unit_logical(old)), "\n".join(_unit_logical(new)))
    keys: dict[str, set[str]] = {}
    for line in gone + came:
        found = _SETTING_RE.match(line)
        if found is None:
            continue
        flags = keys.setdefault(found.group("key"), set())
        if found.group("key") == "ExecStart":
            flags.update(_exec_flags(gone, came))
    if not keys:
        return "unit: comments only" if old != new else None
    parts = [f"{k} ({', '.join(sorted(v))})" if v else k for k, v in sorted(keys.items())]
    return "unit: " + ", ".join(parts)


def _exec_flags(gone: Sequence[str], came: Sequence[str]) -> set[str]:
    """The flags whose words differ between the old and the new ExecStart lines."""
    def words(lines: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in lines:
            if line.startswith("ExecStart="):
                current = ""
                for word in line.split():
                    if _FLAG_RE.fullmatch(word):
                        current = word
                        out[current] = ""
                    elif current:
                        out[current] += " " + word
        return out

    before, after = words(gone), words(came)
    return {f for f in set(before) | set(after) if before.get(f) != after.get(f)}


def env_reason(old: str | None, new: str | None) -> str | None:
    """Which variables of an environment file changed: ``environment: CUDA_VISIBLE_DEVICES``."""
    gone, came = _changed_lines(old, new)
    names = sorted({m.group("name") for ln in gone + came if (m := _VAR_RE.match(ln))})
    if names:
        return "environment: " + ", ".join(names)
    return "environment: comments only" if old != new else None


@dataclass
class _Draft:
    """What is known of one service while the changes are read."""

    unit: Change | None = None
    env: Change | None = None

    def changes(self) -> list[Change]:
        return [c for c in (self.unit, self.env) if c is not None and c.action is not Action.UNCHANGED]


def _service_of(relpath: str) -> tuple[str, str] | None:
    """(service, 'unit' or 'env') for a file a service owns, else None."""
    for regex, kind in ((_UNIT_RE, "unit"), (_ENV_RE, "env")):
        found = regex.match(relpath)
        if found:
            return found.group("name"), kind
    return None


def _reasons(draft: _Draft) -> list[str]:
    out: list[str] = []
    if draft.unit is not None and draft.unit.action is Action.UPDATED:
        found = unit_reason(draft.unit.old, draft.unit.new)
        if found:
            out.append(found)
    if draft.env is not None and draft.env.action in (Action.UPDATED, Action.CREATED, Action.REMOVED):
        found = env_reason(draft.env.old, draft.env.new)
        if found:
            out.append(found)
    return out


def _decide(host: str, name: str, draft: _Draft, enabled: bool, group: str | None,
            in_inventory: bool, model: str | None = None) -> ServicePlan | None:
    """The plan of one service from its changed files (None: nothing changes)."""
    changed = draft.changes()
    if not changed:
        return None
    files = tuple(f"output/{c.path}" for c in changed)
    unit = draft.unit.action if draft.unit is not None else None
    if unit is Action.REMOVED or (unit is None and not in_inventory):
        why = "no longer rendered: stopped, disabled and its files removed"
        return ServicePlan(host, name, REMOVE, (why,), files, enabled, group, model)
    if unit is Action.CREATED:
        why = "a new service: installed and started" if enabled else \
            "a new service with enabled: false: installed, never started"
        return ServicePlan(host, name, ADD, (why,), files, enabled, group, model)
    reasons = _reasons(draft)
    if not enabled:
        return ServicePlan(host, name, UPDATE, (*reasons, "enabled: false: its files are updated, it is not "
                                                "started"), files, enabled, group, model)
    return ServicePlan(host, name, RESTART, tuple(reasons), files, enabled, group, model)


def _inventory(renders: Iterable[HostRender],
               hosts: Iterable[Host]) -> dict[tuple[str, str], tuple[bool, str | None, str | None]]:
    """(host, service) -> (enabled, multi-node model, model) for every service of every loaded host."""
    out: dict[tuple[str, str], tuple[bool, str | None, str | None]] = {}
    for host in hosts:
        for spec in host.services:
            out[(host.name, spec.name)] = (spec.enabled, None, spec.model)
    for render in renders:
        for rs in render.services:
            model = rs.placement.model.name
            group = model if rs.placement.cluster is not None else None
            out[(render.host.name, rs.placement.service.name)] = (rs.placement.service.enabled, group, model)
    return out


def _group_ranks(models: Mapping[str, Model], hosts: Iterable[Host]) -> dict[str, list[tuple[str, str, bool]]]:
    """Multi-node model -> its ranks as (host, service, enabled), in rank order."""
    by_host = {h.name: h for h in hosts}
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for model in models.values():
        if model.multinode is None:
            continue
        for host_name in model.multinode.hosts:
            host = by_host.get(host_name)
            for spec in host.services if host is not None else ():
                if spec.model == model.name:
                    out.setdefault(model.name, []).append((host_name, spec.name, spec.enabled))
    return out


def plan_apply(changes: Sequence[Change], renders: Sequence[HostRender], hosts: Sequence[Host],
               models: Mapping[str, Model]) -> ApplyPlan:
    """The plan of applying ``changes`` (a fresh render against ``output/``).

    ``renders``, ``hosts`` and ``models`` are the run's detail (``run_fleet(detail=True)``):
    they say which service is enabled and which multi-node group it belongs to.
    """
    known = _inventory(renders, hosts)
    drafts: dict[tuple[str, str], _Draft] = {}
    other: dict[str, list[tuple[str, str]]] = {}
    for change in changes:
        host, relpath = _split(change)
        owned = _service_of(relpath)
        if owned is None:
            if change.action is not Action.UNCHANGED and relpath != MANAGED_LIST:
                other.setdefault(host, []).append((f"output/{change.path}", change.action.value))
            continue
        name, kind = owned
        setattr(drafts.setdefault((host, name), _Draft()), kind, change)
    plans: dict[tuple[str, str], ServicePlan] = {}
    for (host, name), draft in drafts.items():
        enabled, group, model = known.get((host, name), (True, None, None))
        found = _decide(host, name, draft, enabled, group, (host, name) in known, model)
        if found is not None:
            plans[(host, name)] = found
    _restart_groups(plans, _group_ranks(models, hosts))
    by_host: dict[str, list[ServicePlan]] = {}
    for key in sorted(plans):
        by_host.setdefault(key[0], []).append(plans[key])
    names = sorted(set(by_host) | set(other))
    host_plans = tuple(HostPlan(h, tuple(sorted(by_host.get(h, []), key=lambda s: (ACTIONS.index(s.action), s.service))),
                                tuple(other.get(h, ()))) for h in names)
    counts = {a: sum(h.count(a) for h in host_plans) for a in ACTIONS}
    return ApplyPlan(host_plans, counts)


def _restart_groups(plans: dict[tuple[str, str], ServicePlan], ranks: Mapping[str, list[tuple[str, str, bool]]]) -> None:
    """Every enabled rank of a multi-node group restarts when any rank restarts or is added."""
    for model, members in ranks.items():
        moving = [(h, s) for h, s, _ in members if (h, s) in plans and plans[(h, s)].action in (RESTART, ADD)]
        if not moving:
            continue
        what = ", ".join(f"{h}/{s}" for h, s in moving)
        for host, service, enabled in members:
            if (host, service) in plans or not enabled:
                continue
            plans[(host, service)] = ServicePlan(
                host, service, RESTART, (f"restarts with its multi-node group {model}: {what} changed "
                                         "(every rank starts together)",), (), enabled, model, model)


# --- where the changes fall in the playbook's order (generator/plan/rollout.py) ----------

@dataclass(frozen=True)
class Batch:
    """One batch of a rollout play: its hosts, and those of them whose services change in it."""

    play: str  # "multi-node MODEL" or "wave N (its models)", as site.yml's play titles say
    index: int  # 1-based within the play
    canary: bool
    hosts: tuple[str, ...]
    changed: tuple[str, ...]  # hosts with a service of the play's models to add or restart


@dataclass(frozen=True)
class RolloutSteps:
    """The plan laid over site.yml: removals in the prepare play, then each play's batches."""

    removed_in_prepare: tuple[str, ...]  # hosts where prepare stops and removes a service
    batches: tuple[Batch, ...]

    @property
    def affected(self) -> tuple[Batch, ...]:
        """The batches in which something restarts or is added."""
        return tuple(b for b in self.batches if b.changed)


def multinode_groups(renders: Iterable[HostRender]) -> dict[str, tuple[str, ...]]:
    """Multi-node model -> the hosts that run its ranks (one play of site.yml each)."""
    out: dict[str, set[str]] = {}
    for render in renders:
        for rs in render.services:
            if rs.placement.cluster is not None:
                out.setdefault(rs.placement.model.name, set()).add(render.host.name)
    return {model: tuple(sorted(hosts)) for model, hosts in sorted(out.items())}


def rollout_steps(plan: ApplyPlan, rollout: RolloutPlan, groups: Mapping[str, Sequence[str]]) -> RolloutSteps:
    """Which batches of the playbook the plan's services fall in, in the order site.yml runs them.

    site.yml stops and removes dropped services in its prepare play (every host at once);
    then each multi-node group is one play, all ranks in one batch; then the waves of
    single-node services, the canary first, then the batches (``Wave.serial``). A wave's
    play restarts only the services of its own models on a host."""
    moving = [s for s in plan.services if s.action in (ADD, RESTART)]
    out: list[Batch] = []
    for group, members in sorted(groups.items()):  # GROUPS: multinode_groups() of the run
        out.append(Batch(f"multi-node {group}", 1, False, tuple(members),
                         tuple(h for h in members if any(s.host == h and s.group == group for s in moving))))
    for number, wave in enumerate(rollout.waves, 1):
        models = set(wave.models)
        named = ", ".join(wave.models) if len(wave.models) <= 3 else f"{len(wave.models)} models"
        hosts = {s.host for s in moving if s.group is None and s.model in models}
        canary = wave.settings.canary > 0 and len(wave.serial) > 1
        for index, batch in enumerate(wave.batches, 1):
            out.append(Batch(f"wave {number} ({named})", index, canary and index == 1, batch,
                             tuple(h for h in batch if h in hosts)))
    removed = tuple(sorted({s.host for s in plan.services if s.action == REMOVE}))
    return RolloutSteps(removed, tuple(out))
