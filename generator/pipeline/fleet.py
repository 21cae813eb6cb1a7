"""The fleet runner: the per-host pipeline over every host file, scheduled and cached.

:func:`run_fleet` is what every command calls. It lists ``hosts/``, loads the models once,
and runs :func:`generator.pipeline.host.process_host` for each host file, in a process
pool when that pays, answering from the render cache (generator/pipeline/cache.py) where
it can. Then it puts the results together in one way: every file's load diagnostics,
the selected hosts' render diagnostics, their trees, and the plan against ``output/``.
Output and diagnostics do not depend on the number of jobs or on the cache. Nothing
here prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.emit.writer import Action, Change, HostTree, plan_orphans, plan_trees
from generator.errors import Diagnostic, GenError, Position
from generator.load.addresses import Reach, documents, reach, reach_errors
from generator.load.files import SourceFile, host_file_index, source_files
from generator.load.limits import MAX_JOBS
from generator.pipeline import cache as render_cache
from generator.pipeline.codec import diagnostic_json, diagnostics_from_json, outcome_from_json, outcome_json
from generator.pipeline.outcome import HostOutcome

if TYPE_CHECKING:
    from generator.emit.render import HostRender
    from generator.load.resolve import Host, Model
    from generator.load.sources import ModelSet

# generator.pipeline.host (planning, flags, jinja2), .models, load.sources (schemas,
# cerberus) and the process pool are imported where work is done: a run the render cache
# answers entirely never needs them.

OUTPUT_DIR = "output"
# Below this many hosts to process, starting worker processes costs more than it saves.
MIN_HOSTS_FOR_POOL = 8


class UnknownHostError(GenError, KeyError):
    """``--host`` names no file in hosts/."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


@dataclass
class RenderResult:
    """Diagnostics of a run, the selected hosts' trees, and the plan against ``output/``.

    ``renders`` (what each service was rendered from), ``hosts`` (every loaded host, by
    name) and ``models`` are filled only for ``detail=True``;
    ``notices`` are one-line remarks about the run itself (e.g. a refused cache folder).
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    trees: list[HostTree] = field(default_factory=list)
    renders: list[HostRender] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    models: dict[str, Model] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no diagnostic is an error."""
        return not any(d.is_error for d in self.diagnostics)

    @property
    def dirty(self) -> list[Change]:
        """Changes that would modify ``output/``."""
        return [c for c in self.changes if c.action is not Action.UNCHANGED]


def _select(stems: Mapping[str, Any], names: list[str] | None) -> set[str] | None:
    """The host file stems to render (None: all); an unknown name raises UnknownHostError."""
    if names is None:
        return None
    known = sorted(stems)
    for name in names:
        if name not in stems:
            from generator.load.schema import suggest  # an unknown name only

            hint = suggest(name, known)
            raise UnknownHostError(f"no host '{name}' in hosts/ (known: {', '.join(known) or 'none'})"
                                   + (f"; did you mean '{hint}'?" if hint else ""))
    return set(names)


# ----- scheduling -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Work:
    """One host file to process, with the peer files its render may read."""

    file: SourceFile
    peers: dict[str, SourceFile | None]
    render: bool


# Set in each worker (and in this process for serial work) by _init_worker.
_WORKER: dict[str, Any] = {}


def _init_worker(root: Path, models: ModelSet, pin: str | None, detail: bool) -> None:
    _WORKER.update(root=root, models=models, pin=pin, detail=detail)


def _process_chunk(work: list[_Work]) -> list[HostOutcome]:
    from generator.pipeline.host import process_host

    w = _WORKER
    return [process_host(w["root"], item.file, w["models"], item.peers, item.render, w["pin"], w["detail"])
            for item in work]


def _chunks(items: list[Any], jobs: int) -> list[list[Any]]:
    """Contiguous chunks, about four per worker, so uneven hosts still balance."""
    count = max(1, min(len(items), jobs * 4))
    size = -(-len(items) // count)
    return [items[i:i + size] for i in range(0, len(items), size)]


def _compute(work: list[_Work], jobs: int, init: tuple[Any, ...]) -> list[HostOutcome]:
    """Process host files, in a pool of ``jobs`` workers when that pays; results in order."""
    _init_worker(*init)
    if jobs <= 1 or len(work) < MIN_HOSTS_FOR_POOL:
        return _process_chunk(work)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # The first host is processed here, before the fork: it imports the pipeline and fills
    # this process's caches (schema validators, catalogs, rules, flag tables, compiled
    # templates), which forked workers then share instead of each building them again.
    # The same function on the same input: the outcome is the one a worker would return.
    first = _process_chunk(work[:1])
    methods = multiprocessing.get_all_start_methods()
    # fork: workers start in milliseconds and share the loaded modules.
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                             initargs=init) as pool:
        return first + [o for chunk in pool.map(_process_chunk, _chunks(work[1:], jobs)) for o in chunk]


