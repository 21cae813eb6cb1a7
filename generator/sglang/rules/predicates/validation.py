"""Predicates of SGLang's general argument validation: check_server_args' own checks, validate_buckets_rule, check_watermark_server_args.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations

import json
from typing import Any

from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.registry import Hit, check, first_broken, item, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec
from generator.load.json_text import loads as decode_json


# (name, lower bound, strict, check): check_server_args' single-value checks, in SGLang's
# order (the check's texts are in rules.yaml). pp_max_micro_batch_size (checked first) and
# gc_threshold are handled apart.
_RANGES_059 = (
    ("base_gpu_id", 0, False, "base-gpu-id-negative"),
    ("gpu_id_step", 1, False, "gpu-id-step-not-positive"),
    ("tokenizer_worker_num", 0, True, "tokenizer-workers-below-one"),
    ("schedule_conservativeness", 0, False, "schedule-conservativeness-negative"),
)


_RANGES_0523 = (
    ("base_gpu_id", 0, False, "base-gpu-id-negative"),
    ("gpu_id_step", 1, False, "gpu-id-step-not-positive"),
    ("tokenizer_worker_num", 0, True, "tokenizer-workers-below-one"),
    ("detokenizer_worker_num", 0, True, "detokenizer-workers-below-one"),
    ("mm_processor_worker_num", 0, False, "mm-processor-workers-negative"),
    ("mm_io_worker_num", 0, False, "mm-io-workers-negative"),
    ("schedule_conservativeness", 0, False, "schedule-conservativeness-negative"),
)


def _forced_to_one(s: Settings, name: str) -> bool:
    """SGLang sets this worker count to 1 itself with --skip-tokenizer-init (so it is not checked)."""
    if not s.get("skip_tokenizer_init", False):
        return False
    if s.at_least(0, 5, 23):  # serving_hook.handle_tokenizer_batching, unless SGLANG_RUST_SERVER
        return name == "detokenizer_worker_num" and not s.env_true("SGLANG_RUST_SERVER")
    return name == "tokenizer_worker_num"  # 0.5.9 _handle_tokenizer_batching


@predicate("server-arg-ranges")
def _server_arg_ranges(s: Settings, rule: RuleSpec) -> Hit | None:
    newer = s.at_least(0, 5, 23)
    micro = s.number("pp_max_micro_batch_size") if newer and s.has("pp_max_micro_batch_size") else None
    if micro is not None and micro < 1:
        return Hit(("pp_max_micro_batch_size",), {"option": s.flag("pp_max_micro_batch_size"), "written": micro},
                   "micro-batch-not-positive")
    for name, low, strict, problem in (_RANGES_0523 if newer else _RANGES_059):
        value = s.number(name) if s.has(name) else None
        if value is None or _forced_to_one(s, name) or (value > low if strict else value >= low):
            continue
        return Hit((name,), {"option": s.flag(name), "written": value}, problem)
    gc = s.get("gc_threshold") if s.has("gc_threshold") else None
    if isinstance(gc, list) and gc and not 1 <= len(gc) <= 3:
        return Hit(("gc_threshold",), {"option": s.flag("gc_threshold"), "written": gc, "count": len(gc)},
                   "gc-threshold-count")
    return None


@predicate("pdmux-compat")
def _pdmux_compat(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_pdmux", False):
        return None
    pp, chunk = s.integer("pp_size", 1), s.get("chunked_prefill_size")
    # SGLang turns the overlap schedule off itself for diffusion LLMs and (0.5.9) with
    # SGLANG_EMBEDDINGS_SPARSE_HEAD, and chooses it with speculative decoding: silent there.
    overlap_on = not (s.get("disable_overlap_schedule", False) or algorithm(s) is not None
                      or s.get("dllm_algorithm") is not None or "SGLANG_EMBEDDINGS_SPARSE_HEAD" in s.env)
    return first_broken([
        check(pp != 1, "pp", ("enable_pdmux",), pp=pp),
        check(chunk != -1, "chunk-unset" if chunk is None else "chunk", ("enable_pdmux",), chunk=chunk),
        check(s.get("disaggregation_mode", "null") != "null", "disaggregation", ("enable_pdmux",)),
        check(overlap_on, "overlap", ("enable_pdmux",)),
    ])


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
    blame = ("multi_item_scoring_delimiter",)
    return first_broken([
        check(not radix_off, "radix", blame),
        check(chunk != -1, "chunk-unset" if chunk is None else "chunk", blame, chunk=chunk),
    ])


@predicate("priority-scheduling-policy")
def _priority_policy(s: Settings, rule: RuleSpec) -> Hit | None:
    enabled = bool(s.get("enable_priority_scheduling", False))
    policy = s.get("schedule_policy", "fcfs")
    if enabled and policy not in ("fcfs", "lof"):
        return Hit(("schedule_policy", "enable_priority_scheduling"), {"policy": policy}, "policy-not-fcfs-or-lof")
    if s.has("retraction_policy") and s.get("retraction_policy") == "priority" and not enabled:
        return Hit(("retraction_policy",), {}, "retraction-without-priority")
    return None


@predicate("metrics-args")
def _metrics_args(s: Settings, rule: RuleSpec) -> Hit | None:
    header, labels = "tokenizer_metrics_custom_labels_header", "tokenizer_metrics_allowed_custom_labels"
    if not s.get(header, "") and s.get(labels):
        return Hit((header, labels), {}, "labels-without-header")
    if s.get("export_metrics_to_file", False) and s.get("export_metrics_to_file_dir") is None:
        return Hit(("export_metrics_to_file",), {}, "file-without-dir")
    return None


@predicate("quant-communications")
def _quant_communications(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("enable_quant_communications", False):
        return None
    tp, device = s.integer("tp_size", 1), s.get("device")
    # --device left out means the host's GPU (CUDA on the hosts gen renders for).
    return first_broken([check(tp == 1, "tp-size-one", ("enable_quant_communications",)),
                         check(device != "npu", "device-unset" if device is None else "not-npu",
                               ("enable_quant_communications",))])


@predicate("grpc-port-clash")
def _grpc_port_clash(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("grpc_port") or (s.has("smg_grpc_mode") and s.get("smg_grpc_mode", False)) or s.get("grpc_mode", False):
        return None  # the SMG gRPC modes are not checked (SGLang derives the port from --port itself)
    grpc, source = s.get("grpc_port"), "grpc-port-written"
    if grpc is None and s.env.get("SGLANG_GRPC_PORT", "").strip().lstrip("-").isdigit():
        grpc, source = int(s.env["SGLANG_GRPC_PORT"]), "grpc-port-from-env"
    port = s.get("port", 30000)
    if grpc is None or grpc != port:
        return None
    return Hit(("grpc_port", "port"), {"port": port}, source)


# The bucket settings in SGLang's order, and the option string SGLang's own messages name.
_BUCKET_FLAGS = (("prompt_tokens_buckets", "--prompt-tokens-buckets"),
                 ("generation_tokens_buckets", "--generation-tokens-buckets"))


def _tse(rule: list[str]) -> tuple[str, dict[str, object]] | None:
    if len(rule) != 4:
        return "tse-parameter-count", {"parameters": len(rule) - 1, "length": len(rule)}
    try:
        middle, base, count = float(rule[1]), float(rule[2]), int(rule[3])
    except ValueError:
        return "tse-not-numbers", {}
    if not base > 1:
        return "tse-base-not-above-one", {"base": base}
    if not count > 0:
        return "tse-count-not-positive", {"count": count}
    if not middle > 0:
        return "tse-middle-not-positive", {"middle": middle}
    return None


def _custom(rule: list[str]) -> str | None:
    if len(rule) < 2:
        return "custom-no-bucket"
    try:
        values = [float(x) for x in rule[1:]]
    except ValueError:
        return "custom-not-numbers"
    if len(set(values)) != len(values):
        return "custom-repeated"
    if not all(v >= 0 for v in values):
        return "custom-negative"
    return None


def _bucket_problem(rule: list[str]) -> tuple[str, dict[str, object]] | None:
    """The first check of SGLang's validate_buckets_rule the list breaks, and its values."""
    kind = rule[0]
    if kind == "tse":
        return _tse(rule)
    if kind == "default":
        return ("default-with-parameters", {"parameters": len(rule) - 1, "length": len(rule)}) if len(rule) != 1 else None
    if kind == "custom":
        found = _custom(rule)
        return (found, {}) if found is not None else None
    return "unknown-kind", {"kind": kind}


