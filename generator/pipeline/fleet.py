"""The render pipeline as plain functions: load -> validate -> place -> flags -> render -> plan.

The CLI calls these and only turns their results into output and exit codes; tests call
them directly. Nothing here prints.

Two entry points give the same diagnostics and the same trees:

* :func:`run` renders in this process and keeps every intermediate object
  (``RenderResult.renders``: placements, argv, catalogs) for later passes;
* :func:`render_fleet` is what the CLI uses for ``render``/``diff``/``check``: each host
  file is loaded, validated and rendered on its own (per-host work is independent), in a
  process pool over hosts, and the result per host is cached by the hash of everything it
  depends on (:mod:`generator.pipeline.cache`), so a no-change run does almost no work.
  Output and diagnostics do not depend on the number of jobs or on the cache.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.pipeline import cache as render_cache
from generator.errors import Diagnostic, Diagnostics, GenError, Position
from generator.load.manifests import load_file, load_text
from generator.emit.render import HostRender, render_host
from generator.load.resolve import (
    Host,
    Model,
    Sources,
    check_host_refs,
    check_name_matches_file,
    host_from_doc,
    load_dir,
    model_from_doc,
    load_sources,
)
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, check_strings, suggest, validate
from generator.emit.writer import Change, HostTree, plan, plan_orphans

OUTPUT_DIR = "output"
# Below this many hosts to render, starting worker processes costs more than it saves.
MIN_HOSTS_FOR_POOL = 8


class UnknownHostError(GenError, KeyError):
    """``--host`` names no inventory in hosts/."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


@dataclass
class RenderResult:
    """Diagnostics of a run, the rendered trees, and the plan against ``output/``.

    :func:`run` fills ``renders`` (trees plus what they were rendered from);
    :func:`render_fleet` fills only ``host_trees``. ``trees`` works for both.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    renders: list[HostRender] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    host_trees: list[HostTree] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no diagnostic is an error."""
        return not any(d.is_error for d in self.diagnostics)

    @property
    def trees(self) -> list[HostTree]:
        """The rendered tree of each selected host."""
        return self.host_trees or [r.tree for r in self.renders]

    @property
    def dirty(self) -> list[Change]:
        """Changes that would modify ``output/``."""
        return [c for c in self.changes if c.action.value != "unchanged"]


def _select(known: Mapping[str, Any], names: list[str] | None) -> list[str]:
    """The host names to render, in order; an unknown name raises UnknownHostError."""
    if names is None:
        return list(known)
    for name in names:
        if name not in known:
            hint = suggest(name, known)
            raise UnknownHostError(f"no host '{name}' in hosts/ (known: {', '.join(known) or 'none'})"
                                   + (f"; did you mean '{hint}'?" if hint else ""))
    return list(names)


def select_hosts(sources: Sources, names: list[str] | None) -> list[Host]:
    """The hosts to render: all of them for None, else the named ones (unknown name: error)."""
    return [sources.hosts[n] for n in _select(sources.hosts, names)]


def _plan(root: Path, trees: list[HostTree], host_names: list[str] | None, known: Mapping[str, Any]) -> list[Change]:
    output = root / OUTPUT_DIR
    changes: list[Change] = []
    for tree in trees:
        changes.extend(plan(output, tree))
    if host_names is None:
        changes.extend(plan_orphans(output, known))
    return changes


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
    result.changes = _plan(root, result.trees, host_names, sources.hosts)
    return result


# ----- the fleet path: per-host, parallel, cached ---------------------------------------


@dataclass(frozen=True)
class _HostFile:
    """One file of hosts/: its displayed path, bytes and cache key."""

    path: Path
    display: str
    data: bytes
    key: str


def _host_files(root: Path, shared: str) -> list[_HostFile]:
    """Every host file, in the order resolve.load_sources reads them."""
    directory = root / "hosts"
    if not directory.is_dir():
        return []
    files = []
    peers = render_cache.multinode_peers(root)
    for path in sorted(directory.iterdir()):
        if path.suffix not in (".yaml", ".yml") or path.name.startswith("."):
            continue
        display = f"hosts/{path.name}"
        try:
            data = path.read_bytes()
        except OSError:
            data = b"\0unreadable"  # load_file below reports it; the key just must not collide
        key = render_cache.host_key(shared, display, data, peers.get(path.stem, ()))
        files.append(_HostFile(path, display, data, key))
    return files


def _load_models(root: Path, diags: Diagnostics) -> tuple[dict[str, Model], set[str]]:
    """Models keyed by name and the names of model files that failed (as load_sources does)."""
    models: dict[str, Model] = {}
    broken: set[str] = set()
    for doc in load_dir(root, "models", MODEL_SCHEMA, diags, broken):
        model = model_from_doc(doc)
        models[model.name] = model
    return dict(sorted(models.items())), broken


def _load_host(root: Path, hf: _HostFile, models: dict[str, Model], broken: set[str],
               diags: Diagnostics) -> Host | None:
    """Load, validate and resolve one host file exactly as resolve.load_sources does."""
    try:
        doc = load_text(hf.data.decode("utf-8"), hf.display, diags)
    except UnicodeDecodeError:
        doc = load_file(hf.path, hf.display, diags)  # reports the bad byte the same way
    clean = doc is not None and check_strings(doc, diags)
    if doc is None or not validate(doc, HOST_SCHEMA, diags) or not clean:
        return None
    check_name_matches_file(doc, hf.path.stem, "host", diags)
    host = host_from_doc(doc)
    check_host_refs(host, models, broken, diags)
    return host


