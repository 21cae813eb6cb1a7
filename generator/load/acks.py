"""Acknowledged warnings: ``ack:`` in a model manifest or a host inventory.

A warning an operator has weighed and accepts (X160 on every run, say) is written down
once, in the file it is reported in, with the reason, the way a linter's ``noqa`` or a
Kubernetes annotation records a decision beside what it is about::

    ack:
      - code: X160
        reason: "the drafter was trained for this page size (ticket OPS-412)"

An ack matches every warning of its code positioned in the same file. The rules an ack
must keep (only warnings, codes gen reports, one entry per code, and still matching
something) are checked by :mod:`generator.pipeline.acks`, which sees every finding of a
run; here the entries are read with their positions.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.errors import Position
from generator.load.manifests import Document
from generator.load.schema import ACK_KEY


@dataclass(frozen=True)
class Ack:
    """One acknowledged code of one file, where it was written, and why."""

    code: str
    reason: str
    file: str  # the file's display path (as diagnostics name it)
    pos: Position  # where the entry's code is written

    @property
    def where(self) -> str:
        """``models/x.yaml:12:11``."""
        return str(self.pos)


def acks_of(doc: Document | None) -> tuple[Ack, ...]:
    """The ``ack:`` entries of a schema-valid document (entries the schema refused are left out)."""
    if doc is None or not isinstance(doc.data, dict):
        return ()
    entries = doc.data.get(ACK_KEY)
    if not isinstance(entries, list):
        return ()
    out = []
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and isinstance(entry.get("code"), str) and isinstance(entry.get("reason"), str) \
                and (ACK_KEY, i) not in doc.dropped:
            out.append(Ack(entry["code"], entry["reason"], doc.path, doc.pos((ACK_KEY, i, "code"))))
    return tuple(out)
