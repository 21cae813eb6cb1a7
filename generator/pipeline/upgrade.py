"""Upgrade impact: what every service would do on another SGLang pin (``gen check --sglang PIN``).

The pipeline checks every host against the other pin (``run_fleet(root, None, pin, detail=True)``),
so every check it runs (flags, and any later pass) applies. Its diagnostics are then
attributed to services: a finding in a model manifest belongs to every service running
that model; a finding inside a host's ``services[i]`` block belongs to that service; any
other finding in a host file belongs to the host as a whole. For services that pass,
the argv rendered for the new pin is compared with today's, so the operator sees what
the unit file will say differently (e.g. ``--tensor-parallel-size`` becoming ``--tp-size``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.errors import Diagnostic
from generator.pipeline.fleet import RenderResult, run_fleet
from generator.load.resolve import Host, Model, ServiceSpec


@dataclass(frozen=True)
class ServiceImpact:
    """One service on the new pin: its findings and how its argv would change."""

    host: str
    service: str
    current_pin: str
    diagnostics: tuple[Diagnostic, ...]
    removed_words: tuple[str, ...]  # argv groups rendered today but not on the new pin
    added_words: tuple[str, ...]  # argv groups rendered only on the new pin

    @property
    def breaks(self) -> bool:
        """True when any finding is an error: the service would not render (or start)."""
        return any(d.is_error for d in self.diagnostics)


@dataclass(frozen=True)
class UpgradeReport:
    """Every service's impact, plus findings that belong to no single service."""

    pin: str
    services: tuple[ServiceImpact, ...]
    other: tuple[Diagnostic, ...]  # sources that failed to load, host-wide findings

    @property
    def ok(self) -> bool:
        """True when no service breaks and nothing else is an error."""
        return not any(s.breaks for s in self.services) and not any(d.is_error for d in self.other)


def _lines_of(svc: ServiceSpec) -> set[int]:
    """Every source line inside the host file's ``services[i]`` block."""
    base = svc.base
    table = {**svc.doc.value_pos, **svc.doc.key_pos}
    lines = {line for path, (line, _) in table.items() if path[: len(base)] == base}
    if not lines:
        return set()
    # Comments and blank lines between a service's keys count as the service's too.
    return set(range(min(lines), max(lines) + 1))


def _argv_groups(result: RenderResult) -> dict[tuple[str, str], list[str]]:
    """(host, service) -> each flag group of its argv as one string, in order."""
    out: dict[tuple[str, str], list[str]] = {}
    for render in result.renders:
        for svc in render.services:
            out[(render.host.name, svc.placement.service.name)] = [
                " ".join(g.words) for g in svc.argv.groups]
    return out


def upgrade_report(root: Path, pin: str, jobs: int | None = None) -> UpgradeReport:
    """Check every service of every host against SGLang ``pin``; nothing is written."""
    new = run_fleet(root, None, pin=pin, jobs=jobs, detail=True)
    today = run_fleet(root, None, jobs=jobs, detail=True)
    before, after = _argv_groups(today), _argv_groups(new)
    models = new.models
    claimed: set[int] = set()
    impacts: list[ServiceImpact] = []
    for host in new.hosts:
        impacts.extend(_host_impacts(host, models, new.diagnostics, before, after, claimed))
    other = tuple(d for i, d in enumerate(new.diagnostics) if i not in claimed)
    return UpgradeReport(pin, tuple(impacts), other)


def _host_impacts(host: Host, models: dict[str, Model], diagnostics: list[Diagnostic],
                  before: dict[tuple[str, str], list[str]],
                  after: dict[tuple[str, str], list[str]], claimed: set[int]) -> list[ServiceImpact]:
    """The impact on each service of ``host``; marks the diagnostics it attributes."""
    out: list[ServiceImpact] = []
    for svc in host.services:
        model = models.get(svc.model)
        model_path = model.doc.path if model is not None else None
        lines = _lines_of(svc)
        mine: list[Diagnostic] = []
        for i, d in enumerate(diagnostics):
            if d.pos.path == model_path or (d.pos.path == host.doc.path and d.pos.line in lines):
                mine.append(d)
                claimed.add(i)
        key = (host.name, svc.name)
        old, new = before.get(key, []), after.get(key, [])
        out.append(ServiceImpact(
            host=host.name, service=svc.name, current_pin=host.sglang.pin,
            diagnostics=tuple(mine),
            removed_words=tuple(w for w in old if w not in new) if new else (),
            added_words=tuple(w for w in new if w not in old) if old else (),
        ))
    return out


def format_report(report: UpgradeReport) -> list[str]:
    """The report as lines for stdout: one block per service, then a summary."""
    lines: list[str] = []
    for s in report.services:
        if s.breaks:
            state = "BREAKS"
        elif s.diagnostics:
            state = "ok, with warnings"
        else:
            state = "ok"
        lines.append(f"{s.host}/{s.service} (pin {s.current_pin} -> {report.pin}): {state}")
        lines.extend(f"  {d}" for d in s.diagnostics)
        for w in s.removed_words:
            lines.append(f"  renders no longer: {w}")
        for w in s.added_words:
            lines.append(f"  renders instead:   {w}")
    broken = sum(s.breaks for s in report.services)
    lines.append(f"gen: {broken} of {len(report.services)} service(s) would break on "
                 f"SGLang {report.pin}")
    return lines
