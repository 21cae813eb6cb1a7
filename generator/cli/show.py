"""``gen show --host NAME``: the host at a glance, and the stage decisions ``-v`` prints.

Everything comes from the pipeline's own results (:func:`generator.pipeline.fleet.run_fleet`
with ``detail``: placements, argv, environment), so what is shown is what is rendered: a
GPU map (index, PCI bus id, NUMA node, memory, compute capability, owner: a service, a VM
or free) with the link matrix beside it when the inventory has one (``facts.topology``),
and per service its port, TP, weights, the estimated KV cache, the CPU binding, and what the
pinned SGLang picks itself on the service's GPU where the service writes nothing (the
attention backend, the MoE runner: the pin's captured choices, ``<pin>.devices.json``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from generator.cli import complete, output
from generator.cli.common import EXIT_CODES_HELP, guard, output_options, report_run, root_option
from generator.emit.render import HostRender, RenderedService
from generator.checkpoint.attach import snapshot_of
from generator.errors import ExitCode
from generator.load.acks import Ack
from generator.load.resolve import ServiceSpec, Topology, default_timeout_start_min
from generator.pipeline.fleet import RenderResult, run_fleet
from generator.plan.memory_check import MemoryOutcome
from generator.plan.topology import worst_link
from generator.sglang.devices import Devices, load_devices

# What the pin decides itself when the service writes none of these (SGLang's automatic choices).
_CHOSEN = {"attention_backend": ("attention_backend", "prefill_attention_backend", "decode_attention_backend"),
           "moe_runner_backend": ("moe_runner_backend",)}
_KINDS = {"LlamaForCausalLM": "an MHA model (Llama)", "DeepseekV3ForCausalLM": "an MLA model (DeepSeek-V3)",
          "Qwen3NextForCausalLM": "a hybrid linear-attention model (Qwen3-Next)"}


def _r(value: float) -> float:
    return round(value, 2)


def memory_view(outcome: MemoryOutcome | None) -> dict[str, Any] | None:
    """One service's memory, per GPU, as its pinned SGLang will size it (``services[].memory``).

    With a checkpoint snapshot every figure is known; without one the token count is None
    (bytes per token need config.json) and the KV pool is the budget the weights leave.
    """
    if outcome is None:
        return None
    plan, fit = outcome.plan, outcome.fit
    if plan is not None:
        return {"pin": plan.pin, "gpu_memory_gib": _r(plan.gpu_total_gib),
                "free_before_load_gib": _r(plan.free_before_load_gib),
                "free_before_load_assumed": plan.free_before_load_assumed,
                "mem_fraction_static": plan.mem_fraction_static, "mem_fraction_static_default": plan.fraction_is_default,
                "sglang_default_fraction": plan.default_fraction, "weights_gib_per_gpu": _r(plan.weights_gib),
                "draft_weights_gib_per_gpu": _r(plan.draft_weights_gib), "kv_pool_gib": _r(plan.kv_pool_gib),
                "mamba_state_gib": _r(plan.mamba_gib), "max_total_num_tokens": plan.max_total_num_tokens,
                "swa_tokens": plan.swa_tokens, "bytes_per_token": plan.cell_bytes, "kv_layers": plan.kv_layers,
                "pp_all_layers": plan.pp_whole_model,
                "max_running_requests": plan.max_running_requests, "context_length": plan.context_len,
                "request_table_gib": _r(plan.req_table_gib), "chunked_prefill_size": plan.chunked_prefill_size, "cuda_graph_max_bs": plan.cuda_graph_max_bs,
                "reserve_gib": _r(plan.reserve_gib), "sglang_default_reserve_gib": _r(plan.default_reserve_gib),
                "skipped": None}
    assert fit is not None
    return {"pin": None, "gpu_memory_gib": _r((outcome.gpu_memory_mib or 0) / 1024),
            "free_before_load_gib": _r(fit.free_before_load_gib), "free_before_load_assumed": fit.free_before_load_assumed,
            "mem_fraction_static": fit.mem_fraction_static, "mem_fraction_static_default": fit.fraction_is_default,
            "sglang_default_fraction": fit.default_fraction, "weights_gib_per_gpu": _r(fit.weights_gib),
            "draft_weights_gib_per_gpu": None, "kv_pool_gib": _r(max(fit.rest_gib, 0.0)), "mamba_state_gib": None,
            "max_total_num_tokens": None, "swa_tokens": None, "bytes_per_token": None, "kv_layers": None,
            "pp_all_layers": None, "max_running_requests": None,
            "context_length": None, "request_table_gib": None, "chunked_prefill_size": fit.chunked_prefill_size,
            "cuda_graph_max_bs": fit.cuda_graph_max_bs, "reserve_gib": _r(fit.free_before_load_gib * (1 - fit.mem_fraction_static)),
            "sglang_default_reserve_gib": _r(fit.default_reserve_gib), "skipped": outcome.skipped}


def _written(spec: ServiceSpec, key: str) -> bool:
    """True when the inventory's ``services[i]`` block writes ``key`` (else a default applies)."""
    data: Any = spec.doc.data
    for step in spec.base:
        data = data[step]
    return isinstance(data, dict) and key in data


