"""``gen verify``: run every live check module against one host and collect the results.

The check modules (pytest-testinfra style, one per resource) run in a fixed order:
files, install, services, weights, GPUs, paths. When a service check fails, the
service's state and its journal since the last start are attached in full.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import (
    checks_files,
    checks_gpus,
    checks_install,
    checks_paths,
    checks_service,
    checks_weights,
)
from .context import HostContext
from .journal import status_text
from .plan import HostPlan
from .results import HOST_WIDE, CheckResult
from .target import HostUnreachableError, Target, shared_connection

CHECK_MODULES: tuple[Callable[[HostContext], list[CheckResult]], ...] = (
    checks_files.run, checks_install.run, checks_service.run,
    checks_weights.run, checks_gpus.run, checks_paths.run,
)


@dataclass(frozen=True)
class HostReport:
    """The results of one host and, per failing service, its status with journal."""

    host: str
    results: tuple[CheckResult, ...]
    service_status: tuple[tuple[str, str], ...]  # (service, status text) for failing services

    @property
    def failed(self) -> bool:
        """True when any check failed."""
        return any(r.failed for r in self.results)


def verify_host(plan: HostPlan, target: Target) -> HostReport:
    """Run every check module for PLAN on TARGET; unreachable host raises HostUnreachableError."""
    with shared_connection(target) as host:
        try:
            host.run("true")
        except RuntimeError as exc:  # testinfra raises on ssh's 255
            raise HostUnreachableError(f"cannot reach {plan.name} at {target.address} over ssh: {exc}") from exc
        ctx = HostContext(plan, host)
        results: list[CheckResult] = []
        for module in CHECK_MODULES:
            results += module(ctx)
        failing = sorted({r.service for r in results if r.failed and r.service != HOST_WIDE})
        status = tuple((name, status_text(host, ctx.state(plan.service(name).unit), with_journal=True))
                       for name in failing)
    return HostReport(plan.name, tuple(results), status)
