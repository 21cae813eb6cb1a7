"""Run inside a pinned SGLang venv: SGLang's own memory-sizing answers for gen's memory mirror.

Reads a JSON list of cases on stdin and prints one JSON list of answers. A case is
``{"config": {...config.json...}, "argv": [...flags...], "mib": N, "num_layers": L,
"draft_layers": D}``. For each, the config is written to a temporary folder and SGLang
itself answers:

* ``server``: ``prepare_server_args`` (torch's own capability query answering Hopper, or the
  case's ``capability``) (plus ``resolve_once`` on 0.5.23) with
  ``get_device_memory_capacity`` returning ``mib`` (what nvidia-smi would say) and, on
  0.5.23, ``override_platform`` saying CUDA on Hopper: mem_fraction_static,
  chunked_prefill_size, the decode CUDA graph max batch size, max_running_requests, and the
  KV cache dtype its model-specific adjustments chose;
* ``model``: the ModelConfig it built: head_dim, v_head_dim, total KV heads,
  attention arch, MLA ranks, context_len, hybrid layer ids, DSA index head dim;
* ``cell``: the KV bytes per token of the pin's own sizing function
  (``ModelRunnerKVCacheMixin.get_cell_size_per_token`` on 0.5.9,
  ``DefaultPoolConfigurator`` on 0.5.23) for ``num_layers`` layers at the case's
  attention-TP size, with the draft-layer term on 0.5.23 when ``draft_layers`` is given.

Only what a CPU can run is called: no model is built, no GPU memory is read.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
import types


def _version() -> str:
    import sglang

    return sglang.__version__


def _server(argv: list[str], mib: int, new: bool) -> dict:
    if new:
        import sglang.srt.arg_groups.memory_hook as memory_hook
        from sglang.srt.arg_groups.overrides import resolved_view
        from sglang.srt.runtime_context import override_platform
        from sglang.srt.server_args import prepare_server_args

        memory_hook.get_device_memory_capacity = lambda device=None: mib
        with override_platform(is_cuda=True, is_sm90=True, is_hopper_with_cuda_12_3=True, device_sm=90,
                               device_capability=(9, 0)):
            sa = prepare_server_args(argv + ["--device", "cuda"])
            sa.resolve_once()
        v = resolved_view(sa)
        return {"mem_fraction_static": v.mem_fraction_static, "chunked_prefill_size": v.chunked_prefill_size,
                "cuda_graph_max_bs": v.cuda_graph_config.decode.max_bs,
                "max_running_requests": v.max_running_requests, "page_size": v.page_size,
                "kv_cache_dtype": v.kv_cache_dtype}, sa
    import sglang.srt.server_args as server_args

    server_args.get_device_memory_capacity = lambda device=None: mib
    sa = server_args.prepare_server_args(argv + ["--device", "cuda"])
    return {"mem_fraction_static": sa.mem_fraction_static, "chunked_prefill_size": sa.chunked_prefill_size,
            "cuda_graph_max_bs": sa.cuda_graph_max_bs, "max_running_requests": sa.max_running_requests,
            "page_size": sa.page_size, "kv_cache_dtype": sa.kv_cache_dtype}, sa


def _model(sa, new: bool):
    if new:
        from sglang.srt.arg_groups.overrides import model_config_of

        mc = model_config_of(sa)
    else:
        mc = sa.get_model_config()
    arch = getattr(mc, "attention_arch", None)
    out = {"head_dim": mc.head_dim, "v_head_dim": mc.v_head_dim, "num_kv_heads": mc.get_total_num_kv_heads(),
           "mla": getattr(arch, "name", str(arch)) == "MLA", "num_hidden_layers": mc.num_hidden_layers,
           "context_len": mc.context_len, "is_hybrid_swa": bool(getattr(mc, "is_hybrid_swa", False)),
           "kv_lora_rank": getattr(mc, "kv_lora_rank", None) if getattr(arch, "name", "") == "MLA" else None,
           "qk_rope_head_dim": getattr(mc, "qk_rope_head_dim", None) if getattr(arch, "name", "") == "MLA" else None,
           "index_head_dim": getattr(mc, "index_head_dim", None),
           "swa_attention_layer_ids": list(getattr(mc, "swa_attention_layer_ids", None) or []) or None,
           "full_attention_layer_ids": list(getattr(mc, "full_attention_layer_ids", None) or []) or None,
           "num_nextn_predict_layers": getattr(mc, "num_nextn_predict_layers", None)}
    return out, mc


def _kv_dtype(name: str, model_dtype):
    import torch

    return {"auto": model_dtype, "fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2,
            "bf16": torch.bfloat16, "bfloat16": torch.bfloat16}[name]


def _cell(sa, mc, case: dict, new: bool) -> int:
    attn_tp = case.get("attn_tp", 1)
    num_layers = case["num_layers"]
    kv_dtype = _kv_dtype(case.get("kv_cache_dtype", "auto"), mc.dtype)
    mla = getattr(mc.attention_arch, "name", "") == "MLA"
    if not new:
        import sglang.srt.model_executor.model_runner_kv_cache_mixin as mixin

        mixin.get_attention_tp_size = lambda: attn_tp
        fake = types.SimpleNamespace(kv_cache_dtype=kv_dtype, use_mla_backend=mla, model_config=mc)
        return int(mixin.ModelRunnerKVCacheMixin.get_cell_size_per_token(fake, num_layers))
    import sglang.srt.mem_cache.kv_cache_configurator as kvcfg
    import sglang.srt.model_executor.pool_configurator as pool
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    parallel = types.SimpleNamespace(attn_tp_size=attn_tp, attn_dcp_size=1)
    pool.get_parallel = lambda: parallel
    memory = types.SimpleNamespace(enable_hisparse=False, enable_unified_memory=False,
                                   enable_hierarchical_cache=False, enable_unified_cache_external_linker=False)
    pool.get_memory = lambda: memory
    kvcfg.get_memory = lambda: memory
    pool.get_schedule = lambda: types.SimpleNamespace(max_total_tokens=None)
    kernel = types.SimpleNamespace(dsa_prefill_backend=None, dsa_decode_backend=None)
    kvcfg.get_disagg = lambda: types.SimpleNamespace(disaggregation_mode="null")
    kvcfg.get_exec = lambda: types.SimpleNamespace(kernel=kernel)
    import sglang.srt.layers.cp.utils as cp_utils

    cp_utils.get_glm_dsa_layer_split_effective_num_layers = lambda kvc, n: n
    cp_utils.get_glm_dsa_cp_layer_shard_info = lambda kvc: (None, 1)  # no context parallelism
    draft = case.get("draft_layers")
    spec = SpeculativeAlgorithm.from_string("EAGLE" if draft else None)
    layer_info = types.SimpleNamespace(start_layer=0, end_layer=mc.num_hidden_layers, num_effective_layers=num_layers)
    kvc = types.SimpleNamespace(
        kv_cache_dtype_str=case.get("kv_cache_dtype", "auto"), model_config=mc, kv_cache_dtype=kv_dtype,
        use_mla_backend=mla, layer_info=layer_info, server_args=types.SimpleNamespace(enable_hisparse=False),
        is_draft_worker=False, pp_size=1, spec_algorithm=spec, mambaish_config=None,
        spec_aux_config=types.SimpleNamespace(eagle_draft_num_layers=draft, dflash_draft_num_layers=None),
        fused_entry_bytes=lambda name: None, device="cpu", page_size=1)
    pool.mambaish_config = lambda model_config: None
    pool.compute_page_shard_scratch_bytes = lambda kvc, include_mtp: 0
    configurator = pool.DefaultPoolConfigurator(kvc)
    return int(configurator._cell_size)


def _answer_cuda_as(capability: tuple[int, int] = (9, 0)) -> None:
    """Model-specific adjustments ask torch for the device's capability directly (no GPU here):
    Hopper unless the case names another (``"capability": [10, 0]``)."""
    import torch

    torch.cuda.get_device_capability = lambda device=None: capability
    torch.cuda.get_device_name = lambda device=None: "NVIDIA H100 80GB HBM3"


def main() -> None:
    cases = json.load(sys.stdin)
    new = tuple(int(p) for p in _version().split(".")[:3]) >= (0, 5, 23)
    answers = []
    for case in cases:
        _answer_cuda_as(tuple(case.get("capability", (9, 0))))
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "config.json"), "w") as f:
                json.dump(case["config"], f)
            try:
                server, sa = _server(["--model-path", folder] + case.get("argv", []), case["mib"], new)
                model, mc = _model(sa, new)
                answer = {"server": server, "model": model}
                if "num_layers" in case:
                    try:
                        answer["cell"] = _cell(sa, mc, case, new)
                    except Exception:  # noqa: BLE001 (SGLang's own sizing refusing this config is the answer)
                        answer["cell_error"] = traceback.format_exc()[-3000:]
            except (Exception, SystemExit):  # noqa: BLE001 (any refusal of SGLang's is the answer; argparse exits)
                answer = {"error": traceback.format_exc()[-3000:]}
        answers.append(answer)
    print("=== memory probe ===")
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
