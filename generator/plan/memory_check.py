"""Will it fit: each service's memory as its pinned SGLang will size it, and the findings P030-P035.

:func:`check_service_memory` reads the service's flags as SGLang parses them (its
``Settings``), the GPUs' ``memory_mib`` (nvidia-smi's memory.total, what SGLang reads), and
the model's checkpoint facts (config.json and weight bytes from its snapshot), runs
:func:`generator.plan.memory.size_memory`, and reports:

* P030 (error): the weights leave no KV cache, where SGLang refuses to start; the message
  names the smallest ``memory.mem_fraction_static`` that works (SGLang 0.5.23's own formula,
  ``1 - free after load / free before load``);
* P031 (error): the KV pool holds fewer tokens than one request at the context length;
* P032 (warning): the reserve left for CUDA graphs and activations is below what SGLang's
  own default rule keeps for this GPU and these flags (the CUDA-graph OOM class);
* P033 (warning): a fraction at or above 0.95;
* P034 (error): what SGLang allocates after sizing the KV pool does not fit what is left, the
  CUDA out-of-memory at launch: the request-to-token table (one int32 per token of the context
  length per request slot; sglang#5755: 80 GiB for Llama 4 Scout's 10M tokens) and, on 0.5.9,
  the speculative draft's weights and KV cache (sglang#4330: 0.85 runs out of memory, 0.84
  leaves no KV cache); the message names the context length or the fraction window that fits.
  P031 is not reported then, the start fails first;
* P035 (error): ``parallel.pp`` above 1 for an architecture whose class, on this pin, takes no
  ``pp_proxy_tensors`` (``<pin>.pipeline.json``): SGLang asserts "Pipeline Parallel is not
  compatible with this model." after the weights load; nothing is sized then.

A fraction outside (0, 1), 85 meant as 0.85 included, is the rule X021's (and the schema's,
for ``memory.mem_fraction_static``); nothing is sized from it. Without a snapshot the
weights are the manifest's ``weights.size_gb`` and only P030 and P033 can be decided (no config.json: no bytes per token); without ``memory_mib`` the
GPU's ``memory_gb`` is read as GiB for P030 alone (a data-sheet figure is never below the
real one, so a refusal found with it holds). What was skipped is returned for the CLI's
one info line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from generator.checkpoint.attach import snapshot_of
from generator.checkpoint.facts import CheckpointFacts
from generator.errors import Diagnostics, Position
from generator.load.resolve import Model
from generator.plan.memory import (
    Checkpoint, Fit, Flags, MemoryPlan, budget, nvlink_class, pin_rules, size_memory,
)
from generator.plan.model_shape import ShapeError
from generator.plan.placement import Placement
from generator.sglang.pipeline import Pipeline, load_pipeline

GIB = 1 << 30
HIGH_FRACTION = 0.95
# A reserve within this of the default rule's is the rule's own rounding, not a finding.
RESERVE_SLACK_GIB = 0.25
# Allocations after the pool below this never leave the reserve short (P034 names them).
TABLE_FLOOR_GIB = 0.25


@dataclass(frozen=True)
class MemoryOutcome:
    """What the check decided for one service: the plan (None when not computable) and why not."""

    plan: MemoryPlan | None  # the full sizing (config.json, weights and memory_mib known)
    fit: Fit | None = None  # the static budget alone, when only the weights' size is known
    skipped: str | None = None  # e.g. "no checkpoint snapshot": the checks that need it were skipped
    gpu_memory_mib: int | None = None  # what the sizing read (memory_mib, else memory_gb x 1024)


def _number(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if not isinstance(number, float) or math.isfinite(number) else None


def _get(settings: Any, *names: str) -> Any:
    """The first setting of ``names`` the pin has (0.5.23 renamed some), as SGLang parsed it."""
    for name in names:
        if settings.has(name):
            return settings.get(name)
    return None


def service_flags(settings: Any, model: Any) -> Flags:
    """The sizing inputs from a service's settings (``generator.sglang.rules.settings.Settings``)."""
    tp = _number(_get(settings, "tp_size"), int) or model.tp
    pp = _number(_get(settings, "pp_size"), int) or model.pp
    dp = _number(_get(settings, "dp_size"), int) or 1
    attn_dp = _number(_get(settings, "attn_dp_size"), int) or 1
    dp_attention = bool(_get(settings, "enable_dp_attention")) or attn_dp > 1
    if attn_dp > 1:
        dp = attn_dp
    bs = _get(settings, "cuda_graph_bs", "cuda_graph_bs_decode")
    sizes = tuple(int(b) for b in bs if _number(b, int)) if isinstance(bs, (list, tuple)) else None
    spec = _get(settings, "speculative_algorithm")
    return Flags(
        tp=max(tp, 1), pp=max(pp, 1), dp=max(dp, 1), dp_attention=dp_attention,
        mem_fraction_static=_number(_get(settings, "mem_fraction_static"), float),
        chunked_prefill_size=_number(_get(settings, "chunked_prefill_size"), int),
        max_prefill_tokens=_number(_get(settings, "max_prefill_tokens"), int) or 16384,
        cuda_graph_max_bs=_number(_get(settings, "cuda_graph_max_bs", "cuda_graph_max_bs_decode"), int),
        cuda_graph_bs=sizes or None,
        disable_cuda_graph=bool(_get(settings, "disable_cuda_graph")),
        disable_cuda_graph_padding=bool(_get(settings, "disable_cuda_graph_padding")),
        enable_piecewise_cuda_graph=bool(_get(settings, "enable_piecewise_cuda_graph")),
        piecewise_cuda_graph_max_tokens=_number(_get(settings, "piecewise_cuda_graph_max_tokens"), int),
        kv_cache_dtype=str(_get(settings, "kv_cache_dtype") or "auto"),
        dtype=str(_get(settings, "dtype") or "auto"),
        page_size=_number(_get(settings, "page_size"), int) or 1,
        context_length=_number(_get(settings, "context_length"), int),
        max_running_requests=_number(_get(settings, "max_running_requests"), int),
        max_total_tokens=_number(_get(settings, "max_total_tokens"), int),
        speculative_algorithm=str(spec).upper() if isinstance(spec, str) and spec else None,
        speculative_num_draft_tokens=_number(_get(settings, "speculative_num_draft_tokens"), int),
        speculative_num_steps=_number(_get(settings, "speculative_num_steps"), int),
        speculative_eagle_topk=_number(_get(settings, "speculative_eagle_topk"), int),
        mamba_full_memory_ratio=_number(_get(settings, "mamba_full_memory_ratio"), float) or 0.9,
        max_mamba_cache_size=_number(_get(settings, "max_mamba_cache_size"), int),
        mamba_ssm_dtype=_get(settings, "mamba_ssm_dtype"),
        disable_radix_cache=bool(_get(settings, "disable_radix_cache")),
        swa_full_tokens_ratio=_number(_get(settings, "swa_full_tokens_ratio"), float) or 0.8,
        disable_hybrid_swa_memory=bool(_get(settings, "disable_hybrid_swa_memory")),
        attention_backend=_get(settings, "attention_backend") or None,
        nsa_trtllm="trtllm" in (_get(settings, "nsa_prefill_backend"), _get(settings, "nsa_decode_backend")),
        enable_multimodal=True if _get(settings, "enable_multimodal") else None,
        deepep=_get(settings, "moe_a2a_backend") == "deepep")


