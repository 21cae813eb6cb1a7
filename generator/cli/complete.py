"""Shell completion callbacks: host names, service names and SGLang pins from the repository.

click completes when the shell sets ``_GEN_COMPLETE`` (README: Shell completion). The
callbacks read only file names and the ``services`` of host files, quickly and without
failing: a completion never prints an error into the operator's prompt.
"""

from __future__ import annotations

from pathlib import Path

import click
from click.shell_completion import CompletionItem


def _root(ctx: click.Context) -> Path:
    """The --root given so far on the command line (default: the current folder)."""
    root = ctx.params.get("root")
    return Path(root) if root else Path(".")


def _stems(folder: Path, pattern: str) -> list[str]:
    try:
        return sorted(p.stem for p in folder.glob(pattern))
    except OSError:
        return []


def host_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Hosts: the file names in hosts/ (``hosts/NAME.yaml``)."""
    return [CompletionItem(n) for n in _stems(_root(ctx) / "hosts", "*.yaml") if n.startswith(incomplete)]


def model_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Models: the file names in models/ (``models/NAME.yaml``)."""
    return [CompletionItem(n) for n in _stems(_root(ctx) / "models", "*.yaml") if n.startswith(incomplete)]


def pins(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """SGLang pins with a committed catalog (``catalogs/sglang/PIN.json``, not its companions)."""
    from generator.sglang.catalog import known_pins  # only when completing

    try:
        found = known_pins(_root(ctx))
    except OSError:
        return []
    return [CompletionItem(n) for n in found if n.startswith(incomplete)]


def service_names(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Services of the host given with --host (of every host when none is given yet)."""
    hosts = ctx.params.get("host")
    names = [hosts] if isinstance(hosts, str) else list(hosts or [])
    folder = _root(ctx) / "hosts"
    files = [folder / f"{n}.yaml" for n in names] if names else sorted(folder.glob("*.yaml"))
    found: set[str] = set()
    from generator.errors import Diagnostics
    from generator.load.manifests import load_file  # only when completing services

    for path in files:
        # gen's own reader: a regular file, bounded, no alias bomb (a TAB in a checkout of
        # someone's pull request must not hang the shell on hosts/x.yaml -> /dev/zero).
        doc = load_file(path, path.name, Diagnostics())
        data = doc.data if doc is not None else None
        services = data.get("services") if isinstance(data, dict) else None
        for svc in services if isinstance(services, list) else []:
            if isinstance(svc, dict) and isinstance(svc.get("name"), str):
                found.add(svc["name"])
    return [CompletionItem(n) for n in sorted(found) if n.startswith(incomplete)]
