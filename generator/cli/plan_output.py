"""How ``gen diff`` shows its plan: text for people (colored on a terminal), and JSON.

The text follows ``terraform plan``: one line per service with a sign (``+`` add, ``~``
restart, ``-`` remove, ``=`` files updated without a restart) and why, grouped by host,
then the hosts affected and the summary line ``Plan: 1 to add, 2 to restart, 0 to
remove.``. docs/json-output.md documents the JSON keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.errors import printable
from generator.pipeline.apply_plan import ADD, REMOVE, RESTART, UPDATE, ApplyPlan, ServicePlan

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


def plan_text(plan: ApplyPlan, paint: Paint = _plain) -> str:
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
    affected = [f"{printable(h.host)} ({_host_counts(h.count)})" for h in plan.hosts]
    lines += ["", f"Hosts affected: {len(plan.hosts)}: " + ", ".join(affected), paint(plan.summary_line(), bold=True)]
    return "\n".join(lines) + "\n"


def _host_counts(count: Callable[[str], int]) -> str:
    parts = [f"{count(a)} to {WORDS[a] if a != UPDATE else 'update'}" for a in (ADD, RESTART, REMOVE, UPDATE)
             if count(a)]
    return ", ".join(parts) or "files only"


def plan_json(plan: ApplyPlan) -> dict[str, Any]:
    """The ``plan`` key of ``gen diff --format json`` (docs/json-output.md)."""
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
        "summary": plan.summary_line(),
    }
