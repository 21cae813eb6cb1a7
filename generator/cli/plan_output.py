"""How ``gen diff`` shows its plan: text for people (colored on a terminal), and JSON.

The text follows ``terraform plan``: one line per service with a sign (``+`` add, ``~``
restart, ``-`` remove, ``=`` files updated without a restart) and why, grouped by host,
then where the changes fall in the playbook (the prepare play's removals, the batches of
each play that change), the hosts and batches affected and the summary line ``Plan: 1 to
add, 2 to restart, 0 to remove.``. docs/json-output.md documents the JSON keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.errors import printable
from generator.pipeline.apply_plan import ADD, REMOVE, RESTART, UPDATE, ApplyPlan, Batch, RolloutSteps, ServicePlan

SIGNS = {ADD: "+", RESTART: "~", REMOVE: "-", UPDATE: "="}
COLORS = {ADD: "green", RESTART: "yellow", REMOVE: "red", UPDATE: "cyan"}
WORDS = {ADD: "add", RESTART: "restart", REMOVE: "remove", UPDATE: "update, no restart"}

Paint = Callable[..., str]


def _plain(text: str, **_: Any) -> str:
    return text


def _service_line(s: ServicePlan, paint: Paint, width: int) -> str:
    sign = paint(f"{SIGNS[s.action]} {printable(s.unit):{width}}", fg=COLORS[s.action], bold=True)
    why = printable("; ".join(s.reasons))
    return f"  {sign}  {WORDS[s.action]}" + (f": {why}" if why else "")


def _rollout_lines(steps: RolloutSteps) -> list[str]:
    """Where the changes fall in site.yml's order: prepare's removals, then the batches that change."""
    lines = ["", "Rollout (site.yml, in order; a batch without changes runs and changes nothing):"]
    if steps.removed_in_prepare:
        lines.append("  prepare (every host at once): removes services on "
                     + ", ".join(printable(h) for h in steps.removed_in_prepare))
    plays: dict[str, list[Batch]] = {}
    for batch in steps.batches:
        plays.setdefault(batch.play, []).append(batch)
    for play, batches in plays.items():
        changed = [b for b in batches if b.changed]
        if not changed:
            continue
        lines.append(f"  {printable(play)}: {len(batches)} batch(es), changes in {len(changed)}")
        for b in changed:
            label = "canary" if b.canary else f"batch {b.index}"
            rest = len(b.hosts) - len(b.changed)
            lines.append(f"    {label} ({len(b.hosts)} host(s)): " + ", ".join(printable(h) for h in b.changed)
                         + (f", and {rest} host(s) without changes" if rest else ""))
    return lines


def batches_line(steps: RolloutSteps) -> str:
    """``Batches affected: 2 of 7.``"""
    return f"Batches affected: {len(steps.affected)} of {len(steps.batches)}."


def plan_text(plan: ApplyPlan, paint: Paint = _plain, steps: RolloutSteps | None = None) -> str:
    """The plan as ``gen diff`` prints it after the diff (ends with the summary line).

    Every part that comes from the repository is escaped (errors.printable) before it is
    painted, so the text goes to the terminal as it is."""
    if plan.empty:
        return paint(plan.summary_line(), bold=True) + "\n"
    lines = ["", paint("Plan: what applying output/ does on the hosts", bold=True),
             "  " + ", ".join(f"{SIGNS[a]} {WORDS[a]}" for a in (ADD, RESTART, REMOVE, UPDATE))]
    for host in plan.hosts:
        lines += ["", paint(f"{printable(host.host)}:", bold=True)]
        width = max((len(printable(s.unit)) for s in host.services), default=0)
        lines += [_service_line(s, paint, width) for s in host.services]
        lines += [f"  {paint('=', fg=COLORS[UPDATE], bold=True)} {printable(path)}  {action}, no restart: no service "
                  "owns it" + (" (read at the next start)" if action != "removed" else "")
                  for path, action in host.other_files]
    if steps is not None:
        lines += _rollout_lines(steps)
    affected = [f"{printable(h.host)} ({_host_counts(h.count)})" for h in plan.hosts]
    lines += ["", f"Hosts affected: {len(plan.hosts)}: " + ", ".join(affected)]
    if steps is not None:
        lines.append(batches_line(steps))
    lines.append(paint(plan.summary_line(), bold=True))
    return "\n".join(lines) + "\n"


def _host_counts(count: Callable[[str], int]) -> str:
    parts = [f"{count(a)} to {WORDS[a] if a != UPDATE else 'update'}" for a in (ADD, RESTART, REMOVE, UPDATE)
             if count(a)]
    return ", ".join(parts) or "files only"


def steps_json(steps: RolloutSteps) -> dict[str, Any]:
    """The ``plan.rollout`` key of ``gen diff --format json`` (docs/json-output.md)."""
    return {"removed_in_prepare": list(steps.removed_in_prepare),
            "batches": [{"play": b.play, "batch": b.index, "canary": b.canary, "hosts": list(b.hosts),
                         "changed": list(b.changed)} for b in steps.batches],
            "affected": len(steps.affected), "total": len(steps.batches)}


def plan_json(plan: ApplyPlan, steps: RolloutSteps | None = None) -> dict[str, Any]:
    """The ``plan`` key of ``gen diff --format json`` (docs/json-output.md); ``rollout`` is
    null when the rollout settings have errors."""
    return {
        "hosts": [{
            "host": h.host,
            "services": [{"service": s.service, "unit": s.unit, "action": s.action, "reasons": list(s.reasons),
                          "files": list(s.files), "enabled": s.enabled, "multinode_group": s.group}
                         for s in h.services],
            "other_files": [{"path": path, "action": action} for path, action in h.other_files],
            "counts": {a: h.count(a) for a in (ADD, RESTART, REMOVE, UPDATE)},
        } for h in plan.hosts],
        "counts": dict(plan.counts),
        "rollout": steps_json(steps) if steps is not None else None,
        "summary": plan.summary_line(),
    }