def picks_view(svc: RenderedService, devices: Devices | None) -> dict[str, Any] | None:
    """What the pin picks itself on the service's GPU (``services[].sglang_picks``): per setting
    of :data:`_CHOSEN` the value written (then SGLang takes it) or, per stand-in architecture,
    the pin's own choice on that compute capability. None without compute_cap or captured picks."""
    gpus = svc.placement.gpus
    capability = gpus[0].capability if gpus else None  # SGLang reads CUDA device 0
    if capability is None or devices is None or not devices.picks(capability):
        return None
    written = {g.action.dest: " ".join(g.words[1:]) for g in svc.argv.groups if g.words}
    picks = devices.picks(capability)
    settings = {}
    for setting, dests in _CHOSEN.items():
        given = {dest: written[dest] for dest in dests if dest in written}
        settings[setting] = {"written": given or None,
                             "picked": None if given else {arch: pick.get(setting, pick.get("refused"))
                                                           for arch, pick in picks.items()}}
    return {"compute_cap": gpus[0].compute_cap, "torch_cuda": devices.auto_cuda, "settings": settings}


def _service_view(svc: RenderedService, topo: Topology | None, devices: Devices | None = None) -> dict[str, Any]:
    p, spec, model = svc.placement, svc.placement.service, svc.placement.model
    snapshot = snapshot_of(model)
    return {
        "worst_link": worst_link(p.gpus, topo) if topo is not None else None,
        "name": spec.name, "unit": spec.unit, "model": model.name, "enabled": spec.enabled,
        "listen": spec.listen, "listen_default": not _written(spec, "listen"), "port": spec.port, "tp": model.tp, "pp": model.pp, "dp": model.dp,
        "gpus": [g.index for g in p.gpus], "gpus_chosen_by": "inventory" if spec.gpus is not None else "placement",
        "numa_nodes": list(p.numa_nodes), "cpu_binding": p.cpus,
        "weights": {"path": model.weights.path, "size_gb": model.weights.size_gb,
                    "shards": model.weights.shards, "params_b": model.weights.params_b,
                    "from": model.weights.source, "quantization": model.weights.quantization},
        "checkpoint": snapshot.as_json() if snapshot is not None else None,
        "memory": memory_view(svc.memory),
        "sglang_picks": picks_view(svc, devices),
        "timeout_start_min": spec.timeout_start_min or default_timeout_start_min(model),
        "timeout_start_min_default": spec.timeout_start_min is None,
        "node": None if p.cluster is None else {"rank": p.cluster.rank, "nnodes": p.cluster.nnodes,
                                                "dist_init_addr": p.cluster.dist_init_addr},
    }