def _facts(model: Model) -> tuple[Mapping[str, Any] | None, int | None, CheckpointFacts | None]:
    """(config.json, weight bytes, the draft's facts) from the model's snapshot, when it has one.

    The snapshot is the one ``catalogs/models/<model>.json`` the checkpoint stage read and
    attached to the model (:func:`generator.checkpoint.attach.snapshot_of`): memory sizing reads
    the same facts as the M rules, never a file of its own.
    """
    snapshot = snapshot_of(model)
    if snapshot is None:
        return None, None, None
    return snapshot.checkpoint.config or None, snapshot.checkpoint.total_size, snapshot.draft


def _pipeline(settings: Any, config: Mapping[str, Any] | None) -> tuple[str, Pipeline] | None:
    """(the checkpoint's architecture, the pin's captured ``<pin>.pipeline.json``), None when
    either is not known."""
    archs = config.get("architectures") if config is not None else None
    catalog = getattr(settings, "catalog", None)
    if not isinstance(archs, list) or not archs or not isinstance(archs[0], str) or catalog is None:
        return None
    pipeline = load_pipeline(catalog.source_file)
    return (archs[0], pipeline) if pipeline is not None else None


def _layer_split(settings: Any, config: Mapping[str, Any]) -> bool | None:
    """Whether the pin's model class for the checkpoint's architecture splits its layers across
    pipeline stages, None when not known."""
    found = _pipeline(settings, config)
    return found[1].splits_layers(found[0]) if found is not None else None


