"""The fleet runner: the per-host pipeline over every host file, scheduled in a process pool.

:func:`run_fleet` is what every command calls. It lists ``hosts/``, loads the models once,
and runs :func:`generator.pipeline.host.process_host` for each host file, in a process
pool when that pays. Then it puts the results together in one way: every file's load
diagnostics, the selected hosts' render diagnostics, their trees, and the plan against
``output/``. Output and diagnostics do not depend on the number of jobs. Nothing here
prints.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.emit.templates import Templates, load_templates
from generator.emit.writer import Action, Change, HostTree, Stray, plan_orphans, plan_trees
from generator.errors import Diagnostic, GenError, Position
from generator.load.acks import Ack, acks_of
from generator.load.addresses import Reach, documents, reach, reach_errors
from generator.load.files import SourceFile, case_collisions_of, host_file_index, source_files, unread_entries
from generator.load.limits import MAX_JOBS
from generator.pipeline.acks import Acknowledged, apply_acks
from generator.pipeline.outcome import HostOutcome

if TYPE_CHECKING:
    from generator.emit.render import HostRender
    from generator.load.resolve import Host, Model
    from generator.load.sources import ModelSet

# generator.pipeline.host (planning, flags, jinja2), .models, load.sources (schemas,
# cerberus) and the process pool are imported where work is done.

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
    ``infos`` what a check could not decide and which command captures the facts it needs.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    trees: list[HostTree] = field(default_factory=list)
    renders: list[HostRender] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    models: dict[str, Model] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)
    # Warnings an ack: entry took out of ``diagnostics`` (pipeline/acks.py), and every ack
    # of the run with the number of warnings it matched.
    acknowledged: list[Acknowledged] = field(default_factory=list)
    acks: dict[Ack, int] = field(default_factory=dict)

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
    """Speed only (ARCHITECTURE.md): the cyclic collector's young pass less often, for one run.

    Loading a host makes tens of thousands of short-lived objects, so at Python's default
    threshold (700) the collector runs hundreds of times over a fleet and promotes enough
    to trigger full passes over everything live. Forked workers inherit the setting; it is
    put back here.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], GC_YOUNG_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


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
    """The loaded models, their multi-node groups and the findings of each model checked alone."""

    loaded: ModelSet
    groups: list[list[str]]  # each multi-node model's hosts, in rank order
    alone: dict[str, tuple[Diagnostic, ...]]

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """The models' own load diagnostics."""
        return self.loaded.diagnostics


def _models(root: Path) -> _Models:
    """models/ loaded once for the run, with each model's check on its own."""
    from generator.checkpoint.attach import load_models
    from generator.pipeline.models import check_models_alone

    models = load_models(root)
    groups = [list(m.multinode.hosts) for m in models.models.values() if m.multinode]
    return _Models(models, groups, check_models_alone(root, models))


# ----- putting it together ------------------------------------------------------------------

def _outcomes(root: Path, files: list[SourceFile], wanted: set[str] | None, pin: str | None,
              jobs: int, detail: bool, templates: Templates | None) -> tuple[list[HostOutcome], _Models]:
    """Every host file's outcome (rendered when selected), and the models. The files of one
    multi-node group are one unit of work, so each member is loaded once (:func:`_work`)."""
    models = _models(root)
    index = host_file_index(files)
    roots = _components(models.groups)
    work, order = _work(files, list(range(len(files))), roots, _members(roots), index, wanted)
    computed = _compute(work, jobs, (root, models.loaded, pin, detail, templates)) if work else []
    outcomes: list[HostOutcome | None] = [None] * len(files)
    for i, outcome in zip(order, computed, strict=True):
        outcomes[i] = outcome
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
              detail: bool = False) -> RenderResult:
    """Validate every source, render the selected hosts, and plan the writes.

    ``host_names`` are host file stems (``hosts/<name>.yaml``); None means every host, and
    then managed files of hosts that no longer exist are planned for removal too. ``pin``
    checks every host against that SGLang catalog instead of its own (the plan then means
    nothing and is left empty). ``detail`` keeps each host's full render (``renders``).
    ``jobs=None`` uses every core.
    """
    with _fewer_collections():
        return _run_fleet(root, host_names, pin, jobs, detail)


