"""Predicates of MoE: the runner and all-to-all backends, EPLB and expert parallelism, mega-MoE, expert packs (0.5.23's moe_hook, mega_moe_hook, expert_pack_hook).

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations


from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Check, Hit, check, every_broken, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec
from generator.load.json_text import loads as decode_json


# The MoE runners 0.5.23 keeps under --quantization mxfp8 (choices.py); any other is
# overridden to flashinfer_trtllm (overrides._moe_runner_backend_quant_constraints).
_MXFP8_RUNNERS = ("cutlass", "deep_gemm", "flashinfer_megamoe", "flashinfer_trtllm", "flashinfer_trtllm_routed")


# Quantizations each FlashInfer runner accepts (None: unquantized bf16), by pin.
_QUANT_OK_OLD = {
    "flashinfer_cutlass": ("modelopt_fp4", "modelopt_fp8", None),
    "flashinfer_trtllm": ("modelopt_fp4", "fp8", "modelopt_fp8", "compressed-tensors", None),
}


_QUANT_OK_NEW = {
    "flashinfer_cutlass": ("modelopt_fp4", "modelopt_fp8", "modelopt_mixed", None),
    "flashinfer_trtllm": ("modelopt_fp4", "nvfp4_online", "fp8", "mxfp8", "modelopt_fp8", "modelopt_mixed",
                          "compressed-tensors", None),
    "experimental_sgl_trtllm": ("modelopt_fp4", "nvfp4_online", "fp8", "mxfp8", "modelopt_fp8",
                                "modelopt_mixed", "compressed-tensors", None),
    "flashinfer_trtllm_routed": ("fp8", "mxfp8", "modelopt_fp4", "modelopt_mixed", "nvfp4_online",
                                 "minimax_m3_nvfp4", None),
}


# The runners handle_moe_kernel_config / _handle_moe_kernel_config check.
_KERNEL_CHECKED = ("flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_trtllm", "experimental_sgl_trtllm",
                   "flashinfer_trtllm_routed", "cutlass")


_FLASHINFER_A2A_RUNNERS = ("flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_trtllm",
                           "flashinfer_trtllm_routed", "deep_gemm")






def runner_0_5_23(s: Settings) -> str:
    """The MoE runner after 0.5.23's quantization constraints (CUDA, not NPU/ROCm).

    auto stays auto under modelopt_fp4: SM110/SM120 GPUs resolve it to flashinfer_cutlass,
    others keep it, so callers must not refuse auto there on the strength of this value.
    """
    runner = str(s.get("moe_runner_backend", "auto"))
    quant, a2a = s.get("quantization"), s.get("moe_a2a_backend", "none")
    if runner == "megamoe":  # an alias of --moe-a2a-backend megamoe (mega_moe_hook)
        return "auto"
    if quant == "nvfp4_online" and runner == "auto":
        runner = "flashinfer_trtllm"
    if quant == "mxfp8" and (runner == "auto" or runner not in _MXFP8_RUNNERS):
        runner = "flashinfer_megamoe" if a2a == "flashinfer_megamoe" else "flashinfer_trtllm"
    return runner


def runner_0_5_9(s: Settings) -> str:
    """The MoE runner after 0.5.9's overrides: mxfp8 and SGLANG_CUTLASS_MOE force cutlass."""
    if s.get("quantization") == "mxfp8" or s.env_flag("SGLANG_CUTLASS_MOE"):
        return "cutlass"
    return str(s.get("moe_runner_backend", "auto"))