def _pp_refused(diags: Diagnostics, settings: Any, placement: Placement, config: Mapping[str, Any] | None,
                pp: int, pin: str) -> bool:
    """P035: ``--pp-size`` above 1 for a class whose forward takes no ``pp_proxy_tensors``:
    SGLang's model runner asserts ``support_pp`` after loading the weights and stops."""
    found = _pipeline(settings, config) if pp > 1 else None
    if found is None or found[1].supports_pp(found[0]) is not False:
        return False
    arch = found[0]
    where = settings.pos(["pp_size"]) or placement.service.pos("model")
    diags.error(where, "P035", f"'{placement.model.name}' cannot start with parallel.pp {pp}: SGLang {pin}'s "
                f"{arch} takes no pp_proxy_tensors in its forward, so the model runner stops after loading the "
                "weights with \"Pipeline Parallel is not compatible with this model.\" (the pin's "
                "catalogs/sglang/<pin>.pipeline.json)",
                f"set parallel.pp to 1 and spread the model with parallel.tp, or pin an SGLang release whose "
                f"{arch} supports pipeline parallelism")
    return True


def _gib(value: float) -> str:
    return f"{value:.1f} GiB"


def _where(settings: Any, placement: Placement) -> Position:
    return settings.pos(["mem_fraction_static"]) or placement.service.pos("model")


