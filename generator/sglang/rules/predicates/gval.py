"""Predicates of the rules for SGLang's general argument validation (check_server_args, watermarks, bucket rules).

Found by the coverage inventory (catalogs/coverage/<pin>.yaml); each predicate reports
the first of SGLang's own checks the settings break, in SGLang's order and words. This
module holds the checks of check_server_args itself (0.5.9: ``ServerArgs.check_server_args``;
0.5.23: ``arg_groups/validation_hook.check_server_args``); the bucket rules and the
watermark checks are in gval_watermark.py.
"""

from __future__ import annotations

from typing import Any

from generator.sglang.rules.predicates.common import algorithm
from generator.sglang.rules.registry import Hit, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec

# (name, lower bound, strict, SGLang's message): check_server_args' single-value checks, in
# SGLang's order. pp_max_micro_batch_size (checked first) and gc_threshold are handled apart.
_RANGES_059 = (
    ("base_gpu_id", 0, False, "base_gpu_id must be non-negative"),
    ("gpu_id_step", 1, False, "gpu_id_step must be positive"),
    ("tokenizer_worker_num", 0, True, "Tokenizer worker num must >= 1"),
    ("schedule_conservativeness", 0, False, "schedule_conservativeness must be non-negative"),
)
_RANGES_0523 = (
    ("base_gpu_id", 0, False, "base_gpu_id must be non-negative"),
    ("gpu_id_step", 1, False, "gpu_id_step must be positive"),
    ("tokenizer_worker_num", 0, True, "Tokenizer worker num must >= 1"),
    ("detokenizer_worker_num", 0, True, "Detokenizer worker num must >= 1"),
    ("mm_processor_worker_num", 0, False, "Multimodal processor worker num must >= 0"),
    ("mm_io_worker_num", 0, False, "Multimodal I/O worker num must >= 0"),
    ("schedule_conservativeness", 0, False, "schedule_conservativeness must be non-negative"),
)


def _forced_to_one(s: Settings, name: str) -> bool:
    """SGLang sets this worker count to 1 itself with --skip-tokenizer-init (so it is not checked)."""
    if not s.get("skip_tokenizer_init", False):
        return False
    if s.at_least(0, 5, 23):  # serving_hook.handle_tokenizer_batching, unless SGLANG_RUST_SERVER
        return name == "detokenizer_worker_num" and not s.env_true("SGLANG_RUST_SERVER")
    return name == "tokenizer_worker_num"  # 0.5.9 _handle_tokenizer_batching


def _range_hit(s: Settings, name: str, value: Any, detail: str, sglang: str, fix: str) -> Hit:
    return Hit((name,), {"flag": s.flag(name), "value": value, "detail": detail, "sglang": sglang, "fix": fix})


@predicate("server-arg-ranges")
def _server_arg_ranges(s: Settings, rule: RuleSpec) -> Hit | None:
    newer = s.at_least(0, 5, 23)
    micro = s.number("pp_max_micro_batch_size") if newer and s.has("pp_max_micro_batch_size") else None
    if micro is not None and micro < 1:
        return _range_hit(s, "pp_max_micro_batch_size", micro, "must be at least 1 (or left out: SGLang computes it)",
                          "pp_max_micro_batch_size must be a positive integer or None (for auto-compute)",
                          f"remove {s.flag('pp_max_micro_batch_size')} or give it a value of 1 or more")
    for name, low, strict, sglang in (_RANGES_0523 if newer else _RANGES_059):
        value = s.number(name) if s.has(name) else None
        if value is None or _forced_to_one(s, name) or (value > low if strict else value >= low):
            continue
        bound = f"more than {low}" if strict else f"at least {low}"
        return _range_hit(s, name, value, f"must be {bound}", sglang, f"give {s.flag(name)} a value {bound}")
    gc = s.get("gc_threshold") if s.has("gc_threshold") else None
    if isinstance(gc, list) and gc and not 1 <= len(gc) <= 3:
        return _range_hit(s, "gc_threshold", " ".join(map(str, gc)), f"has {len(gc)} values, 1 to 3 allowed",
                          "When setting gc_threshold, it must contain 1 to 3 integers.",
                          f"give {s.flag('gc_threshold')} 1 to 3 integers (as Python's gc.set_threshold)")
    return None