def _run_fleet(root: Path, host_names: list[str] | None, pin: str | None, jobs: int | None,
               detail: bool) -> RenderResult:
    jobs = max(1, min(jobs or os.cpu_count() or 1, MAX_JOBS))  # a 256-core default too
    result = RenderResult()
    files = source_files(root, "hosts")
    wanted = _select(host_file_index(files), host_names)
    templates, template_problems = load_templates(root)  # once per run: every render reads these texts
    outcomes, models = _outcomes(root, files, wanted, pin, jobs, detail, templates)
    diagnostics = [*models.diagnostics, *template_problems, *case_collisions_of(files), *unread_entries(root, "hosts")]
    if detail:
        result.models = dict(models.loaded.models)
    for outcome in outcomes:
        diagnostics.extend(outcome.load)
    if not (root / "hosts").is_dir():
        diagnostics.append(Diagnostic(Position("hosts/"), "R007", f"no hosts/ folder under {root}"))
    # One machine, two inventories: a property of all host files together.
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
    result.infos.extend(gpu_info(selected))
    result.infos.extend(memory_info(selected))
    for outcome in selected:
        diagnostics.extend(outcome.render)
        if outcome.tree is not None:
            result.trees.append(outcome.tree)
        if outcome.detail is not None:
            result.renders.append(outcome.detail)
    # A finding in a model manifest is found again for every service that uses the model:
    # 300 services of one model gave 300 identical lines. Each is reported once (the
    # same file, position, code and message: nothing is lost); distinct ones all stay.
    acks = [a for m in models.loaded.models.values() for a in acks_of(m.doc)]
    acks += [a for o in outcomes for a in o.acks]
    rule_codes = _rule_codes(root) if any(a.code.startswith("X") for a in acks) else None  # read only when needed
    acked = apply_acks(dict.fromkeys(diagnostics), acks, rule_codes, complete=host_names is None and pin is None)
    result.diagnostics, result.acknowledged, result.acks = acked.diagnostics, acked.acknowledged, acked.matches
    if result.ok and pin is None:
        output = root / OUTPUT_DIR
        strays: list[Stray] = []
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


def gpu_info(outcomes: list[HostOutcome]) -> list[str]:
    """What the GPU checks skipped: one line naming the hosts whose services run on GPUs without
    ``compute_cap``, the checks that need it, and the command that captures it."""
    notes = {note for o in outcomes for note in o.notes}
    hosts = sorted(note.rsplit(":", 1)[1] for note in notes if note.startswith("gpu:compute_cap:"))
    if not hosts:
        return []
    return [f"GPU capability checks (G001-G015: trtllm_mha/trtllm_mla backends, FP8/FP4 KV cache dtypes, "
            f"quantization minimum capability, the attention backend registry, the host torch's kernels, "
            f"SGLang's SM90/SM100/SM120-only features) "
            f"skipped on {', '.join(hosts)}: GPUs without compute_cap (`gen host snapshot NAME` captures it)"]


_BY_TOKEN = "memory sizing by token (the KV cache's tokens, P031 context fit, P032 reserve)"


def memory_info(outcomes: list[HostOutcome]) -> list[str]:
    """What the memory check skipped: one line for the hosts whose GPUs lack memory_mib, one per
    model whose snapshot's config.json lacks what the bytes per token need.

    A model without a checkpoint snapshot is named by the snapshot's own info line (its
    token sizing is skipped with it).
    """
    notes = {note for o in outcomes for note in o.notes}
    hosts = sorted(note.rsplit(":", 1)[1] for note in notes if note.startswith("memory:memory_mib:"))
    lines = []
    if hosts:
        lines.append(f"{_BY_TOKEN} skipped on {', '.join(hosts)}: GPUs without memory_mib (`gen host snapshot` "
                     "captures it; P030 read memory_gb as GiB)")
    configs = sorted(note.split(":", 3)[2:] for note in notes if note.startswith("memory:config:"))
    for model, why in configs:
        lines.append(f"{_BY_TOKEN} of model '{model}' skipped: {why} (`gen model snapshot --model {model}` "
                     "from the checkpoint captures its full config.json)")
    return lines


def _rule_codes(root: Path) -> frozenset[str] | None:
    """The codes of catalogs/rules.yaml (X codes are data), None when it cannot be read (its
    own findings say why; acks of X codes are then taken as known)."""
    from generator.sglang.datafiles import DataFileError
    from generator.sglang.rules import load_rules

    path = root / "catalogs" / "rules.yaml"
    try:
        return frozenset(rule.code for rule in load_rules(path)) if path.is_file() else None
    except (DataFileError, OSError):
        return None


def load_inventory_host(root: Path, name: str) -> tuple[Host | None, list[Diagnostic]]:
    """One host file loaded (with its peers) but not rendered: the host and its own findings.

    For commands that need an inventory, not its services (``gen sglang snapshot --host``,
    ``gen import --host``). An unknown name raises UnknownHostError.
    """
    from generator.checkpoint.attach import load_models
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
    """:func:`run_fleet` in this process, keeping every host's full render."""
    return run_fleet(root, host_names, pin, jobs=1, detail=True)


def render_fleet(root: Path, host_names: list[str] | None, jobs: int | None = None) -> RenderResult:
    """:func:`run_fleet` as render, diff and check use it: in a pool, trees only."""
    return run_fleet(root, host_names, jobs=jobs)