def check_service_memory(placement: Placement, settings: Any, pin: str, diags: Diagnostics) -> MemoryOutcome:
    """Size one service's memory as SGLang ``pin`` will, and record P030-P035 in ``diags``."""
    model, gpus = placement.model, placement.gpus
    if not gpus or model.dropped("weights", "size_gb") or model.dropped("memory", "mem_fraction_static"):
        return MemoryOutcome(None, None, "a value the schema refused")
    flags = service_flags(settings, model)
    where = _where(settings, placement)
    fraction = flags.mem_fraction_static
    if fraction is not None and not 0 < fraction < 1:
        return MemoryOutcome(None, None, "mem_fraction_static is not a fraction (X021)")
    with_mib = [g.memory_mib for g in gpus if g.memory_mib is not None]
    mib = min(with_mib) if len(with_mib) == len(gpus) else None
    gpu_mib = mib if mib is not None else int(min(g.memory_gb for g in gpus) * 1024)
    nvlink = all(nvlink_class(g.model) for g in gpus)
    config, total, draft = _facts(model)
    if _pp_refused(diags, settings, placement, config, flags.pp, pin):
        return MemoryOutcome(None, None, "SGLang refuses pipeline parallelism for this architecture (P035)")
    # A snapshot without the index (a config written from published pages) still sizes the
    # tokens: its weights are then the manifest's weights.size_gb (decimal GB).
    weights_from = "the checkpoint snapshot"
    if config is not None and not total and model.weights.size_gb > 0:
        total, weights_from = int(model.weights.size_gb * 1e9), "weights.size_gb and the snapshot's config.json"
    rules = pin_rules(pin)
    plan: MemoryPlan | None = None
    skipped = None
    if config is not None and total and mib is not None:
        checkpoint = Checkpoint(config, int(total), draft_config=(draft.config or None) if draft else None,
                                draft_weight_bytes=(draft.total_size or 0) if draft else 0)
        try:
            plan = size_memory(rules, checkpoint, mib, flags, nvlink=nvlink, capability=gpus[0].capability,
                               layer_split=_layer_split(settings, config) if flags.pp > 1 else None)
        except (ShapeError, ZeroDivisionError, KeyError, TypeError, ValueError) as exc:
            skipped = f"the snapshot's {exc}"
    else:
        missing = (["no checkpoint snapshot"] if config is None or not total else []) + (
            ["no memory_mib"] if mib is None else [])
        skipped = ", ".join(missing)
    if plan is None:
        fit = budget(rules, model.weights.size_gb * 1e9 / (flags.tp * flags.pp), gpu_mib, flags, nvlink=nvlink)
        if fit.rest_gib <= 0:
            _refuse(diags, where, placement, fit.weights_gib, 0.0, fit.free_before_load_gib, fit.free_after_load_gib,
                    fit.mem_fraction_static, fit.fraction_is_default, fit.min_fraction, rules, gpu_mib,
                    source="weights.size_gb (no checkpoint snapshot)" if config is None else "weights.size_gb")
        elif fit.mem_fraction_static >= HIGH_FRACTION:
            _high(diags, where, fit.mem_fraction_static, fit.default_fraction, None)
        return MemoryOutcome(None, fit, skipped, gpu_mib)
    if not plan.fits:
        _refuse(diags, where, placement, plan.weights_gib, plan.draft_weights_gib if plan.draft_counted else 0.0,
                plan.free_before_load_gib, plan.free_before_load_gib - plan.weights_gib
                - (plan.draft_weights_gib if plan.draft_counted else 0.0), plan.mem_fraction_static,
                plan.fraction_is_default, plan.min_fraction, rules, gpu_mib, source=weights_from)
        return MemoryOutcome(plan, gpu_memory_mib=mib)
    if plan.reserve_gib < 0 and plan.after_pool_gib >= TABLE_FLOOR_GIB:
        _after_pool(diags, where, placement, plan)
        return MemoryOutcome(plan, gpu_memory_mib=mib)
    if plan.max_total_num_tokens < plan.context_len:
        diags.error(where, "P031", f"the KV cache of '{model.name}' holds {plan.max_total_num_tokens:,} tokens per GPU "
                    f"({_gib(plan.kv_pool_gib)} at {plan.cell_bytes:,} bytes per token, mem_fraction_static "
                    f"{plan.mem_fraction_static:g}), fewer than one request at its context length "
                    f"{plan.context_len:,}: SGLang starts, then refuses or truncates every longer request",
                    f"set context_length to {plan.max_total_num_tokens:,} or less, or make room: "
                    f"memory.mem_fraction_static above {plan.mem_fraction_static:g}, more GPUs (parallel.tp), or an "
                    "FP8 KV cache (args: --kv-cache-dtype: fp8_e4m3)")
    if plan.mem_fraction_static >= HIGH_FRACTION:
        _high(diags, where, plan.mem_fraction_static, plan.default_fraction, plan)
    elif not plan.fraction_is_default and plan.reserve_gib < plan.default_reserve_gib - RESERVE_SLACK_GIB:
        diags.warning(where, "P032", f"'{model.name}' leaves {_gib(plan.reserve_gib)} per GPU for CUDA graphs and "
                      f"activations after {_gib(plan.weights_gib)} of weights and a {_gib(plan.kv_pool_gib)} KV "
                      f"cache; SGLang's own default for this GPU and these flags (mem_fraction_static "
                      f"{plan.default_fraction:.3f}) keeps {_gib(plan.default_reserve_gib)}: CUDA graph capture or a "
                      f"full prefill chunk ({plan.chunked_prefill_size} tokens) may run out of memory after the "
                      "weights load", f"lower memory.mem_fraction_static to {plan.default_fraction:.3f} (or remove "
                      "it and let SGLang choose), or lower --chunked-prefill-size / --cuda-graph-max-bs (args)")
    return MemoryOutcome(plan, gpu_memory_mib=mib)


def _refuse(diags: Diagnostics, where: Position, placement: Placement, weights: float, draft: float, pre: float,
            post: float, fraction: float, default: bool, minimum: float, pin: str, mib: int, source: str) -> None:
    """P030: SGLang's refusal, with the fraction that would work."""
    model = placement.model
    gpu = placement.gpus[0]
    name = f" ({gpu.model})" if gpu.model else ""
    said = ("\"Loaded weights leave no GPU memory for the KV cache\"" if pin != "0.5.9"
            else "\"Not enough memory. Please try to increase --mem-fraction-static\"")
    draft_text = f" plus {_gib(draft)} of draft weights" if draft else ""
    whose = "SGLang's default for this GPU and these flags" if default else "the manifest's"
    if minimum < 1:
        needed = math.ceil(minimum * 1000) / 1000
        fix = (f"set memory.mem_fraction_static to at least {needed:.3f} (1 - {post:.2f}/{pre:.2f} GiB, SGLang's "
               "own minimum; more leaves less room for CUDA graphs), or spread the weights over more GPUs "
               "(parallel.tp)")
    else:
        fix = "the weights alone exceed the GPU's memory: spread them over more GPUs (parallel.tp) or use a smaller checkpoint"
    diags.error(where, "P030", f"'{model.name}' cannot start on GPU {', '.join(str(g.index) for g in placement.gpus)}"
                f"{name}, {mib / 1024:.1f} GiB each: {_gib(weights)} of weights per GPU{draft_text} (from {source}) "
                f"leave {_gib(post)} of the {_gib(pre)} free before load, and mem_fraction_static {fraction:g} "
                f"({whose}) keeps {_gib(pre * (1 - fraction))} out of the static pool: no memory is left for the "
                f"KV cache; SGLang {pin} stops with {said}", fix)


