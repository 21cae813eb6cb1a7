"""Memory: the running server's own figures (``/get_server_info``) against gen's prediction.

SGLang's ``/get_server_info`` returns its resolved server args (``mem_fraction_static``),
the scheduler's ``max_total_num_tokens`` and, per data-parallel rank, ``internal_states``
with ``memory_usage`` (``weight`` GB, ``kvcache`` GB, ``token_capacity``). A difference of
more than 5% from what gen predicted before deploy is a WARN that names the input to
correct: the fraction (flags), the weights (the checkpoint snapshot), or the free memory
before load (gen's assumption, or another process on the GPU). The live tests' stand-in
server answers with a figure it was given and says it is a stand-in's; so does the result.
"""

from __future__ import annotations

from typing import Any

from generator.live.context import HostContext
from generator.live.plan import MemoryPrediction, ServicePlan
from generator.live.remote import RemoteError, onhost
from generator.live.results import CheckResult, Status
from generator.load import json_text

TOLERANCE = 0.05


def _internal(info: dict[str, Any]) -> dict[str, Any]:
    states = info.get("internal_states")
    first = states[0] if isinstance(states, list) and states and isinstance(states[0], dict) else {}
    usage = first.get("memory_usage")
    return usage if isinstance(usage, dict) else {}


def _off(predicted: float, actual: float) -> float:
    return abs(predicted - actual) / actual if actual else float("inf")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def compare(svc: ServicePlan, want: MemoryPrediction, info: dict[str, Any], host: str) -> CheckResult:
    """One result: PASS when the server's figures are within 5% of the prediction, else WARN."""
    usage = _internal(info)
    who = ("the stand-in server's figures (not SGLang's)" if info.get("standin")
           else f"SGLang {info.get('version', '?')}'s figures")
    tokens = _number(info.get("max_total_num_tokens")) or _number(usage.get("token_capacity"))
    fraction = _number(info.get("mem_fraction_static"))
    weight = _number(usage.get("weight"))
    lines = [f"source: {who} from {svc.base_url}/get_server_info"]
    wrong: list[str] = []
    if fraction is not None and abs(fraction - want.mem_fraction_static) > 0.0005:
        wrong.append(f"mem_fraction_static {fraction:g}, gen resolved {want.mem_fraction_static:g}: correct "
                     "memory.mem_fraction_static or the flags SGLang's default reads (chunked prefill, CUDA graph "
                     "batch size, TP, speculative decoding)")
    if weight is not None and _off(want.weights_gib, weight) > TOLERANCE:
        wrong.append(f"weights {weight:.2f} GiB per GPU, gen charged {want.weights_gib:.2f}: correct the weights' "
                     "size (the checkpoint snapshot, `gen model snapshot`, or weights.size_gb)")
    if tokens is not None and want.max_total_num_tokens is not None \
            and _off(want.max_total_num_tokens, tokens) > TOLERANCE:
        cause = ("the free memory before load gen assumed" if want.free_before_load_assumed else
                 "the free memory before load")
        if not wrong:
            wrong.append(f"max_total_num_tokens {int(tokens):,}, gen predicted {want.max_total_num_tokens:,} "
                         f"({(want.max_total_num_tokens - tokens) / tokens:+.1%}): correct {cause} "
                         f"({want.free_before_load_gib:.2f} GiB: the GPU's memory_mib, `gen host snapshot`, or "
                         "another process holding GPU memory)")
        else:
            wrong.append(f"max_total_num_tokens {int(tokens):,}, gen predicted {want.max_total_num_tokens:,}")
    if tokens is not None:
        lines.append(f"max_total_num_tokens {int(tokens):,} (gen predicted "
                     + (f"{want.max_total_num_tokens:,})" if want.max_total_num_tokens is not None
                        else "none: no checkpoint snapshot)"))
    if tokens is None and fraction is None and weight is None:
        wrong.append("the server reported none of max_total_num_tokens, mem_fraction_static, memory_usage")
    detail = ("; ".join(wrong) if wrong else
              f"within {TOLERANCE:.0%} of gen's prediction ({who})")
    status = Status.WARN if wrong else Status.PASS
    return CheckResult(status, host, svc.name, "memory", detail, "\n".join(lines))


def run(ctx: HostContext) -> list[CheckResult]:
    """One memory result per enabled service gen sized."""
    out: list[CheckResult] = []
    for svc in ctx.plan.services:
        if not svc.enabled or svc.memory is None:
            continue
        try:
            [reply] = onhost(ctx.host, ctx.plan.python, "http", f"{svc.base_url}/get_server_info")
        except RemoteError as exc:
            out.append(CheckResult(Status.WARN, ctx.plan.name, svc.name, "memory", "cannot ask the server", str(exc)))
            continue
        try:
            # the server's answer is outside data: any nesting is a JSONDecodeError, not a RecursionError
            info = json_text.loads(reply.get("body", "")) if reply.get("status") == 200 else None
        except ValueError:
            info = None
        if not isinstance(info, dict):
            out.append(CheckResult(Status.WARN, ctx.plan.name, svc.name, "memory",
                                   f"GET {reply.get('url')} -> {reply.get('status') or reply.get('error')}: no "
                                   "figures to compare", str(reply.get("body", ""))[:2000]))
            continue
        out.append(compare(svc, svc.memory, info, ctx.plan.name))
    return out
