"""The render pipeline as plain functions: load -> validate -> place -> flags -> render -> plan.

The CLI calls these and only turns their results into output and exit codes; tests call
them directly. Nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import Diagnostic, Diagnostics, GenError, Position
from .render import HostRender, render_host
from .resolve import Host, Sources, load_sources
from .schema import suggest
from .writer import Change, HostTree, plan, plan_orphans

OUTPUT_DIR = "output"


class UnknownHostError(GenError, KeyError):
    """``--host`` names no inventory in hosts/."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


@dataclass
class RenderResult:
    """Diagnostics of a run, the rendered trees, and the plan against ``output/``."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    renders: list[HostRender] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no diagnostic is an error."""
        return not any(d.is_error for d in self.diagnostics)

    @property
    def trees(self) -> list[HostTree]:
        """The rendered tree of each selected host."""
        return [r.tree for r in self.renders]

    @property
    def dirty(self) -> list[Change]:
        """Changes that would modify ``output/``."""
        return [c for c in self.changes if c.action.value != "unchanged"]


def select_hosts(sources: Sources, names: list[str] | None) -> list[Host]:
    """The hosts to render: all of them for None, else the named ones (unknown name: error)."""
    if names is None:
        return list(sources.hosts.values())
    chosen = []
    for name in names:
        if name not in sources.hosts:
            hint = suggest(name, sources.hosts)
            raise UnknownHostError(f"no host '{name}' in hosts/ (known: {', '.join(sources.hosts) or 'none'})"
                                   + (f"; did you mean '{hint}'?" if hint else ""))
        chosen.append(sources.hosts[name])
    return chosen


def run(root: Path, host_names: list[str] | None, pin: str | None = None) -> RenderResult:
    """Validate every source, render the selected hosts, and plan the writes.

    ``host_names=None`` means every host, and then managed files of hosts that no longer
    exist are planned for removal too. ``pin`` checks every host against that SGLang
    catalog instead of its own (the plan then means nothing and is left empty).
    """
    diags = Diagnostics()
    sources = load_sources(root, diags)
    result = RenderResult()
    if not (root / "hosts").is_dir():
        diags.error(Position("hosts/"), "R007", f"no hosts/ folder under {root}")
    hosts = select_hosts(sources, host_names)
    for host in hosts:
        rendered = render_host(sources, host, diags, pin)
        if rendered is not None:
            result.renders.append(rendered)
    result.diagnostics = diags.sorted()
    if not result.ok or pin is not None:
        return result
    output = root / OUTPUT_DIR
    for tree in result.trees:
        result.changes.extend(plan(output, tree))
    if host_names is None:
        result.changes.extend(plan_orphans(output, sources.hosts))
    return result