def _after_pool(diags: Diagnostics, where: Position, placement: Placement, plan: MemoryPlan) -> None:
    """P034: what SGLang allocates after sizing the KV pool (the request table; on 0.5.9 the
    draft's weights and KV cache) does not fit what the static pool left."""
    model = placement.model
    left = plan.reserve_gib + plan.after_pool_gib
    parts = []
    if plan.req_table_gib >= TABLE_FLOOR_GIB:
        parts.append(f"a request table of {_gib(plan.req_table_gib)} (one int32 slot per token of the context "
                     f"length {plan.context_len:,} for each of {plan.req_table_rows:,} request slots)")
    if plan.late_draft_gib > 0:
        parts.append(f"the speculative draft's weights and KV cache, {_gib(plan.late_draft_gib)} (0.5.9 loads the "
                     "draft after sizing the target's pool)")
    message = (f"'{model.name}' cannot start: after {_gib(plan.weights_gib)} of weights and a "
               f"{_gib(plan.kv_pool_gib)} KV cache per GPU, SGLang {plan.pin} still allocates "
               f"{' and '.join(parts)}, and only {_gib(left)} is left: CUDA runs out of memory at launch, "
               "before serving")
    if plan.late_draft_gib <= plan.req_table_gib:
        rows = max(plan.req_table_rows, 1)
        # The table is rows x (context + headroom) int32 values; the context that fits it alone.
        fits_context = max(int(left * GIB // (rows * 4)) - 4, 0)
        fix = (f"set context_length to {min(fits_context, plan.context_len)} or less in the model manifest "
               "(--context-length; that fits the table alone, CUDA graphs and activations need more), or cap "
               "the requests (args: --max-running-requests)")
    else:
        # 0.5.9 sizes the pool from the fraction, then the draft comes out of what the fraction
        # left: its KV scales with the pool (ratio r), so the reserve is
        # pre x (1 - f) - A - r x (post - pre x (1 - f)), >= 0 below this fraction.
        pre, post = plan.free_before_load_gib, plan.free_before_load_gib - plan.weights_gib
        ratio = plan.draft_kv_gib / plan.kv_pool_gib if plan.kv_pool_gib > 0 else 0.0
        fixed = plan.req_table_gib + plan.draft_weights_gib
        most = (pre * (1 + ratio) - fixed - ratio * post) / (pre * (1 + ratio))
        highest = math.floor(most * 1000) / 1000
        lowest = math.ceil(plan.min_fraction * 1000) / 1000
        if highest > lowest:
            fix = (f"lower memory.mem_fraction_static to {highest:.3f} or less (from {lowest:.3f} up the weights still "
                   "leave a KV cache; that fits the draft alone, CUDA graphs need more), or spread the model over "
                   "more GPUs (parallel.tp)")
        else:
            fix = (f"no mem_fraction_static fits both on this GPU (the KV cache needs more than {lowest:.3f}, the draft "
                   f"less than {highest:.3f}): spread the model over more GPUs (parallel.tp), or run SGLang 0.5.23 "
                   "or later (sglang.pin), which counts the draft in the budget")
    diags.error(where, "P034", message, fix)


def _high(diags: Diagnostics, where: Position, fraction: float, default: float, plan: MemoryPlan | None) -> None:
    """P033: a fraction SGLang's own rule never picks."""
    left = f" leaves {_gib(plan.reserve_gib)} per GPU for CUDA graphs and activations and" if plan is not None else ""
    diags.warning(where, "P033", f"mem_fraction_static {fraction:g}{left} is at or above {HIGH_FRACTION}: SGLang's "
                  f"own rule picks {default:.3f} for this GPU and these flags, and the CUDA graph capture after "
                  "the KV pool runs out of memory at such values", f"lower memory.mem_fraction_static to "
                  f"{default:.3f} or remove it")
