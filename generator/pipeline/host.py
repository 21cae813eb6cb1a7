"""The per-host pipeline: one host file -> load -> place -> cluster -> flags -> rules -> render.

:func:`process_host` is the only place a host is turned into files. Every command goes
through it: render, diff, check and ansible via the fleet runner (generator/pipeline/fleet.py,
which only schedules it in a process pool and caches what it returns), verify, status,
preflight and ``check --sglang`` with ``detail=True`` so they keep what each service was
rendered from. Nothing here prints or writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from generator.checkpoint.attach import snapshot_of
from generator.emit.owned_env import check_environment
from generator.emit.render import render_host
from generator.emit.templates import Templates
from generator.emit.secrets import check_and_add_config
from generator.errors import CatalogMissingError, Diagnostics, Position
from generator.load.acks import acks_of
from generator.load.addresses import reach
from generator.load.sources import HostSources, ModelSet, SourceFile, load_group
from generator.pipeline.manifest_terms import rewrite_fixes, written_by_keys
from generator.pipeline.outcome import HostOutcome
from generator.plan import cluster
from generator.plan.argv import build_argv
from generator.plan.memory_check import check_service_memory
from generator.plan.placement import defer_numa_to_sglang, place_host
from generator.plan.services import PlannedHost, PlannedService, service_environment
from generator.sglang.catalog import Catalog, FlagTables, known_pins, load_catalog, load_flag_tables
from generator.sglang.envcheck import check_service_env
from generator.sglang.rules import RuleSpec, catalog_rules, check_rules, sglang_numa_flag


def _catalogs(root: Path, host_pos: Position, pin: str, diags: Diagnostics,
              approximate: bool = False) -> tuple[Catalog, list[Catalog]] | None:
    """The catalog of ``pin`` and every other committed one (for "renamed in" hints).

    ``approximate``: a release only the flag history knows gets the catalog built from it
    (``gen check --sglang PIN``; the CLI prints how approximate it is).
    """
    try:
        catalog = load_catalog(root, pin)
    except CatalogMissingError as exc:
        from generator.sglang.historycatalog import history_catalog

        found = history_catalog(root, pin) if approximate else None
        if found is None:
            diags.error(host_pos, "C001", str(exc))
            return None
        catalog = found.catalog
    others = []
    for other in known_pins(root):
        if other != pin:
            try:
                others.append(load_catalog(root, other))
            except CatalogMissingError:
                continue
    return catalog, others


def plan_host(sources: HostSources, diags: Diagnostics, pin: str | None = None) -> PlannedHost | None:
    """Place, join clusters, build and check every service of one host. None when anything is wrong.

    ``pin`` checks the flags against another SGLang pin than the host's own (upgrade
    impact: ``gen check --sglang PIN``).
    """
    host = sources.host
    # No finding may quote a secret of the files this host's render reads.
    diags.hide(host.doc.secrets.union(*(m.doc.secrets for m in sources.models.values())))
    before = diags.error_count
    override = pin is not None
    pin = pin or host.sglang.pin
    placements = cluster.join(sources, host, place_host(host, sources.models, diags), diags)
    found = _catalogs(sources.root, host.pos("sglang", "pin"), pin, diags, approximate=override)
    if found is None:
        return None
    catalog, others = found
    planned: list[PlannedService] = []
    tables: FlagTables | None = None  # the flag tables and rules: read once per host, when needed
    rules: tuple[RuleSpec, ...] | None = None
    for p in placements:
        tables = tables if tables is not None else load_flag_tables(catalog.source_file)
        argv = build_argv(p, host.sglang.python, catalog, diags, others, tables)
        environment = service_environment(p)
        rules = rules if rules is not None else catalog_rules(catalog)
        first = len(diags.items)
        settings = check_rules(catalog, p, argv, environment, diags, rules, host.facts)
        # The rules speak of flags; a flag a manifest key wrote is named by its key in the fix.
        diags.items[first:] = rewrite_fixes(diags.items[first:], written_by_keys(p, argv, catalog, tables),
                                            (p.model.doc.path, host.doc.path))
        memory = check_service_memory(p, settings, pin, diags)
        check_service_env(catalog.source_file, pin, [c.pin for c in others], p, diags)
        cluster.check_same_everywhere(sources, host, p, argv, catalog, diags)
        argv = check_and_add_config(catalog, argv, p, diags)  # no secrets in args/env; secret_args
        p = defer_numa_to_sglang(p, *sglang_numa_flag(argv, p.service), diags)  # CPU binding only
        service = PlannedService(p, argv, environment, memory)
        check_environment(sources.root, host, catalog, service, diags)  # env: vs gen's own
        planned.append(service)
    if diags.error_count > before or host.tainted or any(p.model.tainted for p in placements):
        return None  # every service was still checked: all findings at once
    return PlannedHost(host, catalog, tuple(planned))


def gpu_notes(planned: PlannedHost | None) -> tuple[str, ...]:
    """``gpu:compute_cap:<host>`` when a service of the host runs on GPUs without ``compute_cap``:
    the GPU rules (G codes) had no capability to read and stayed silent for it."""
    if planned is None or all(g.capability is not None for ps in planned.services for g in ps.placement.gpus):
        return ()
    return (f"gpu:compute_cap:{planned.host.name}",)


def memory_notes(planned: PlannedHost | None) -> tuple[str, ...]:
    """Why a service's memory could not be sized by token: ``memory:snapshot:<model>`` (no
    checkpoint snapshot: the snapshot's own info line names it), ``memory:memory_mib:<host>``
    (GPUs without memory_mib), ``memory:config:<model>:<why>`` (a captured snapshot whose
    config.json lacks what the bytes per token need). A snapshot written from published pages
    says itself that it holds only the keys cited and that what needs the others stays silent:
    no note for it (``gen show`` still gives the reason)."""
    if planned is None:
        return ()
    notes = []
    for ps in planned.services:
        skipped = (ps.memory.skipped if ps.memory is not None else None) or ""
        if "no checkpoint snapshot" in skipped:
            notes.append(f"memory:snapshot:{ps.placement.model.name}")
        if "no memory_mib" in skipped:
            notes.append(f"memory:memory_mib:{planned.host.name}")
        snapshot = snapshot_of(ps.placement.model)
        if skipped.startswith("the snapshot's ") and not (snapshot is not None and snapshot.checkpoint.published):
            notes.append(f"memory:config:{ps.placement.model.name}:{skipped}")
    return tuple(dict.fromkeys(notes))


def process_group(root: Path, members: Sequence[tuple[SourceFile, bool]], models: ModelSet,
                  peer_files: Mapping[str, SourceFile | None], pin: str | None = None, detail: bool = False,
                  templates: Templates | None = None) -> list[HostOutcome]:
    """Load the host files of one multi-node group once, then plan and, where asked (each
    member's bool), render each member: one outcome per member, in order.

    ``templates`` are what :func:`generator.emit.templates.read_templates` read; None (the
    folder has findings of its own) plans each host but renders nothing.
    """
    loaded = load_group(root, [sf for sf, _ in members], models, peer_files)
    return [_outcome(sf, sources, load_diags, render, pin, detail, templates)
            for (sf, render), (sources, load_diags) in zip(members, loaded, strict=True)]


def process_host(root: Path, sf: SourceFile, models: ModelSet, peer_files: Mapping[str, SourceFile | None],
                 render: bool = True, pin: str | None = None, detail: bool = False,
                 templates: Templates | None = None) -> HostOutcome:
    """Load one host file with its peers and, when ``render``, plan and render it (a group of one)."""
    return process_group(root, [(sf, render)], models, peer_files, pin, detail, templates)[0]


def _outcome(sf: SourceFile, sources: HostSources | None, load_diags: Diagnostics, render: bool, pin: str | None,
             detail: bool, templates: Templates | None) -> HostOutcome:
    """One loaded host file's outcome: planned and rendered when ``render``."""
    if sources is None:
        return HostOutcome(sf.stem, None, tuple(load_diags.items), (), False, None)
    host = sources.host
    used = tuple(sorted({s.model for s in host.services}))
    where = reach(host.doc)
    acks = acks_of(host.doc)
    if not render:
        return HostOutcome(sf.stem, host.name, tuple(load_diags.items), (), False, None, used,
                           None, host if detail else None, where, acks=acks)
    render_diags = Diagnostics()
    planned = plan_host(sources, render_diags, pin)
    rendered = render_host(planned, templates) if planned is not None and templates is not None else None
    return HostOutcome(sf.stem, host.name, tuple(load_diags.items), tuple(render_diags.items), True,
                       rendered.tree if rendered else None, used, rendered if detail else None,
                       host if detail else None, where, gpu_notes(planned) + memory_notes(planned), acks=acks)
