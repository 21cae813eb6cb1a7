"""``gen verify``: run every live check module against one host and collect the results.

The check modules (pytest-testinfra style, one per resource) run in a fixed order:
files, install, services, weights, GPUs, hardware facts, paths. When a service check fails, the
service's state and its journal since the last start are attached in full.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.live.checks import facts as checks_facts
from generator.live.checks import files as checks_files
from generator.live.checks import gpus as checks_gpus
from generator.live.checks import install as checks_install
from generator.live.checks import memory as checks_memory
from generator.live.checks import paths as checks_paths
from generator.live.checks import service as checks_service
from generator.live.checks import weights as checks_weights
from generator.live.context import HostContext
from generator.live.journal import status_text
from generator.live.plan import HostPlan
from generator.live.results import HOST_WIDE, CheckResult
from generator.live.target import HostUnreachableError, Target, shared_connection

CHECK_MODULES: tuple[Callable[[HostContext], list[CheckResult]], ...] = (
    checks_files.run, checks_install.run, checks_service.run,
    checks_weights.run, checks_gpus.run, checks_facts.run, checks_paths.run, checks_memory.run,
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