@predicate("buckets-rule")
def _buckets_rule(s: Settings, rule: RuleSpec) -> Hit | None:
    for name, sglang_option in _BUCKET_FLAGS:  # SGLang validates prompt, then generation buckets
        value = s.get(name) if s.has(name) else None
        if not value:
            continue  # SGLang returns on an empty or missing list
        words = [str(v) for v in value] if isinstance(value, list) else [str(value)]
        found = _bucket_problem(words)
        if found is not None:
            problem, fields = found
            return Hit((name,), {"option": s.flag(name), "written": words, "sglang_option": sglang_option, **fields},
                       problem)
    return None


# SGLang's defaults of the fields --watermark-config fills (arg_groups/fields/exec_.py).
_WATERMARK_DEFAULTS: dict[str, Any] = {"key": None, "key_b": None, "context_window": 4, "mixing_probability": 0.5,
                                       "max_probability": 1.0, "default_enabled": False, "enforce_all": False}


_WATERMARK_SPEC = {None, "NGRAM", "EAGLE", "EAGLE3"}


def _key_problem(value: Any) -> str | None:
    """SGLang's parse_watermark_key, without the value (a hex string of 1 to 16 digits): the check it breaks."""
    if value is None:
        return None
    if not isinstance(value, str):
        return "key-not-text"
    digits = value[2:] if value.lower().startswith("0x") else value
    if not 1 <= len(digits) <= 16:
        return "key-digits"
    if any(c not in "0123456789abcdefABCDEF" for c in digits):
        return "key-hex"
    return None