def host_view(render: HostRender) -> dict[str, Any]:
    """The host's GPU map and services as plain data (the ``--format json`` results)."""
    host = render.host
    owner = {g.index: f"service:{s.placement.service.name}" for s in render.services for g in s.placement.gpus}
    owner.update({index: f"vm:{vm}" for index, vm in host.vm_gpus})
    gpus = [{"index": g.index, "pci_bus_id": g.pci_bus_id, "numa_node": g.numa_node, "memory_gb": g.memory_gb,
             "memory_mib": g.memory_mib, "compute_cap": g.compute_cap,
             "model": g.model or None, "owner": owner.get(g.index, "free")} for g in host.gpus]
    topo = host.facts.topology
    devices = load_devices(render.catalog.source_file) if render.catalog.source_file is not None else None
    return {"host": host.name, "address": host.address, "sglang_pin": host.sglang.pin,
            "gpus": gpus, "topology": {"gpus": list(topo.gpus), "links": [list(r) for r in topo.links]}
            if topo is not None else None,
            "services": [_service_view(s, topo, devices) for s in render.services]}


def _memory(g: dict[str, Any]) -> str:
    """The measured MiB when the inventory has them, else the typed GB."""
    return f"{g['memory_mib']} MiB" if g["memory_mib"] is not None else f"{g['memory_gb']:g} GB"


def _gpu_lines(view: dict[str, Any]) -> list[str]:
    """The GPU map; with a link matrix, each GPU's row of it beside its line (`nvidia-smi topo -m`)."""
    gpus = view["gpus"]
    caps = any(g["compute_cap"] for g in gpus)
    width = max(len("memory"), *(len(_memory(g)) for g in gpus))
    cells = [f"{'GPU':>3}", f"{'PCI bus id':<16}", "NUMA", f"{'memory':>{width}}"] + (["  cc"] if caps else []) + ["owner"]
    rows = [[f"{g['index']:>3}", f"{g['pci_bus_id']:<16}", f"{g['numa_node']:>4}", f"{_memory(g):>{width}}"]
            + ([f"{g['compute_cap'] or '-':>4}"] if caps else []) + [g["owner"]] for g in gpus]
    topo = view["topology"]
    if topo is not None:
        owner_width = max(len(r[-1]) for r in rows + [cells])
        cells[-1] = f"{cells[-1]:<{owner_width}}  links:" + "".join(f"{i:>6}" for i in topo["gpus"])
        for g, row in zip(gpus, rows, strict=True):
            links = topo["links"][topo["gpus"].index(g["index"])] if g["index"] in topo["gpus"] else None
            row[-1] = f"{row[-1]:<{owner_width}}" + ("  " + " " * 6 + "".join(f"{c:>6}" for c in links)
                                                     if links else "")
    return ["  ".join(r).rstrip() for r in [cells] + rows]


def _service_line(s: dict[str, Any]) -> str:
    binding = f"CPUs {s['cpu_binding']} (NUMA {s['numa_nodes'][0]})" if s["cpu_binding"] else \
        f"not bound (NUMA {', '.join(map(str, s['numa_nodes']))})"
    state = "" if s["enabled"] else ", disabled"
    if s["node"]:
        state += f", node {s['node']['rank']} of {s['node']['nnodes']}"
    return (f"{s['name']}: {s['model']} on {s['listen']}:{s['port']}{state}, TP {s['tp']}, GPUs "
            f"{','.join(map(str, s['gpus']))}, weights {s['weights']['size_gb']:g} GB"
            f"{' (snapshot)' if s['weights']['from'] == 'snapshot' else ''} at {s['weights']['path']}, "
            f"{binding}")


def skipped_fix(skipped: str, model: str, host: str) -> str:
    """The command that captures what the token sizing lacked (``skipped``), for model ``model``
    on host ``host``: the operator's next step, in the words of ``memory.skipped``."""
    fixes = []
    if "no checkpoint snapshot" in skipped:
        fixes.append(f"`gen model snapshot --model {model}` captures the checkpoint's config.json and size")
    if skipped.startswith("the snapshot's "):
        fixes.append(f"`gen model snapshot --model {model}` from the checkpoint itself captures its full config.json")
    if "no memory_mib" in skipped:
        fixes.append(f"`gen host snapshot {host}` captures the GPUs' memory_mib")
    return "; ".join(fixes)


