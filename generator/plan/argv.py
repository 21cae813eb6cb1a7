"""Turn a placed service into SGLang arguments, then check them against the pinned catalog.

Structured manifest fields address SGLang actions by ``dest`` (stable across versions);
the catalog of the host's pin supplies the option string to render. Free-form ``args``
are written as flags and resolved like a command line would be, with every spelling
problem reported at its line and column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from generator.sglang.catalog import Catalog, FlagTables
from generator.errors import Diagnostics
from generator.sglang.flags import Arg, CheckedArg, check_args
from generator.load.resolve import Model
from generator.plan.placement import Placement


@dataclass(frozen=True)
class ServiceArgv:
    """The checked argv of one service: program words, then one group per flag."""

    program: tuple[str, ...]
    groups: tuple[CheckedArg, ...]

    @property
    def argv(self) -> tuple[str, ...]:
        """The flat argv, as the process will see it."""
        return self.program + tuple(w for g in self.groups for w in g.words)


def _adder(out: list[Arg]) -> Callable[..., None]:
    """``add(dest, value, owner, *path)``: append a structured Arg unless the value is unset."""
    def add(dest: str, value: Any, owner: Any, *path: Any) -> None:
        if value is not None and value is not False:
            out.append(Arg(dest, value, owner.pos(*path), by_dest=True))
    return add


@dataclass(frozen=True)
class _ModelArgs:
    """A model's own arguments, the same for every service of it: three structured runs
    (around the service's listen and cluster fields) and its free-form flags."""

    head: tuple[Arg, ...]
    parallel: tuple[Arg, ...]
    tail: tuple[Arg, ...]
    free: tuple[tuple[str, Arg], ...]


def _model_args(m: Model) -> _ModelArgs:
    """The Args of model ``m``: what its services have in common."""
    head: list[Arg] = []
    add = _adder(head)
    add("model_path", m.weights.path, m, "weights", "path")
    add("served_model_name", m.served_model_name, m, "served_model_name")
    add("trust_remote_code", m.trust_remote_code or None, m, "trust_remote_code")
    add("dtype", m.dtype, m, "dtype")
    add("context_length", m.context_length, m, "context_length")
    parallel: list[Arg] = []
    add = _adder(parallel)
    add("tp_size", m.tp if m.tp != 1 else None, m, "parallel", "tp")
    add("pp_size", m.pp if m.pp != 1 else None, m, "parallel", "pp")
    add("dp_size", m.dp if m.dp != 1 else None, m, "parallel", "dp")
    add("ep_size", m.ep, m, "parallel", "ep")
    add("enable_dp_attention", m.dp_attention or None, m, "parallel", "dp_attention")
    tail: list[Arg] = []
    add = _adder(tail)
    add("mem_fraction_static", m.mem_fraction_static, m, "memory", "mem_fraction_static")
    if m.speculative:
        sp = m.speculative
        add("speculative_algorithm", sp.algorithm, m, "speculative", "algorithm")
        add("speculative_draft_model_path", sp.draft_model_path, m, "speculative", "draft_model_path")
        add("speculative_num_steps", sp.num_steps, m, "speculative", "num_steps")
        add("speculative_eagle_topk", sp.eagle_topk, m, "speculative", "eagle_topk")
        add("speculative_num_draft_tokens", sp.num_draft_tokens, m, "speculative", "num_draft_tokens")
    add("reasoning_parser", m.reasoning_parser, m, "parsers", "reasoning")
    add("tool_call_parser", m.tool_call_parser, m, "parsers", "tool_call")
    return _ModelArgs(tuple(head), tuple(parallel), tuple(tail), tuple(_written(m, m.args)))


def _structured(p: Placement, model: _ModelArgs) -> list[Arg]:
    """Arguments from structured fields, in a fixed order so diffs stay stable."""
    s = p.service
    out = list(model.head)
    add = _adder(out)
    add("host", s.listen, s, "listen")
    add("port", s.port, s, "port")
    out += model.parallel
    if p.cluster is not None:
        # Derived per node from the model's multinode list and rank 0's inventory; positioned
        # at this host's service so each node's findings are reported once, in its own file.
        add("nnodes", p.cluster.nnodes, s, "model")
        add("node_rank", p.cluster.rank, s, "model")
        add("dist_init_addr", p.cluster.dist_init_addr, s, "model")
    out += model.tail
    return out


def _written(owner: Any, items: Any) -> list[tuple[str, Arg]]:
    """One owner's free-form flags as (flag, Arg), a YAML list as a tuple."""
    return [(flag, Arg(flag, tuple(value) if isinstance(value, list) else value, owner.pos("args", flag, key=True)))
            for flag, value in items]


def _free_form(p: Placement, model: _ModelArgs) -> list[Arg]:
    """Free-form flags: the service's own override the model's for the same written flag."""
    merged: dict[str, Arg] = dict(model.free)
    for flag, arg in _written(p.service, p.service.args):
        merged[flag] = arg
    return list(merged.values())


def program(python: str) -> tuple[str, ...]:
    """How the host starts SGLang with its own interpreter."""
    return (python, "-m", "sglang.launch_server")


def _quantization_note(p: Placement, catalog: Catalog, diags: Diagnostics) -> None:
    """weights.quantization is informational (docs/manifests.md); say so when it reads like the flag.

    A value among the pin's --quantization choices suggests the operator expected gen to
    pass it; SGLang then reads the quantization from the checkpoint instead.
    """
    value = p.model.weights.quantization
    action = catalog.by_dest("quantization")
    if value and action is not None and action.choices and value in action.choices \
            and not any(flag == action.canonical for flag, _ in p.model.args + p.service.args):
        diags.warning(p.model.pos("weights", "quantization"), "F105",
                      f"weights.quantization '{value}' is informational: gen renders no {action.canonical}",
                      f"to pass it to SGLang, write args: {{{action.canonical}: {value}}}")


def build_argv(p: Placement, python: str, catalog: Catalog, diags: Diagnostics,
               other_catalogs: Sequence[Catalog] = (), tables: FlagTables | None = None) -> ServiceArgv:
    """Checked argv for one placed service against the host's pinned catalog.

    ``tables``: the catalog's flag tables, when the caller loaded them once for a host.
    """
    model = _model_args(p.model)
    groups = check_args(catalog, _structured(p, model) + _free_form(p, model), diags, other_catalogs, tables)
    _quantization_note(p, catalog, diags)
    return ServiceArgv(program(python), groups)