def _first(checks: list[tuple[bool, str, str, str]]) -> tuple[str, str, str] | None:
    return next(((d, m, f) for broken, d, m, f in checks if broken), None)


@predicate("pdmux-compat")
def _pdmux_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_pdmux", False):
        return None
    pp, chunk = s.integer("pp_size", 1), s.get("chunked_prefill_size")
    # SGLang turns the overlap schedule off itself for diffusion LLMs and (0.5.9) with
    # SGLANG_EMBEDDINGS_SPARSE_HEAD, and chooses it with speculative decoding: silent there.
    overlap_on = not (s.get("disable_overlap_schedule", False) or algorithm(s) is not None
                      or s.get("dllm_algorithm") is not None or "SGLANG_EMBEDDINGS_SPARSE_HEAD" in s.env)
    chunk_text = "unset (SGLang derives a size from the GPU's memory)" if chunk is None else str(chunk)
    found = _first([
        (pp != 1, f"with {s.flag('pp_size')} {pp}", "PD-Multiplexing is only supported with pipeline parallelism "
         "disabled (pp_size=1).", f"use {s.flag('pp_size')} 1 with {s.flag('enable_pdmux')}"),
        (chunk != -1, f"with {s.flag('chunked_prefill_size')} {chunk_text}",
         "PD-Multiplexing is not compatible with chunked prefill.", f"set {s.flag('chunked_prefill_size')} -1"),
        (s.get("disaggregation_mode", "null") != "null",
         f"with {s.flag('disaggregation_mode')} {s.get('disaggregation_mode')}",
         "PD-Multiplexing is not compatible with disaggregation mode.", f"remove {s.flag('disaggregation_mode')}"),
        (overlap_on, "without " + s.flag("disable_overlap_schedule"),
         "PD-Multiplexing is not compatible with overlap schedule.", f"add {s.flag('disable_overlap_schedule')}"),
    ])
    if found is None:
        return None
    detail, sglang, fix = found
    return Hit(("enable_pdmux",), {"pdmux": s.flag("enable_pdmux"), "detail": detail, "sglang": sglang, "fix": fix})


def _mixed_chunk_on(s: Settings) -> bool:
    """--enable-mixed-chunk as 0.5.9 leaves it: dual-chunk attention and diffusion LLMs turn it off."""
    return (bool(s.get("enable_mixed_chunk", False)) and s.get("attention_backend") != "dual_chunk_flash_attn"
            and s.get("dllm_algorithm") is None)