def memory_line(m: dict[str, Any] | None, model: str, host: str) -> str:
    """The service's memory per GPU in one line: weights, KV pool and tokens, reserve, fraction;
    when the tokens are unknown, why, and the command that captures what is missing."""
    if m is None:
        return "memory: not sized (a value the schema refused)"
    fraction = (f"mem_fraction_static {m['mem_fraction_static']:g} "
                + ("(SGLang's default for this GPU)" if m["mem_fraction_static_default"] else
                   f"(SGLang's default {m['sglang_default_fraction']:.3f})"))
    draft = f" + draft {m['draft_weights_gib_per_gpu']:.1f}" if m.get("draft_weights_gib_per_gpu") else ""
    state = f" + state {m['mamba_state_gib']:.1f}" if m.get("mamba_state_gib") else ""
    if m["max_total_num_tokens"] is None:
        fix = skipped_fix(m["skipped"] or "", model, host)
        tokens = f"KV pool ~{m['kv_pool_gib']:.1f} GiB (tokens unknown: {m['skipped']}{'; ' + fix if fix else ''})"
    else:
        whole = (f" (every pipeline rank holds all {m['kv_layers']} layers: the pin's model class does not split "
                 "them)") if m.get("pp_all_layers") else ""
        tokens = (f"KV pool {m['kv_pool_gib']:.1f} GiB{state} = {m['max_total_num_tokens']:,} tokens{whole}, "
                  f"{m['max_running_requests']} requests at most, context {m['context_length']:,}")
    where = f"SGLang {m['pin']}, " if m["pin"] else ""
    return (f"memory per GPU ({where}{m['gpu_memory_gib']:.1f} GiB, {m['free_before_load_gib']:.1f} free before load): "
            f"weights {m['weights_gib_per_gpu']:.1f} GiB{draft}, {tokens}, reserve {m['reserve_gib']:.1f} GiB; "
            f"{fraction}")


def picks_line(picks: dict[str, Any] | None, pin: str) -> str | None:
    """SGLang's own choices for the service in one line (None: not known for its GPU)."""
    if picks is None:
        return None
    parts = []
    for setting, found in picks["settings"].items():
        name = setting.replace("_", " ")
        if found["written"]:
            parts.append(f"{name} as written ({', '.join(f'{k} {v}' for k, v in found['written'].items())})")
            continue
        by_value: dict[str, list[str]] = {}
        for arch, value in sorted(found["picked"].items(), key=lambda item: list(_KINDS).index(item[0])
                                  if item[0] in _KINDS else len(_KINDS)):
            by_value.setdefault(str(value), []).append(_KINDS.get(arch, arch))
        parts.append(f"{name} " + "; ".join(f"{value} for {' and '.join(kinds)}" if len(by_value) > 1 else value
                                           for value, kinds in by_value.items()))
    return (f"SGLang {pin} picks on compute capability {picks['compute_cap']} (torch CUDA {picks['torch_cuda']}): "
            + ", ".join(parts).replace("moe runner backend auto", "moe runner backend auto (the MoE layer's own "
                                                                  "choice at load)"))


def decisions(view: dict[str, Any]) -> list[str]:
    """What placement and defaults decided per service, one line each (for ``-v``)."""
    lines: list[str] = []
    for s in view["services"]:
        where = f"{view['host']}/{s['name']}"
        chosen = "chosen: the best-joined free GPUs" if s["worst_link"] else "chosen: free GPUs"
        lines.append(f"gen: {where}: placement: GPUs {','.join(map(str, s['gpus']))} "
                     f"({'from the inventory' if s['gpus_chosen_by'] == 'inventory' else chosen}"
                     + (f", joined by {s['worst_link']} at worst" if s["worst_link"] else "") + ")")
        if s["cpu_binding"]:
            lines.append(f"gen: {where}: NUMA: node {s['numa_nodes'][0]}, unit bound to CPUs {s['cpu_binding']}")
        else:
            lines.append(f"gen: {where}: NUMA: nodes {', '.join(map(str, s['numa_nodes']))}, unit not bound")
        defaults = []
        if s["listen_default"]:
            defaults.append(f"listen {s['listen']}")
        memory = s["memory"]
        if memory is not None and memory["mem_fraction_static_default"]:
            defaults.append(f"mem_fraction_static {memory['mem_fraction_static']:g} (SGLang's own rule for "
                            "this GPU and these flags)")
        if s["timeout_start_min_default"]:
            defaults.append(f"timeout_start_min {s['timeout_start_min']}")
        if defaults:
            lines.append(f"gen: {where}: defaults: {', '.join(defaults)}")
        lines.append(f"gen: {where}: {memory_line(memory, s['model'], view['host'])}")
    return lines


