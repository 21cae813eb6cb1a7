"""The last rollout outcome of a service, as the playbook kept it on the host (``gen status``).

Each rollout step of ``ansible/rollout.yml`` that decides a service's fate writes
``/var/lib/gen/rollouts/<unit>.json`` on the host (``gen-rollout.py record``): ``applied``,
``refused by preflight``, ``rolled back``, or failed with a rollback that did not come
back, with the reason (the deciding line), the time (UTC, the host's clock), the
inventory that ran it and the digest of the output/ tree it rolled out.
"""

from __future__ import annotations

from typing import Any

from testinfra.host import Host as InfraHost

from generator.errors import printable
from generator.load import json_text

OUTCOMES_DIR = "/var/lib/gen/rollouts"  # onhost_rollout.OUTCOMES: the same folder on the host


def last_rollout(host: InfraHost, unit: str) -> dict[str, Any] | None:
    """The outcome the last rollout kept for UNIT, or None when no rollout recorded one."""
    found = host.file(f"{OUTCOMES_DIR}/{unit}.json")
    if not found.is_file:
        return None
    try:
        doc = json_text.loads(found.content_string)  # the host's file: any nesting is no crash
    except ValueError:
        return {"outcome": "unreadable", "reason": f"{found.path} is not JSON", "at": ""}
    return doc if isinstance(doc, dict) else None


def outcome_line(doc: dict[str, Any] | None) -> str:
    """One line for ``gen status``: what the last rollout did to the service, when and why.

    The file is the host's (its reason is a line of the service's journal, which may hold
    what a client sent): every part is :func:`printable`, one line whatever it holds."""
    if doc is None:
        return "last rollout: none recorded (the playbook keeps one per service it rolls out)"
    reason = printable(str(doc.get("reason") or ""))
    head = f"last rollout: {printable(str(doc.get('outcome', '?')))} at {printable(str(doc.get('at', '?')))}"
    return head + (f": {reason}" if reason else "")
