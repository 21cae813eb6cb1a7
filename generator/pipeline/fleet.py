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

import contextlib
import gc
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.emit.templates import Templates, read_templates
from generator.emit.writer import Action, Change, HostTree, Stray, plan_orphans, plan_trees
from generator.errors import Diagnostic, GenError, Position
from generator.load.addresses import Reach, documents, reach, reach_errors
from generator.load.files import SourceFile, case_collisions_of, host_file_index, source_files
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
# Allocations between young collections while hosts are processed (Python's default: 700).
GC_YOUNG_THRESHOLD = 2000


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
    """The host files of one multi-node group (or one host of none), processed together so
    each is loaded once, with whether to render each and the peer files they may read."""

    files: tuple[SourceFile, ...]
    renders: tuple[bool, ...]
    peers: dict[str, SourceFile | None]


# Set in each worker (and in this process for serial work) by _init_worker.
_WORKER: dict[str, Any] = {}


def _init_worker(root: Path, models: ModelSet, pin: str | None, detail: bool, templates: Templates | None) -> None:
    from generator.emit.render import reset_budget

    _WORKER.update(root=root, models=models, pin=pin, detail=detail, templates=templates)
    reset_budget()  # the templates' CPU budget is per run (emit/render.py)


def _process_chunk(work: list[_Work]) -> list[HostOutcome]:
    """Every group of ``work`` processed: its members' outcomes, in order, group after group."""
    from generator.pipeline.host import process_group

    w = _WORKER
    return [o for item in work
            for o in process_group(w["root"], list(zip(item.files, item.renders, strict=True)), w["models"],
                                   item.peers, w["pin"], w["detail"], w["templates"])]