def explain(result: RenderResult) -> None:
    """``-v``: print each stage's decisions for the hosts of a detail run (``result.renders``)."""
    out = output.current()
    if not out.verbose:
        return
    for render in result.renders:
        for line in decisions(host_view(render)):
            out.detail(line)


def ack_views(render: HostRender, acks: dict[Ack, int]) -> list[dict[str, Any]]:
    """The acks that concern a host: its own file's and those of its services' models, with
    how many warnings each took out of this run's findings."""
    files = {render.host.doc.path} | {s.placement.model.doc.path for s in render.services}
    return [{"code": a.code, "reason": a.reason, "file": a.pos.path, "line": a.pos.line, "column": a.pos.col,
             "matches": n} for a, n in sorted(acks.items(), key=lambda item: item[0].pos) if a.file in files]


def _ack_line(a: dict[str, Any]) -> str:
    count = f"{a['matches']} warning(s)" if a["matches"] else "matches nothing"
    return f"{a['code']} at {a['file']}:{a['line']} ({count}): {a['reason']}"


def _show_one(view: dict[str, Any]) -> None:
    out = output.current()
    out.data(f"host {view['host']} ({view['address']}), SGLang {view['sglang_pin']}")
    for line in _gpu_lines(view):
        out.data("  " + line)
    out.data("services:" if view["services"] else "services: none")
    for s in view["services"]:
        out.data("  " + _service_line(s))
        out.data("    " + memory_line(s["memory"], s["model"], view["host"]))
        picked = picks_line(s["sglang_picks"], view["sglang_pin"])
        if picked is not None:
            out.data("    " + picked)
    if view["acks"]:
        out.data("acknowledged warnings:")
        for a in view["acks"]:
            out.data("  " + _ack_line(a))
    for line in decisions(view):
        out.detail(line)


@click.command("show", epilog=EXIT_CODES_HELP)
@click.option("--host", multiple=True, metavar="NAME", shell_complete=complete.host_names,
              help="The host to show (repeatable).")
@click.option("--all", "all_hosts", is_flag=True, help="Show every host in hosts/, one after the other.")
@root_option
@output_options(output.JSON)
@guard
def show(host: tuple[str, ...], all_hosts: bool, root: Path) -> int:
    """The host at a glance: GPU map (owner: service, VM or free) and per service port, TP,
    weights and CPU binding, and its memory per GPU as the pinned SGLang will size it (weights, KV
    pool and tokens, reserve). Nothing is written, no host is reached.

    With --all (or several --host), every host that renders is shown, in name order; the
    findings of the others are reported, and the exit code is 1 when there are any.
    """
    if bool(host) == all_hosts:
        raise click.UsageError("give --host NAME or --all" if not host else "give --host or --all, not both")
    out = output.current()
    result = run_fleet(root, list(host) or None, detail=True)
    report_run(result)
    views = [dict(host_view(render), acks=ack_views(render, result.acks)) for render in result.renders]
    out.results["hosts"] = views
    if len(views) == 1 and len(host) == 1:
        out.results.update(views[0])  # one host: its keys at the top, as before --all existed
    for i, view in enumerate(views):
        if i:
            out.data("")
        _show_one(view)
    return ExitCode.OK if result.ok else ExitCode.FINDINGS
