"""One result per live check: PASS, WARN or FAIL, for a host and a service, with evidence.

Printed one line each (``PASS llm-two qwen unit-file /etc/...``); a failure's or a
warning's evidence (a diff, journal lines, a traceback) follows behind a gutter, in full. A
WARN (a prediction the live host disagrees with, such as its KV cache size) is printed
like a failure but does not fail ``gen verify``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from generator.errors import printable, quoted

HOST_WIDE = "-"  # the service column of checks about the whole host


class Status(str, enum.Enum):
    """Outcome of one check."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check; ``detail`` is one line, ``evidence`` any number."""

    status: Status
    host: str
    service: str
    check: str
    detail: str = ""
    evidence: str = ""

    @property
    def failed(self) -> bool:
        """True for a FAIL."""
        return self.status is Status.FAIL

    @property
    def warned(self) -> bool:
        """True for a WARN (shown like a failure, counted as passed)."""
        return self.status is Status.WARN

    def line(self) -> str:
        """The one-line form: status, host, service, check, detail."""
        text = f"{self.status.value} {self.host} {self.service} {self.check}"
        # The detail often quotes the host (a version it printed, a unit's state): one line, escaped.
        return text + (f": {printable(self.detail)}" if self.detail else "")

    def render(self) -> str:
        """The line plus the evidence behind a ``    | `` gutter (failures and warnings only)."""
        if not ((self.failed or self.warned) and self.evidence):
            return self.line()
        # The evidence is the host's text (a journal, a diff of a live file): behind a gutter,
        # escaped, so no line of it can pass for one of gen's or a CI log command.
        return f"{self.line()}\n{quoted(self.evidence.rstrip(chr(10)), '    | ')}"


def result(ok: bool, host: str, service: str, check: str, detail: str = "",
           evidence: str = "") -> CheckResult:
    """Build a CheckResult from a boolean (PASS when OK)."""
    return CheckResult(Status.PASS if ok else Status.FAIL, host, service, check, detail, evidence)