@predicate("moe-runner-quant")
def _moe_runner_quant(s: Settings, rule: RuleSpec) -> Hit | None:
    newer = s.has("attn_dp_size")
    runner = runner_0_5_23(s) if newer else str(s.get("moe_runner_backend", "auto"))
    if runner not in _KERNEL_CHECKED and (newer or runner_0_5_9(s) != "cutlass"):
        return None  # no check of this handler applies (the common case: auto)
    quant, tp, ep = s.get("quantization"), s.integer("tp_size", 1), s.integer("ep_size", 1)
    if not newer and quant == "mxfp8":
        runner = "cutlass"  # 0.5.9 forces the cutlass runner under mxfp8 before its checks
    allowed = (_QUANT_OK_NEW if newer else _QUANT_OK_OLD).get(runner)
    checks = [check(allowed is not None and quant not in allowed,
                    "unquantized-not-supported" if quant is None else "quantization-not-supported", _RUNNER_BLAME,
                    runner=runner, quant=quant, supported=list(allowed or ())),
              check(runner in ("flashinfer_cutlass", "flashinfer_cutedsl") and ep not in (1, tp), "ep-not-one-or-tp",
                    _RUNNER_BLAME, runner=runner, tp=tp, ep=ep)]
    if newer:
        a2a = s.get("moe_a2a_backend", "none")
        checks.append(check(runner == "flashinfer_cutedsl" and a2a not in ("none", "deepep", "flashinfer"),
                            "cutedsl-a2a-backend", _RUNNER_BLAME, a2a=a2a))
    else:
        cutlass_env = s.env_flag("SGLANG_CUTLASS_MOE")
        checks.append(check(cutlass_env and quant not in ("fp8", "mxfp8"), "cutlass-env-needs-fp8", _RUNNER_BLAME))
        runner = runner_0_5_9(s)
    checks.append(check(runner == "cutlass" and quant in ("fp8", "mxfp8") and ep != 1, "cutlass-fp8-ep-not-one",
                        _RUNNER_BLAME, quant=quant, ep=ep))
    return first_broken(checks)


# handle_a2a_moe's checks all blame the backends; their fix names the setting to change.
Checks = list[Check]
_A2A_BLAME = ("moe_a2a_backend", "moe_runner_backend", "flashinfer_a2a_dispatch_type")
_RUNNER_BLAME = ("moe_runner_backend", "quantization", "ep_size")


def _a2a_checks_old(s: Settings) -> Checks:
    if s.get("moe_a2a_backend", "none") != "flashinfer":
        return []
    runner = runner_0_5_9(s)
    return [check(runner != "flashinfer_cutlass", "flashinfer-needs-cutlass-runner", _A2A_BLAME, runner=runner)]


def _a2a_backend(s: Settings) -> str:
    a2a = str(s.get("moe_a2a_backend", "none"))
    if s.get("moe_runner_backend") == "megamoe":
        return "megamoe"
    if s.get("enable_waterfill") and a2a not in ("deepep", "megamoe"):
        return "deepep"  # Waterfill requires DeepEP (overrides._a2a_backend_overrides)
    return a2a


def _dispatch_checks(s: Settings, runner: str) -> Checks:
    """handle_flashinfer_a2a_dispatch_type, after the trtllm -> trtllm_routed rewrite."""
    given, quant = s.get("flashinfer_a2a_dispatch_type"), s.get("quantization")
    if given is None:
        return []
    w4a16 = runner == "flashinfer_cutedsl" and s.env_true("SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16")
    kind = "mxfp8" if given == "auto" and quant == "mxfp8" else given
    routed = "flashinfer_trtllm_routed" if runner == "flashinfer_trtllm" else runner
    return [check(w4a16 and given in ("auto", "nvfp4"), "cutedsl-w4a16-dispatch", _A2A_BLAME, dispatch=given),
            check("SGLANG_MOE_NVFP4_DISPATCH" in s.env, "nvfp4-dispatch-env", _A2A_BLAME),
            check(kind == "mxfp8" and quant != "mxfp8", "mxfp8-dispatch-quantization", _A2A_BLAME),
            check(kind == "mxfp8" and routed != "flashinfer_trtllm_routed", "mxfp8-dispatch-runner", _A2A_BLAME,
                  runner=runner)]


def _megamoe_fi_checks(s: Settings, runner: str) -> Checks:
    tp, (dp_on, attn_dp, _) = s.integer("tp_size", 1), dp_attention(s)
    mega_runner = "flashinfer_megamoe" if runner == "auto" else runner
    return [check(not (dp_on and attn_dp == tp), "megamoe-attn-dp-not-tp", _A2A_BLAME, tp=tp),
            check(mega_runner != "flashinfer_megamoe", "megamoe-runner", _A2A_BLAME, runner=runner)]


def _deepep_checks(s: Settings, runner: str) -> Checks:
    if runner != "flashinfer_cutedsl" or s.get("deepep_mode", "auto") != "normal":
        return []
    return [check(True, "deepep-cutedsl-normal-mode", _A2A_BLAME)]


def _deepep_v2_checks(s: Settings, runner: str) -> Checks:
    nnodes = s.integer("nnodes", 1)
    overlap = bool(s.get("enable_two_batch_overlap")) or bool(s.get("enable_single_batch_overlap"))
    return [
        check(runner not in ("auto", "deep_gemm"), "deepep-v2-runner", _A2A_BLAME, runner=runner),
        check(overlap, "deepep-v2-overlap", _A2A_BLAME),
        # waterfill (which enforces the fusion) moves deepep_v2 to deepep before this
        check(bool(s.get("enforce_shared_experts_fusion")), "deepep-v2-shared-experts-fusion", _A2A_BLAME),
        check(s.get("deepep_v2_mode", "direct") == "direct" and nnodes > 1, "deepep-v2-direct-across-nodes",
              _A2A_BLAME, nnodes=nnodes)]


