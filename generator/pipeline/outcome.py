"""What the per-host pipeline returns for one host file (generator/pipeline/host.py).

Kept apart from the pipeline itself, so that the fleet runner and the worker results it
receives do not import the planning and templating code (jinja2, the flag checker).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.emit.writer import HostTree
from generator.errors import Diagnostic
from generator.load.acks import Ack
from generator.load.addresses import Reach

if TYPE_CHECKING:
    from generator.emit.render import HostRender
    from generator.load.resolve import Host


@dataclass(frozen=True)
class HostOutcome:
    """What one host file produced.

    ``load`` holds the diagnostics of loading and validating the file, ``render`` those of
    planning and rendering it (empty when it was only loaded). ``tree`` is None when the
    file did not load, was not rendered, or rendering failed; ``detail`` is the full
    render, only when asked for (it holds documents and catalogs).
    """

    stem: str  # the file name without suffix: what --host selects
    name: str | None  # the host's name, None when the file did not load
    load: tuple[Diagnostic, ...]
    render: tuple[Diagnostic, ...]
    rendered: bool  # True when planning and rendering ran (successfully or not)
    tree: HostTree | None
    models: tuple[str, ...] = ()  # the models its services name (for unused-model checks)
    detail: HostRender | None = None
    host: Host | None = None  # the loaded host, only with ``detail``
    reach: Reach | None = None  # where its ssh goes (for the same-address check), when it loaded
    notes: tuple[str, ...] = ()  # what a check could not decide, by kind: "memory:snapshot:<model>", ...
    acks: tuple[Ack, ...] = ()  # its acknowledged warnings (load/acks.py), when it loaded