def _chunks(items: list[Any], jobs: int) -> list[list[Any]]:
    """Contiguous chunks, about four per worker, so uneven hosts still balance."""
    count = max(1, min(len(items), jobs * 4))
    size = -(-len(items) // count)
    return [items[i:i + size] for i in range(0, len(items), size)]


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector's young pass less often, for a run of the fleet only.

    Loading a host makes tens of thousands of short-lived objects, so at Python's default
    threshold (700) the collector ran ~700 times over 1,000 hosts and promoted enough to
    trigger five full passes over everything live: a tenth of a cold check's CPU. At
    :data:`GC_YOUNG_THRESHOLD` the same garbage is collected in ~170 passes and one full
    one, at the same peak memory. Forked workers inherit the setting; it is put back here.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_YOUNG_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


@contextlib.contextmanager
def _no_collections() -> Iterator[None]:
    """Pause the cyclic garbage collector for work that makes no cyclic garbage.

    Reading cached outcomes and planning against ``output/`` build long-lived, acyclic
    objects (JSON data, frozen dataclasses): ~100,000 in a warm run of 1,000 hosts, which
    the collector would traverse again and again (a seventh of a warm `gen check`) to free
    nothing. Afterwards they go straight to the oldest generation (``freeze`` then
    ``unfreeze``: two list moves, documented as such), so they are not traversed at once
    when the collector is back on either; cyclic garbage, if any, waits for the next full
    collection. Objects someone else froze stay frozen (then nothing is moved).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


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
    groups: list[list[str]]  # each multi-node model's hosts, in rank order
    alone: dict[str, tuple[Diagnostic, ...]]  # findings of each model checked without a host
    templates: tuple[Diagnostic, ...]  # the templates' includes (emit/templates.include_problems)
    loaded: ModelSet | None = None

    def get(self) -> ModelSet:
        """The loaded models (loaded now when the cache answered for them)."""
        if self.loaded is None:
            from generator.load.sources import load_models

            self.loaded = load_models(self.root)
        return self.loaded


def _string_lists(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in value)


def _cached_models(root: Path, entry: tuple[Any, str] | None) -> _Models | None:
    """The models entry :func:`_models` stored (it has no text), or None when it is not exactly that."""
    if entry is None or entry[1]:
        return None
    payload = entry[0]
    if not isinstance(payload, dict) or set(payload) != {"diagnostics", "groups", "alone", "templates"}:
        return None
    diags, groups, alone = diagnostics_from_json(payload["diagnostics"]), payload["groups"], payload["alone"]
    includes = diagnostics_from_json(payload["templates"])
    if diags is None or includes is None or not _string_lists(groups) or not isinstance(alone, dict):
        return None
    lone = {name: diagnostics_from_json(items) for name, items in alone.items()}
    if any(v is None for v in lone.values()):
        return None
    return _Models(root, diags, groups, {k: v for k, v in lone.items() if v is not None}, includes)


def _models(root: Path, folder: Path | None, key: str, templates: Templates) -> _Models:
    """From the cache when it holds this key (the models', catalogs' and templates' bytes are
    in it), else loaded; with the templates' include check, which needs jinja2."""
    cached = _cached_models(root, render_cache.load(folder, key))
    if cached is not None:
        return cached
    from generator.emit.templates import include_problems
    from generator.load.sources import load_models
    from generator.pipeline.models import check_models_alone

    models = load_models(root)
    groups = [list(m.multinode.hosts) for m in models.models.values() if m.multinode]
    alone = check_models_alone(root, models)
    includes = tuple(include_problems(templates))
    render_cache.store(folder, key, {"diagnostics": [diagnostic_json(d) for d in models.diagnostics],
                                     "groups": groups,
                                     "alone": {k: [diagnostic_json(d) for d in v] for k, v in alone.items()},
                                     "templates": [diagnostic_json(d) for d in includes]})
    return _Models(root, models.diagnostics, groups, alone, includes, models)


# ----- putting it together ------------------------------------------------------------------

def _outcomes(root: Path, files: list[SourceFile], wanted: set[str] | None, pin: str | None,
              jobs: int, detail: bool, cache: Path | None,
              templates: Templates) -> tuple[list[HostOutcome], _Models]:
    """Every host file's outcome (rendered when selected), and the models' diagnostics."""
    # The key holds what Jinja is given (the texts read_templates read), not the folder's names.
    shared = render_cache.shared_key(root, pin, templates.digest)
    models = _models(root, cache, render_cache.host_key(shared, "models/", b""), templates)
    usable = templates if not templates.problems and not models.templates else None
    index = host_file_index(files)
    roots = _components(models.groups)
    members = _members(roots)
    digests = {root: _group_digest(names, index) for root, names in members.items()}
    outcomes: list[HostOutcome | None] = []
    keys: list[str] = []
    missed: list[int] = []
    with _no_collections():
        for sf in files:
            render = wanted is None or sf.stem in wanted
            # A member's render reads its whole group's inventories: the group's digest (once
            # per group, not the peers' bytes once per member) is part of its key.
            group = roots.get(sf.stem)
            key = render_cache.host_key(shared, sf.display, sf.data,
                                        (("group", digests[group].encode()),) if group is not None else ())
            keys.append(key)
            found = outcome_from_json(render_cache.load(cache, key), sf.stem)
            if found is not None and (found.rendered or not render or found.name is None):
                outcomes.append(found)
                continue
            outcomes.append(None)
            missed.append(len(outcomes) - 1)
    if missed:
        work, order = _work(files, missed, roots, members, index, wanted)
        computed = _compute(work, jobs, (root, models.get(), pin, detail, usable))
        for i, outcome in zip(order, computed, strict=True):
            outcomes[i] = outcome
            render_cache.store(cache, keys[i], *outcome_json(outcome))
    return [o for o in outcomes if o is not None], models


def _components(groups: list[list[str]]) -> dict[str, str]:
    """Each host name of a multi-node group -> the first name of its group, groups joined
    where one host is in two (a host in no group is in none)."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]  # path halving: near-constant per lookup
            name = parent[name]
        return name

    for hosts in groups:
        for name in hosts[1:]:
            a, b = find(hosts[0]), find(name)
            if a != b:
                parent[b] = a
    return {name: find(name) for name in list(parent)}


def _members(roots: dict[str, str]) -> dict[str, list[str]]:
    """Each group's root -> its names (host file stems and names without a file)."""
    out: dict[str, list[str]] = {}
    for name, root in roots.items():
        out.setdefault(root, []).append(name)
    return out


def _group_digest(names: list[str], index: dict[str, SourceFile]) -> str:
    """What a group's renders read of hosts/: each member's displayed path and bytes (None: no file)."""
    import hashlib

    digest = hashlib.sha256(b"group\0")
    for name in sorted(names):
        sf = index.get(name)
        digest.update(f"{name}\0{sf.display if sf else '-'}\0".encode())
        digest.update(b"\0missing" if sf is None else b"\1unreadable" if sf.data is None
                      else f"{len(sf.data)}\0".encode() + sf.data)
    return digest.hexdigest()


def _work(files: list[SourceFile], missed: list[int], roots: dict[str, str], members: dict[str, list[str]],
          index: dict[str, SourceFile], wanted: set[str] | None) -> tuple[list[_Work], list[int]]:
    """The work for the missed files: the missed members of each multi-node group together
    (each member loaded once), every other file alone; and the index in ``files`` of each
    outcome the work returns, in order."""
    together: dict[str, list[int]] = {}
    for i in missed:
        stem = files[i].stem
        together.setdefault(roots.get(stem, "\0" + stem), []).append(i)  # "\0": no group name clashes
    work: list[_Work] = []
    order: list[int] = []
    for root, indexes in together.items():
        stems = {files[i].stem for i in indexes}
        peers = {n: index.get(n) for n in members.get(root, ()) if n not in stems}
        work.append(_Work(tuple(files[i] for i in indexes),
                          tuple(wanted is None or files[i].stem in wanted for i in indexes), peers))
        order.extend(indexes)
    return work, order


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
    # A warm run builds ~100,000 long-lived objects (cached outcomes, trees, the plan) and
    # almost no cyclic garbage: at Python's default threshold the collector ran ~120 young
    # passes and a full one over all of them, a seventh of a warm `gen check`.
    with _fewer_collections():
        return _run_fleet(root, host_names, pin, jobs, use_cache, detail)


def _run_fleet(root: Path, host_names: list[str] | None, pin: str | None, jobs: int | None,
               use_cache: bool, detail: bool) -> RenderResult:
    jobs = max(1, min(jobs or os.cpu_count() or 1, MAX_JOBS))  # a 256-core default too
    result = RenderResult()
    cache_folder = render_cache.open_cache() if use_cache and not detail else render_cache.CacheFolder(None)
    if cache_folder.warning:
        result.notices.append(cache_folder.warning)
    files = source_files(root, "hosts")
    wanted = _select(host_file_index(files), host_names)
    templates = read_templates(root)  # once per run: every render reads these texts
    outcomes, models = _outcomes(root, files, wanted, pin, jobs, detail, cache_folder.path, templates)
    diagnostics = [*models.diagnostics, *templates.problems, *models.templates, *case_collisions_of(files)]
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
        strays: list[Stray] = []
        with _no_collections():
            result.changes.extend(plan_trees(output, result.trees, strays))
            if host_names is None:
                result.changes.extend(plan_orphans(output, by_name, strays))
        # output/ is exactly what gen renders: anything else is a finding (and gen never removes it).
        result.diagnostics.extend(sorted((stray_diagnostic(s) for s in strays), key=Diagnostic.sort_key))
    return result


def stray_diagnostic(stray: Stray) -> Diagnostic:
    """O002 for an entry of ``output/`` gen neither renders nor owns; O003 for a host folder
    without an inventory. Both are errors: output/ is what will be deployed and reviewed."""
    where = Position(f"{OUTPUT_DIR}/{stray.path}")
    host, _, rest = stray.path.partition("/")
    if stray.orphan:
        return Diagnostic(where, "O003", f"{OUTPUT_DIR}/{host}/ is a host folder with no inventory (no "
                          f"hosts/{host}.yaml) and no .gen-managed list of gen's: gen never renders or removes it",
                          hint=f"delete the folder, or add hosts/{host}.yaml")
    if not rest:
        return Diagnostic(where, "O002", f"{OUTPUT_DIR}/{host} is {stray.kind}: {OUTPUT_DIR}/ holds one folder "
                          "per host and nothing else", hint="delete it")
    return Diagnostic(where, "O002", f"{OUTPUT_DIR}/{stray.path} is {stray.kind} gen does not render for host "
                      f"'{host}' (not in its .gen-managed): gen never writes or removes it",
                      hint="delete it (git rm); what a host runs comes from hosts/ and models/")


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