@predicate("multi-item-scoring")
def _multi_item_scoring(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("multi_item_scoring_delimiter") or s.get("multi_item_scoring_delimiter") is None:
        return None
    chunk = s.get("chunked_prefill_size")
    # 0.5.9 turns the radix cache off itself for these (hybrid/mamba models too: not known here).
    radix_off = (s.get("disable_radix_cache", False) or s.get("attention_backend") == "dual_chunk_flash_attn"
                 or s.get("disaggregation_mode") == "decode" or s.get("dllm_algorithm") is not None
                 or s.get("enable_deterministic_inference", False))
    found = _first([
        (not radix_off, "needs " + s.flag("disable_radix_cache"),
         "Multi-item scoring requires radix cache to be disabled.", f"add {s.flag('disable_radix_cache')}"),
        (chunk != -1, f"needs {s.flag('chunked_prefill_size')} -1 (got "
         f"{'unset: SGLang derives a size' if chunk is None else chunk})",
         "Multi-item scoring requires chunked prefill to be disabled.", f"set {s.flag('chunked_prefill_size')} -1"),
    ])
    if found is None:
        return None
    detail, sglang, fix = found
    return Hit(("multi_item_scoring_delimiter",), {"delimiter": s.flag("multi_item_scoring_delimiter"),
                                                   "detail": detail, "sglang": sglang, "fix": fix})


@predicate("priority-scheduling-policy")
def _priority_policy(s: Settings, rule: RuleSpec) -> Hit | None:
    enabled = bool(s.get("enable_priority_scheduling", False))
    policy = s.get("schedule_policy", "fcfs")
    prio, sched = s.flag("enable_priority_scheduling"), s.flag("schedule_policy")
    if enabled and policy not in ("fcfs", "lof"):
        return Hit(("schedule_policy", "enable_priority_scheduling"), {
            "detail": f"{prio} with {sched} {policy}",
            "sglang": f"To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'. '{policy}' is not supported.",
            "fix": f"use {sched} fcfs or lof with {prio}"})
    if s.has("retraction_policy") and s.get("retraction_policy") == "priority" and not enabled:
        retract = s.flag("retraction_policy")
        return Hit(("retraction_policy",), {
            "detail": f"{retract} priority without {prio}",
            "sglang": "--retraction-policy priority requires --enable-priority-scheduling",
            "fix": f"add {prio}, or use {retract} length"})
    return None


@predicate("metrics-args")
def _metrics_args(s: Settings, rule: RuleSpec) -> Hit | None:
    header, labels = "tokenizer_metrics_custom_labels_header", "tokenizer_metrics_allowed_custom_labels"
    if not s.get(header, "") and s.get(labels):
        return Hit((header, labels), {
            "detail": f"{s.flag(labels)} with an empty {s.flag(header)}",
            "sglang": "Please set --tokenizer-metrics-custom-labels-header when setting "
                      "--tokenizer-metrics-allowed-custom-labels.",
            "fix": f"give {s.flag(header)} a header name (SGLang's default is x-custom-labels)"})
    if s.get("export_metrics_to_file", False) and s.get("export_metrics_to_file_dir") is None:
        return Hit(("export_metrics_to_file",), {
            "detail": f"{s.flag('export_metrics_to_file')} without {s.flag('export_metrics_to_file_dir')}",
            "sglang": "--export-metrics-to-file-dir is required when --export-metrics-to-file is enabled",
            "fix": f"add {s.flag('export_metrics_to_file_dir')} DIR"})
    return None


@predicate("quant-communications")
def _quant_communications(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_quant_communications", False):
        return None
    tp, device = s.integer("tp_size", 1), s.get("device")
    if tp == 1:
        detail, sglang = (f"with {s.flag('tp_size')} 1", "Communications quantization is only used with tp_size != 1")
        fix = f"remove {s.flag('enable_quant_communications')} (there is no tensor-parallel communication to quantize)"
    elif device != "npu":
        # --device left out means the host's GPU (CUDA on the hosts gen renders for).
        shown = device if device is not None else "unset (the host's CUDA GPU)"
        detail = f"with {s.flag('device')} {shown}"
        sglang = "Communications quantization is only supported for NPU device"
        fix = f"remove {s.flag('enable_quant_communications')} (Ascend NPU only)"
    else:
        return None
    return Hit(("enable_quant_communications",), {"quant": s.flag("enable_quant_communications"),
                                                  "detail": detail, "sglang": sglang, "fix": fix})


@predicate("grpc-port-clash")
def _grpc_port_clash(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("grpc_port") or (s.has("smg_grpc_mode") and s.get("smg_grpc_mode", False)) or s.get("grpc_mode", False):
        return None  # the SMG gRPC modes are not checked (SGLang derives the port from --port itself)
    grpc, source = s.get("grpc_port"), ""
    if grpc is None and s.env.get("SGLANG_GRPC_PORT", "").strip().lstrip("-").isdigit():
        grpc, source = int(s.env["SGLANG_GRPC_PORT"]), " (from SGLANG_GRPC_PORT)"
    port = s.get("port", 30000)
    if grpc is None or grpc != port:
        return None
    return Hit(("grpc_port", "port"), {"grpc": s.flag("grpc_port"), "port": s.flag("port"), "value": port,
                                       "source": source})