def _flashinfer_checks(s: Settings, runner: str) -> Checks:
    dispatch = s.get("flashinfer_a2a_dispatch_type")
    routed = "flashinfer_trtllm_routed" if runner == "flashinfer_trtllm" and dispatch is not None else runner
    # auto with modelopt_fp4 becomes flashinfer_cutlass on SM110/SM120 GPUs: the GPU decides
    gpu_decides = runner == "auto" and s.get("quantization") == "modelopt_fp4"
    return _dispatch_checks(s, runner) + [
        check(routed not in _FLASHINFER_A2A_RUNNERS and not gpu_decides, "flashinfer-runner", _A2A_BLAME,
              runner=runner, runners=list(_FLASHINFER_A2A_RUNNERS))]


def _pplx_checks(s: Settings, runner: str) -> Checks:
    attn_dp = dp_attention(s)[1]
    return [check(s.get("deepep_mode", "auto") == "normal", "pplx-normal-mode", _A2A_BLAME),
            check(attn_dp < 2, "pplx-attn-dp", _A2A_BLAME),
            check(runner not in ("deep_gemm", "auto"), "pplx-runner", _A2A_BLAME, runner=runner)]


# handle_a2a_moe's per-backend checks, in its order (flashinfer_megamoe, deepep, deepep_v2, flashinfer, pplx)
_A2A_CHECKS = {"flashinfer_megamoe": _megamoe_fi_checks, "deepep": _deepep_checks, "deepep_v2": _deepep_v2_checks,
               "flashinfer": _flashinfer_checks, "pplx": _pplx_checks}


def _a2a_checks_new(s: Settings) -> Checks:
    a2a, dispatch = _a2a_backend(s), s.get("flashinfer_a2a_dispatch_type")
    if a2a != "flashinfer" and dispatch not in (None, "auto"):
        return [check(True, "dispatch-without-flashinfer", _A2A_BLAME, a2a=a2a)]
    builder = _A2A_CHECKS.get(a2a)
    return builder(s, runner_0_5_23(s)) if builder is not None else []


@predicate("moe-a2a-backend")
def _moe_a2a_backend(s: Settings, rule: RuleSpec) -> Hit | None:
    newer = s.has("attn_dp_size")
    return first_broken(_a2a_checks_new(s) if newer else _a2a_checks_old(s))


@predicate("deepep-v2-draft")
def _deepep_v2_draft(s: Settings, rule: RuleSpec) -> Hit | None:
    draft = s.get("speculative_moe_a2a_backend")
    algo = s.get("speculative_algorithm")
    if draft is None and algo and str(algo).upper() != "NGRAM":
        draft = _a2a_backend(s)  # the draft inherits the target's a2a backend
    if draft != "deepep_v2":
        return None
    name = "speculative_moe_a2a_backend" if s.is_set("speculative_moe_a2a_backend") else "moe_a2a_backend"
    return Hit((name,), {"backend_flag": s.flag(name)})


@predicate("flashinfer-a2a-chunked-prefill")
def _flashinfer_a2a_chunked(s: Settings, rule: RuleSpec) -> Hit | None:
    chunk = s.get("chunked_prefill_size")
    if _a2a_backend(s) != "flashinfer" or s.get("disaggregation_mode", "null") == "decode":
        return None
    if not isinstance(chunk, int) or chunk > 0:
        return None  # unset: SGLang sizes it from the GPU (positive)
    return Hit(("chunked_prefill_size", "moe_a2a_backend"))


@predicate("megamoe-no-overlap")
def _megamoe_no_overlap(s: Settings, rule: RuleSpec) -> Hit | None:
    if _a2a_backend(s) != "megamoe":
        return None
    for name in ("enable_two_batch_overlap", "enable_single_batch_overlap"):
        if s.get(name):
            return Hit((name, "moe_a2a_backend"), {"overlap_flag": s.flag(name)})
    return None


_MEGA_NVFP4 = ("modelopt_fp4", "minimax_m3_nvfp4")  # mega_moe_needs_token_budget by --quantization


