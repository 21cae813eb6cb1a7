"""``gen verify`` over many hosts: in parallel, with progress, and a summary table at the end.

Each host is checked by :func:`generator.live.verify.verify_host` in a worker thread (the
work is waiting on ssh, so threads are enough and cheap). ``on_done`` is called once per
finished host from the calling thread, in the order hosts finish, for progress lines; the
outcomes come back in the order of the plans, so everything but the durations is
deterministic.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from generator.errors import ExitCode
from generator.live.plan import HostPlan
from generator.live.target import HostUnreachableError, Target
from generator.live.verify import HostReport, verify_host


@dataclass(frozen=True)
class HostOutcome:
    """One host's verify: its report, or why no check could run; and how long it took."""

    host: str
    report: HostReport | None
    error: str  # set when the host could not be checked at all (unreachable)
    seconds: float

    @property
    def passed(self) -> int:
        """Checks that passed (0 when the host was not reached)."""
        return 0 if self.report is None else sum(not r.failed for r in self.report.results)

    @property
    def failed(self) -> int:
        """Checks that failed (0 when the host was not reached)."""
        return 0 if self.report is None else sum(r.failed for r in self.report.results)

    @property
    def verdict(self) -> str:
        """``ok``, ``FAILED`` or ``UNREACHABLE``."""
        if self.report is None:
            return "UNREACHABLE"
        return "FAILED" if self.report.failed else "ok"

    def progress_line(self, done: int, total: int) -> str:
        """One line for stderr when the host finishes: ``[3/40] gpu-a: ok, 31 passed, 0 failed (4.2 s)``."""
        if self.report is None:
            return f"[{done}/{total}] {self.host}: UNREACHABLE ({self.seconds:.1f} s): {self.error}"
        return (f"[{done}/{total}] {self.host}: {self.verdict}, {self.passed} passed, "
                f"{self.failed} failed ({self.seconds:.1f} s)")


Verifier = Callable[[HostPlan, Target], HostReport]


def _timed(check: Verifier, plan: HostPlan, target: Target) -> HostOutcome:
    started = time.monotonic()
    try:
        report = check(plan, target)
    except HostUnreachableError as exc:
        return HostOutcome(plan.name, None, str(exc).replace("\n", " "), time.monotonic() - started)
    return HostOutcome(plan.name, report, "", time.monotonic() - started)


def verify_fleet(work: Sequence[tuple[HostPlan, Target]], jobs: int,
                 on_done: Callable[[HostOutcome, int, int], None] | None = None,
                 check: Verifier = verify_host) -> list[HostOutcome]:
    """Verify every (plan, target) with at most JOBS hosts at once; outcomes in input order.

    ``check`` is the per-host verifier (the real :func:`verify_host` unless a caller
    passes another one, e.g. the unit tests of the table).
    """
    outcomes: dict[int, HostOutcome] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="gen-verify") as pool:
        pending: dict[Future[HostOutcome], int] = {
            pool.submit(_timed, check, plan, target): i for i, (plan, target) in enumerate(work)}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: pending[f]):
                index = pending.pop(future)
                outcomes[index] = future.result()  # anything but unreachable is gen's bug: raise it
                if on_done is not None:
                    on_done(outcomes[index], len(outcomes), len(work))
    return [outcomes[i] for i in range(len(work))]


def summary_table(outcomes: Sequence[HostOutcome]) -> str:
    """A fixed-width table: host, passed, failed, seconds, result; then a totals line."""
    header = ("host", "passed", "failed", "seconds", "result")
    rows = [(o.host, "-" if o.report is None else str(o.passed), "-" if o.report is None else str(o.failed),
             f"{o.seconds:.1f}", o.verdict) for o in outcomes]
    width = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(width[0])] + [row[i].rjust(width[i]) for i in (1, 2, 3)] + [row[4]]
        return "  ".join(cells).rstrip()

    ok = sum(o.verdict == "ok" for o in outcomes)
    failed = sum(o.verdict == "FAILED" for o in outcomes)
    unreachable = sum(o.verdict == "UNREACHABLE" for o in outcomes)
    total = (f"gen: {len(outcomes)} host(s): {ok} ok, {failed} failed, {unreachable} unreachable; "
             f"{sum(o.passed for o in outcomes)} check(s) passed, {sum(o.failed for o in outcomes)} failed")
    return "\n".join([line(header), *(line(r) for r in rows), total])


def fleet_exit_code(outcomes: Sequence[HostOutcome]) -> int:
    """1 when any check failed; else 3 when a host could not be reached; else 0."""
    if any(o.verdict == "FAILED" for o in outcomes):
        return int(ExitCode.FINDINGS)
    if any(o.verdict == "UNREACHABLE" for o in outcomes):
        return int(ExitCode.ENVIRONMENT)
    return int(ExitCode.OK)