# ----- the models, once per run -----------------------------------------------------------

@dataclass
class _Models:
    """The models' diagnostics, multi-node groups and lone checks; the set once it is needed."""

    root: Path
    diagnostics: tuple[Diagnostic, ...]
    groups: dict[str, list[str]]
    alone: dict[str, tuple[Diagnostic, ...]]  # findings of each model checked without a host
    loaded: ModelSet | None = None

    def get(self) -> ModelSet:
        """The loaded models (loaded now when the cache answered for them)."""
        if self.loaded is None:
            from generator.load.sources import load_models

            self.loaded = load_models(self.root)
        return self.loaded


def _string_lists(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, list) and all(isinstance(n, str) for n in v) for v in value.values())


def _cached_models(root: Path, entry: tuple[Any, str] | None) -> _Models | None:
    """The models entry :func:`_models` stored (it has no text), or None when it is not exactly that."""
    if entry is None or entry[1]:
        return None
    payload = entry[0]
    if not isinstance(payload, dict) or set(payload) != {"diagnostics", "groups", "alone"}:
        return None
    diags, groups, alone = diagnostics_from_json(payload["diagnostics"]), payload["groups"], payload["alone"]
    if diags is None or not _string_lists(groups) or not isinstance(alone, dict):
        return None
    lone = {name: diagnostics_from_json(items) for name, items in alone.items()}
    if any(v is None for v in lone.values()):
        return None
    return _Models(root, diags, groups, {k: v for k, v in lone.items() if v is not None})


def _models(root: Path, folder: Path | None, key: str) -> _Models:
    """From the cache when it holds this key (the models' and catalogs' bytes are in it), else loaded."""
    cached = _cached_models(root, render_cache.load(folder, key))
    if cached is not None:
        return cached
    from generator.load.sources import load_models
    from generator.pipeline.models import check_models_alone

    models = load_models(root)
    hosts = {h for m in models.models.values() if m.multinode for h in m.multinode.hosts}
    groups = {h: list(models.peer_names(h)) for h in sorted(hosts)}
    alone = check_models_alone(root, models)
    render_cache.store(folder, key, {"diagnostics": [diagnostic_json(d) for d in models.diagnostics],
                                     "groups": groups,
                                     "alone": {k: [diagnostic_json(d) for d in v] for k, v in alone.items()}})
    return _Models(root, models.diagnostics, groups, alone, models)


# ----- putting it together ------------------------------------------------------------------

def _outcomes(root: Path, files: list[SourceFile], wanted: set[str] | None, pin: str | None,
              jobs: int, detail: bool, cache: Path | None) -> tuple[list[HostOutcome], _Models]:
    """Every host file's outcome (rendered when selected), and the models' diagnostics."""
    shared = render_cache.shared_key(root, pin)
    models = _models(root, cache, render_cache.host_key(shared, "models/", b""))
    index = host_file_index(files)
    outcomes: list[HostOutcome | None] = []
    work: list[_Work] = []
    keys: list[str] = []
    for sf in files:
        peers = {n: index.get(n) for n in models.groups.get(sf.stem, []) if n != sf.stem}
        render = wanted is None or sf.stem in wanted
        key = render_cache.host_key(shared, sf.display, sf.data, tuple(
            (p.display if p else n, p.data if p else None) for n, p in peers.items()))
        found = outcome_from_json(render_cache.load(cache, key), sf.stem)
        if found is not None and (found.rendered or not render or found.name is None):
            outcomes.append(found)
            continue
        outcomes.append(None)
        work.append(_Work(sf, peers, render))
        keys.append(key)
    if work:
        computed = _compute(work, jobs, (root, models.get(), pin, detail))
        done = iter(computed)
        outcomes = [o if o is not None else next(done) for o in outcomes]
        for key, outcome in zip(keys, computed, strict=True):
            render_cache.store(cache, key, *outcome_json(outcome))
    return [o for o in outcomes if o is not None], models


def _reaches(files: list[SourceFile], outcomes: list[HostOutcome]) -> list[Reach]:
    """Every host file's ssh target, in file order: from its outcome when it loaded, else
    parsed here (a file that parses but fails the schema still takes part in the check)."""
    out: list[Reach] = []
    for sf, outcome in zip(files, outcomes, strict=True):
        if outcome.name is not None:
            found = outcome.reach
        else:
            docs = documents([(sf.display, sf.data)]) if sf.data is not None else []
            found = reach(docs[0]) if docs else None
        if found is not None:
            out.append(found)
    return out