@predicate("megamoe-chunked-prefill")
def _megamoe_chunked_prefill(s: Settings, rule: RuleSpec) -> Hit | None:
    # Whether the budget applies also depends on the checkpoint (architecture, FP4 experts);
    # gen decides only where --quantization alone makes it apply.
    if s.get("quantization") not in _MEGA_NVFP4 or _a2a_backend(s) != "megamoe" or s.get("encoder_only"):
        return None
    if s.get("disaggregation_mode", "null") == "decode":
        return None
    if s.integer("pp_size", 1) > 1 and s.get("enable_dynamic_chunking"):
        return None
    chunk = s.get("chunked_prefill_size")
    if not isinstance(chunk, int):
        return None  # unset: SGLang sizes it from the GPU (positive)
    dp_on, attn_dp, _ = dp_attention(s)
    local = chunk // attn_dp if dp_on and not s.get("enable_prefill_cp") else chunk
    if chunk > 0 and local > 0:
        return None
    return Hit(("chunked_prefill_size", "moe_a2a_backend"), {"chunk": chunk, "attn_dp": attn_dp, "chunk_per_rank": local},
               "chunked-prefill-off" if chunk <= 0 else "per-rank-chunk-empty")


# The CUDA-graph backend setting of each phase.
_GRAPH_BACKEND = {"decode": "cuda_graph_backend_decode", "prefill": "cuda_graph_backend_prefill"}


def _expert_pack_checks(s: Settings) -> list[Check]:
    """SGLang's expert_pack checks (it reports every broken one at once), in its order."""
    dp_on, attn_dp, _ = dp_attention(s)
    blame = ("load_format",)
    sizes = (("tp_size", s.integer("tp_size", 1)), ("dp_size", s.integer("dp_size", 1)),
             ("attn_dp_size", attn_dp if dp_on else 1), ("ep_size", s.integer("ep_size", 1)))
    checks = [check(size != 1 and s.has(name), "size-not-one", blame, option=s.flag(name), size=size)
              for name, size in sizes]
    checks += [check(bool(s.get(name)), "incompatible-switch", blame, option=s.flag(name))
               for name in ("enforce_shared_experts_fusion", "enable_waterfill")]
    for phase, name in _GRAPH_BACKEND.items():
        backend = s.get(name)
        checks.append(check(backend not in (None, "disabled"), "cuda-graph-not-disabled", blame, phase=phase,
                            backend=backend, option=s.flag(name)))
    extra = s.get("model_loader_extra_config", "{}")
    if isinstance(extra, str):
        try:
            extra = decode_json(extra)
        except ValueError:
            return checks + [check(True, "loader-config-not-json", blame)]
    return checks + [check(not isinstance(extra, dict), "loader-config-not-object", blame)]


@predicate("expert-pack-args")
def _expert_pack_args(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.get("load_format") != "expert_pack":
        return None
    return every_broken(_expert_pack_checks(s))


@predicate("flashinfer-a2a-topology")
def _flashinfer_a2a_topology(s: Settings, rule: RuleSpec) -> Hit | None:
    """handle_a2a_moe's _flashinfer_a2a_topology_is_supported (0.5.23).

    FlashInfer all-to-all needs attention DP across every TP rank. The one exception is a
    Muse Spark checkpoint with layernorm SP at TP4/EP4 or TP8/EP8 (the a2a backend sets
    ep = tp): that depends on the model, so gen stays silent on that layout.
    """
    if not s.has("attn_dp_size") or _a2a_backend(s) != "flashinfer":
        return None
    tp = s.integer("tp_size", 1)
    enabled, size, _ = dp_attention(s)
    if enabled and size == tp:
        return None
    if s.get("enable_layernorm_sp", False) and not enabled and tp in (4, 8):
        return None  # Muse Spark prefill sequence parallelism may allow it
    return Hit(("moe_a2a_backend", "attn_dp_size"), {"tp": tp, "attn_dp": size if enabled else 1})


@predicate("nvfp4-online-moe-runner")
def _nvfp4_online(s: Settings, rule: RuleSpec) -> Hit | None:
    if s.get("quantization") != "nvfp4_online":
        return None
    runner = s.get("moe_runner_backend", "auto")
    megamoe = (s.get("moe_a2a_backend") == "flashinfer_megamoe"
               and s.env_true("SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16"))
    if runner in ("auto", "flashinfer_trtllm", "flashinfer_trtllm_routed", "flashinfer_cutedsl"):
        return None
    if runner == "flashinfer_megamoe" and megamoe:
        return None
    return Hit(("moe_runner_backend", "quantization"))