_CONFIG = ("watermark_config",)


def _inline_config(text: str) -> tuple[dict[str, Any] | None, Hit | None]:
    """The inline --watermark-config object with SGLang's defaults, or the check SGLang fails reading it."""
    try:
        raw = decode_json(text)
    except json.JSONDecodeError:
        return None, Hit(_CONFIG, {}, "json-unreadable")
    if not isinstance(raw, dict):
        return None, Hit(_CONFIG, {}, "config-not-object")
    if set(raw) - set(_WATERMARK_DEFAULTS):
        return None, Hit(_CONFIG, {}, "config-unknown-fields")
    for name in ("key", "key_b"):
        problem = _key_problem(raw.get(name))
        if problem is not None:
            return None, Hit(_CONFIG, {}, problem)
    window = raw.get("context_window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= 64):
        return None, Hit(_CONFIG, {}, "context-window")
    for name in ("mixing_probability", "max_probability"):
        value = raw.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return None, Hit(_CONFIG, {"field": name}, "probability-not-number")
    for name in ("default_enabled", "enforce_all"):
        if raw.get(name) is not None and not isinstance(raw[name], bool):
            return None, Hit(_CONFIG, {"field": name}, "switch-not-boolean")
    return {**_WATERMARK_DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}, None


def _config_problem(cfg: dict[str, Any]) -> Hit | None:
    """The first check of check_watermark_server_args on the config's values."""
    mixing, top = cfg["mixing_probability"], cfg["max_probability"]
    return first_broken([
        check(cfg["key_b"] is not None and cfg["key"] is None, "key-b-without-key", _CONFIG),
        check(not 0 < mixing < 1, "mixing-range", _CONFIG),
        check(cfg["key_b"] is None and mixing != 0.5, "mixing-without-key-b", _CONFIG),
        check(not 0 < top <= 1, "max-probability", _CONFIG),
        check((cfg["default_enabled"] or cfg["enforce_all"]) and cfg["key"] is None, "enabled-without-key", _CONFIG),
    ])


def _flag_problem(s: Settings) -> Hit | None:
    """The first flag --enable-watermark cannot go with."""
    algo = None if s.get("enable_return_aux_hidden_states", False) else algorithm(s)
    mode = s.get("disaggregation_mode", "null")
    mark = ("enable_watermark",)
    return first_broken([
        check(bool(s.get("enable_custom_logit_processor", False)), "with-custom-logit-processor", mark),
        check(s.get("dllm_algorithm") is not None, "with-dllm", mark),
        check(mode != "null", "with-pd", mark),
        check(algo not in _WATERMARK_SPEC, "with-spec-algorithm", mark),
        check(s.integer("pp_size", 1) > 1 and algo is not None, "with-pp-spec", mark),
        check(bool(s.get("speculative_use_rejection_sampling", False)), "with-rejection-sampling", mark),
    ], mode=mode, algo=algo)


@predicate("watermark-args")
def _watermark_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("enable_watermark"):
        return None
    enabled, config = bool(s.get("enable_watermark", False)), s.get("watermark_config")
    if config is not None and str(config).lstrip().startswith("{"):
        values, error = _inline_config(str(config))
        if error is None and values is not None and enabled:
            error = _config_problem(values)
        if error is not None:  # SGLang reads the config before it checks --enable-watermark
            return error
    if config is not None and not enabled:
        return Hit(_CONFIG, {}, "config-without-enable")
    return _flag_problem(s) if enabled else None


@predicate("watermark-key-in-argv")
def _watermark_key_in_argv(s: Settings, rule: RuleSpec) -> Hit | None:
    config = s.get("watermark_config") if s.has("watermark_config") else None
    if config is None or not str(config).lstrip().startswith("{"):
        return None  # a file path: the key stays on the host
    try:
        raw = decode_json(str(config))
    except json.JSONDecodeError:
        return None  # watermark-args reports it
    keys = [k for k in ("key", "key_b") if isinstance(raw, dict) and raw.get(k) is not None]
    if not keys:
        return None
    return Hit(("watermark_config",), {"keys": keys})


# Backends whose handlers leave page_size as written. FlashMLA always sets 64 (both pins);
# the other MLA/trtllm backends, fa4 (0.5.9) and some models set their own, and there the
# rule stays silent rather than guess SGLang's value.
_PAGE_KEEPING_BACKENDS = frozenset({"fa3", "flashinfer", "triton", "torch_native", "flex_attention"})


_FLASHMLA_PAGE = 64


def _effective_page(s: Settings) -> tuple[int | None, bool]:
    """The page size SGLang validates against, and whether FlashMLA set it (not the written one)."""
    page = s.get("page_size", 1)
    named = {n: s.get(n) for n in ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
             if s.has(n) and s.get(n) is not None}
    flashmla = "flashmla" in (named.get("attention_backend"), named.get("decode_attention_backend"))
    if not set(named.values()) - {"flashmla"} <= _PAGE_KEEPING_BACKENDS:
        return None, False
    if flashmla:
        return _FLASHMLA_PAGE, True
    return (page if isinstance(page, int) else None), False


@predicate("chunked-prefill-page")
def _chunked_prefill_page(s: Settings, rule: RuleSpec) -> Hit | None:
    chunk = s.get("chunked_prefill_size")
    if not (s.is_set("chunked_prefill_size") and isinstance(chunk, int)):
        return None  # unwritten, SGLang derives the chunk from the GPU's memory
    page, flashmla = _effective_page(s)
    on, dp, _ = dp_attention(s)
    checked = chunk // dp if on else chunk  # both pins divide the chunk per DP-attention rank first
    if page is None or checked <= 0 or page <= 1 or checked % page == 0 or s.get("disaggregation_mode") == "decode":
        return None
    step = page * dp if on else page
    return Hit(("chunked_prefill_size", "page_size"), {
        "chunk": chunk, "page_size": page, "suggested_chunk": max(step, chunk // step * step),
        # why the checked sizes differ from the written ones (nothing when they do not)
        "page_note": item("flashmla-page") if flashmla else "",
        "chunk_note": item("dp-attention-chunk", dp=dp, chunk_per_rank=checked) if on else ""})