def run_fleet(root: Path, host_names: list[str] | None, pin: str | None = None, jobs: int | None = None,
              use_cache: bool = True, detail: bool = False) -> RenderResult:
    """Validate every source, render the selected hosts, and plan the writes.

    ``host_names`` are host file stems (``hosts/<name>.yaml``); None means every host, and
    then managed files of hosts that no longer exist are planned for removal too. ``pin``
    checks every host against that SGLang catalog instead of its own (the plan then means
    nothing and is left empty). ``detail`` keeps each host's full render (``renders``);
    it is never cached. ``jobs=None`` uses every core.
    """
    jobs = max(1, min(jobs or os.cpu_count() or 1, MAX_JOBS))  # a 256-core default too
    result = RenderResult()
    cache_folder = render_cache.open_cache() if use_cache and not detail else render_cache.CacheFolder(None)
    if cache_folder.warning:
        result.notices.append(cache_folder.warning)
    files = source_files(root, "hosts")
    wanted = _select(host_file_index(files), host_names)
    outcomes, models = _outcomes(root, files, wanted, pin, jobs, detail, cache_folder.path)
    diagnostics = list(models.diagnostics)
    if detail:
        result.models = dict(models.get().models)
    for outcome in outcomes:
        diagnostics.extend(outcome.load)
    if not (root / "hosts").is_dir():
        diagnostics.append(Diagnostic(Position("hosts/"), "R007", f"no hosts/ folder under {root}"))
    # One machine, two inventories: a property of all host files together (never cached).
    diagnostics.extend(reach_errors(_reaches(files, outcomes)))
    if host_names is None:  # every host is in: a model none of them names is checked alone
        used = {m for o in outcomes for m in o.models}
        diagnostics.extend(d for name, found in models.alone.items() if name not in used for d in found)
    # Hosts by name, a later file with the same name winning, in name order (or as asked).
    by_name = dict(sorted({o.name: o for o in outcomes if o.name is not None}.items()))
    result.hosts = [o.host for o in by_name.values() if o.host is not None]
    if host_names is None:
        selected = [o for o in by_name.values()]
    else:
        by_stem = {o.stem: o for o in outcomes}
        selected = [by_stem[n] for n in host_names if n in by_stem]
    for outcome in selected:
        diagnostics.extend(outcome.render)
        if outcome.tree is not None:
            result.trees.append(outcome.tree)
        if outcome.detail is not None:
            result.renders.append(outcome.detail)
    # A finding in a model manifest is found again for every service that uses the model:
    # 300 services of one model gave 300 identical lines. Each is reported once (the
    # same file, position, code and message: nothing is lost); distinct ones all stay.
    result.diagnostics = sorted(dict.fromkeys(diagnostics), key=Diagnostic.sort_key)
    if result.ok and pin is None:
        output = root / OUTPUT_DIR
        result.changes.extend(plan_trees(output, result.trees))
        if host_names is None:
            result.changes.extend(plan_orphans(output, by_name))
    return result


def load_inventory_host(root: Path, name: str) -> tuple[Host | None, list[Diagnostic]]:
    """One host file loaded (with its peers) but not rendered: the host and its own findings.

    For commands that need an inventory, not its services (``gen sglang snapshot --host``,
    ``gen import --host``). An unknown name raises UnknownHostError.
    """
    from generator.load.sources import load_models
    from generator.pipeline.host import process_host

    files = source_files(root, "hosts")
    index = host_file_index(files)
    _select(index, [name])
    sf = index[name]
    models = load_models(root)
    peers = {n: index.get(n) for n in models.peer_names(name) if n != name}
    outcome = process_host(root, sf, models, peers, render=False, detail=True)
    return outcome.host, sorted(outcome.load, key=Diagnostic.sort_key)


def run(root: Path, host_names: list[str] | None, pin: str | None = None) -> RenderResult:
    """:func:`run_fleet` in this process, uncached, keeping every host's full render."""
    return run_fleet(root, host_names, pin, jobs=1, use_cache=False, detail=True)


def render_fleet(root: Path, host_names: list[str] | None, jobs: int | None = None,
                 use_cache: bool = True) -> RenderResult:
    """:func:`run_fleet` as render, diff and check use it: in a pool, cached, trees only."""
    return run_fleet(root, host_names, jobs=jobs, use_cache=use_cache)