# Set in each worker (and in this process for serial work) by _init_worker.
_WORKER: dict[str, Any] = {}


def _init_worker(root: Path, models: dict[str, Model], broken: set[str], pin: str | None) -> None:
    _WORKER.update(root=root, models=models, broken=broken, pin=pin)


def _process(hf: _HostFile, render: bool) -> render_cache.HostEntry:
    """Load one host file and, when asked and it loaded, render it."""
    root, models, broken, pin = _WORKER["root"], _WORKER["models"], _WORKER["broken"], _WORKER["pin"]
    load_diags = Diagnostics()
    host = _load_host(root, hf, models, broken, load_diags)
    render_diags = Diagnostics()
    tree = None
    if host is not None and render:
        sources = Sources(root=root, models=models, hosts={host.name: host})
        rendered = render_host(sources, host, render_diags, pin)
        tree = rendered.tree if rendered is not None else None
    return render_cache.HostEntry(host.name if host else None, tuple(load_diags.items),
                                  tuple(render_diags.items), tree)


def _process_chunk(work: list[tuple[_HostFile, bool]]) -> list[render_cache.HostEntry]:
    return [_process(hf, render) for hf, render in work]


def _chunks(items: list[Any], jobs: int) -> list[list[Any]]:
    """Contiguous chunks, about four per worker, so uneven hosts still balance."""
    count = max(1, min(len(items), jobs * 4))
    size = -(-len(items) // count)
    return [items[i:i + size] for i in range(0, len(items), size)]


def _compute(work: list[tuple[_HostFile, bool]], jobs: int, init: tuple[Any, ...]) -> list[render_cache.HostEntry]:
    """Process host files, in a pool of ``jobs`` workers when that pays; results in order."""
    if jobs <= 1 or len(work) < MIN_HOSTS_FOR_POOL:
        _init_worker(*init)
        return _process_chunk(work)
    methods = multiprocessing.get_all_start_methods()
    # fork: workers start in milliseconds and share the loaded modules.
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                             initargs=init) as pool:
        return [entry for chunk in pool.map(_process_chunk, _chunks(work, jobs)) for entry in chunk]


def render_fleet(root: Path, host_names: list[str] | None, jobs: int | None = None,
                 use_cache: bool = True) -> RenderResult:
    """Like :func:`run` without ``renders``: per-host work in ``jobs`` processes, cached.

    ``jobs=None`` uses every core. Diagnostics, trees and changes are identical to
    :func:`run`'s for any ``jobs`` and whether or not the cache answered.
    """
    jobs = max(1, jobs or os.cpu_count() or 1)
    cache = render_cache.cache_dir() if use_cache else None
    shared = render_cache.shared_key(root, None)
    files = _host_files(root, shared)

    # Models: their diagnostics are reported once; the objects are only needed on a miss.
    model_key = render_cache.host_key(shared, "models/", b"")
    cached_models = render_cache.load(cache, model_key)
    model_diags: list[Diagnostic]
    models: dict[str, Model] | None = None
    broken: set[str] = set()
    if isinstance(cached_models, tuple):
        model_diags = list(cached_models)
    else:
        diags = Diagnostics()
        models, broken = _load_models(root, diags)
        model_diags = diags.items
        render_cache.store(cache, model_key, tuple(model_diags))

    loaded = [render_cache.load(cache, hf.key) for hf in files]
    entries = [e if isinstance(e, render_cache.HostEntry) else None for e in loaded]
    missing = [i for i, e in enumerate(entries) if e is None]
    if missing:
        if models is None:
            models, broken = _load_models(root, Diagnostics())
        # Render the missing hosts only when they are selected; a by-name selection can
        # only be known after loading, so load-only work is done for the others.
        wanted = None if host_names is None else set(host_names)
        work = [(files[i], wanted is None or files[i].path.stem in wanted) for i in missing]
        for i, entry in zip(missing, _compute(work, jobs, (root, models, broken, None))):
            entries[i] = entry
            if entry.name is None or entry.tree is not None or entry.render:
                render_cache.store(cache, files[i].key, entry)  # complete: loaded (and rendered)
    done: list[render_cache.HostEntry] = [e for e in entries if e is not None]

    # Like load_sources: hosts by name (a later file with the same name wins), name order.
    by_name: dict[str, render_cache.HostEntry] = {}
    for entry in done:
        if entry.name is not None:
            by_name[entry.name] = entry
    by_name = dict(sorted(by_name.items()))

    all_diags: list[Diagnostic] = list(model_diags)
    for entry in done:
        all_diags.extend(entry.load)
    if not (root / "hosts").is_dir():
        all_diags.append(Diagnostic(Position("hosts/"), "R007", f"no hosts/ folder under {root}"))
    selected = _select(by_name, host_names)
    # A host selected by name whose file was not rendered (its stem differs): render it now.
    late = [n for n in selected if by_name[n].tree is None and not by_name[n].render]
    if late:
        if models is None:
            models, broken = _load_models(root, Diagnostics())
        index = {e.name: i for i, e in enumerate(done) if e.name is not None}
        for name, entry in zip(late, _compute([(files[index[n]], True) for n in late], jobs,
                                              (root, models, broken, None))):
            by_name[name] = entry
            render_cache.store(cache, files[index[name]].key, entry)
    result = RenderResult()
    for name in selected:
        all_diags.extend(by_name[name].render)
        tree = by_name[name].tree
        if tree is not None:
            result.host_trees.append(tree)
    result.diagnostics = sorted(all_diags, key=Diagnostic.sort_key)
    if not result.ok:
        return result
    result.changes = _plan(root, result.host_trees, host_names, by_name)
    return result
