"""The pinned SGLang's own code on a checkpoint's real config.json: what it accepts and refuses.

Runs inside an SGLang venv (tests/sglang_env.py), not in gen's: reads a JSON list of cases
``{"id", "config", "draft_config", "argv", "env"}`` on stdin and prints one JSON list of
``{"id", "ok", "stage", "error"}`` (``ok`` None: SGLang's code needs a CUDA-only package there,
so its decision is unknown on this machine). Each case writes ``config`` (and ``draft_config``) as a
checkpoint folder's config.json, then runs, in order, stopping at the first refusal:

1. ``server_args``: ``prepare_server_args(["--model-path", FOLDER, "--device", "cpu", *argv])``,
   ``resolve_once()`` (0.5.23) and ``check_server_args()``;
2. ``model_config``: ``ModelConfig.from_server_args`` for the model, and for the draft
   (``is_draft_model=True``) when there is one: the context length, the quantization, the
   dtype, as the scheduler derives them;
3. ``architecture``: SGLang's ``get_model_architecture`` on the model's ModelConfig (and the
   draft's): its registry, else the Transformers fallback (``resolve_transformers_arch``);
4. ``attention``: SGLang's ``QKVParallelLinear`` built for the attention-TP width SGLang's own
   ``compute_dp_attention_world_info`` gives (on the ``meta`` device: no memory), which divides
   the query heads and divides or replicates the KV heads exactly as model construction does;
   the vision tower's heads through SGLang's ``divide``;
5. ``fp8_blocks``: for a block-quantized checkpoint, SGLang's ``Fp8LinearMethod`` shape check
   on the MLP's gate/up projection per TP rank, and ``Fp8MoEMethod``'s on the experts'.

Stand-ins, named so: the model registry's classes for modules this CPU machine cannot import
(:func:`standin_registry`: empty classes under the names their ``EntryClass`` gives, so
SGLang's ``get_model_architecture`` decides on names as on a GPU host), the TP group (steps 4-5 are given the TP width instead of a process
group, ``get_tensor_model_parallel_world_size`` patched to it: no GPUs here), and the
weights (none are read: only config.json exists).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import logging
import os
import sys
import tempfile
from typing import Any

from sglang_cases import case_environment, config_folder  # tests/, beside this runner


def _server_args(model: str, draft: str | None, argv: list[str]) -> Any:
    from sglang.srt.server_args import prepare_server_args

    words = [draft if w == "DRAFT" and draft else w for w in argv]
    args = prepare_server_args(["--model-path", model, "--device", "cpu", *words])
    if hasattr(args, "resolve_once"):
        args.resolve_once()
    args.check_server_args()
    return args


def _model_configs(args: Any, draft: str | None) -> tuple[Any, Any]:
    from sglang.srt.configs.model_config import ModelConfig

    target = ModelConfig.from_server_args(args)
    drafted = None
    if draft is not None:
        drafted = ModelConfig.from_server_args(args, model_path=draft, is_draft_model=True)
    return target, drafted


def standin_registry() -> list[str]:
    """Fill SGLang's ModelRegistry with stand-in classes for what this CPU machine cannot import.

    SGLang registers a model class by importing its module and reading ``EntryClass``; on a
    CPU-only machine most modules fail to import (CUDA-only kernels: 0.5.9's registry here
    holds only MindSporeForCausalLM), so the registry SGLang builds on a GPU host cannot be
    built here. The stand-in reads each failed module's ``EntryClass`` names from its source
    (as ``gen sglang snapshot``'s probe does) and registers an empty class of that name, named
    ``StandinRegistered*``: SGLang's own ``get_model_architecture`` then decides on the names as
    it would on a GPU host. Returns the names stood in for."""
    import ast
    import importlib
    import pkgutil

    import torch
    from sglang.srt.models.registry import ModelRegistry

    package = importlib.import_module("sglang.srt.models")
    added: list[str] = []
    for info in pkgutil.iter_modules(package.__path__, "sglang.srt.models."):
        if info.ispkg or info.name.endswith(".registry"):
            continue
        try:
            importlib.import_module(info.name)
            continue
        except Exception:  # noqa: BLE001 - a module this machine cannot import: read its source
            pass
        path = os.path.join(package.__path__[0], info.name.rsplit(".", 1)[1] + ".py")
        with open(path, encoding="utf-8-sig") as fh:
            tree = ast.parse(fh.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass"
                                                    for t in node.targets):
                values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                for v in values:
                    if isinstance(v, ast.Name) and v.id not in ModelRegistry.models:
                        ModelRegistry.models[v.id] = type(f"StandinRegistered{v.id}", (torch.nn.Module,),
                                                          {"__module__": info.name})
                        added.append(v.id)
    return added


def _architecture(*configs: Any) -> None:
    from sglang.srt.model_loader.utils import get_model_architecture

    for mc in configs:
        if mc is not None:
            get_model_architecture(mc)


def _attn_tp(args: Any) -> int:
    from sglang.srt.layers import dp_attention

    tp, dp = int(args.tp_size), int(getattr(args, "dp_size", 1) or 1)
    cp = int(getattr(args, "attn_cp_size", 1) or 1)
    enabled = bool(getattr(args, "enable_dp_attention", False))
    params = dp_attention.compute_dp_attention_world_info.__code__.co_varnames
    if "enable_dp_attention" in params:  # 0.5.9: (enable_dp_attention, tp_rank, tp_size, dp_size, cp)
        return int(dp_attention.compute_dp_attention_world_info(enabled, 0, tp, dp, cp)[1])
    attn_dp = int(getattr(args, "attn_dp_size", 0) or (dp if enabled else 1))  # 0.5.23: the resolved width
    return int(dp_attention.compute_dp_attention_world_info(0, tp, attn_dp, cp)[1])


@contextlib.contextmanager
def _tp_group(size: int) -> Any:
    """Stand-in for the TP process group: SGLang's layers ask its width, nothing else."""
    import sglang.srt.distributed as dist
    from sglang.srt.layers import linear
    from sglang.srt.layers.quantization import fp8

    patched = [(m, "get_tensor_model_parallel_world_size") for m in (dist, linear, fp8)
               if hasattr(m, "get_tensor_model_parallel_world_size")]
    patched += [(m, "get_tensor_model_parallel_rank") for m in (dist, linear, fp8)
                if hasattr(m, "get_tensor_model_parallel_rank")]
    saved = [(m, n, getattr(m, n)) for m, n in patched]
    for m, n in patched:
        setattr(m, n, (lambda s=size: s) if n.endswith("world_size") else (lambda: 0))
    try:
        yield
    finally:
        for m, n, v in saved:
            setattr(m, n, v)


class StandinTPGroup:
    """Stand-in for a TP process group (no GPUs here): rank 0 of ``world_size`` ranks."""

    def __init__(self, world_size: int) -> None:
        self.rank_in_group, self.world_size = 0, world_size


@contextlib.contextmanager
def _linear_group(size: int) -> Any:
    """0.5.23's layers resolve their group object: give them the stand-in."""
    from sglang.srt.layers import linear

    saved = getattr(linear, "_resolve_linear_group", None)
    if saved is not None:
        linear._resolve_linear_group = lambda group=None: StandinTPGroup(size)
    try:
        yield
    finally:
        if saved is not None:
            linear._resolve_linear_group = saved


def _attention(mc: Any, args: Any) -> None:
    import torch
    from sglang.srt.distributed.utils import divide
    from sglang.srt.layers.linear import QKVParallelLinear

    tp = _attn_tp(args)
    text = mc.hf_text_config
    if getattr(text, "kv_lora_rank", None) is None and mc.num_attention_heads:
        head = int(getattr(mc, "head_dim", 0) or text.hidden_size // mc.num_attention_heads)
        old = "tp_size" in inspect.signature(QKVParallelLinear.__init__).parameters
        extra = {"tp_rank": 0, "tp_size": tp} if old else {}
        with torch.device("meta"), _tp_group(tp), _linear_group(tp):
            QKVParallelLinear(text.hidden_size, head, mc.num_attention_heads, mc.get_total_num_kv_heads(),
                              bias=False, **extra)
    elif mc.num_attention_heads:
        divide(mc.num_attention_heads, tp)  # MLA: the query heads shard, the latent KV does not
    vision = getattr(mc.hf_config, "vision_config", None)
    heads = getattr(vision, "num_heads", None) if vision is not None else None
    if isinstance(heads, int):
        divide(heads, tp)


def _fp8_blocks(mc: Any, args: Any) -> None:
    quant = getattr(mc.hf_config, "quantization_config", None) or {}
    block = quant.get("weight_block_size") if isinstance(quant, dict) else None
    if not block:
        return
    from sglang.srt.layers.quantization.fp8 import Fp8Config, Fp8LinearMethod

    tp = int(args.tp_size)
    config = Fp8Config(is_checkpoint_fp8_serialized=True, activation_scheme="dynamic", weight_block_size=block)
    text = mc.hf_text_config
    static = next(iter(inspect.signature(Fp8LinearMethod.validate_block_quant_shapes).parameters)) == "layer"
    if static:  # 0.5.23: (layer, quant_config, ...), the TP width from layer.tp_group
        holder = type("StandinLayer", (), {"tp_group": StandinTPGroup(tp)})()

        def validate(**kw: Any) -> None:
            Fp8LinearMethod.validate_block_quant_shapes(holder, config, **kw)
    else:
        validate = Fp8LinearMethod(config).validate_block_quant_shapes
    with _tp_group(tp):
        for size in [getattr(text, "intermediate_size", None)]:
            if size:
                part = size // tp
                validate(input_size=text.hidden_size, output_size=2 * size, input_size_per_partition=text.hidden_size,
                         output_size_per_partition=2 * part, output_partition_sizes=[part, part])
        moe = getattr(text, "moe_intermediate_size", None)
        experts = getattr(text, "n_routed_experts", None) or getattr(text, "num_experts", None)
        if moe and experts:
            import torch
            from sglang.srt.layers.quantization.fp8 import Fp8MoEMethod

            ep = int(getattr(args, "ep_size", 1) or 1)
            moe_tp = max(1, tp // ep)
            layer = torch.nn.Module()  # a stand-in FusedMoE: the widths 0.5.23's method reads from it
            layer.moe_tp_size, layer.moe_ep_size = moe_tp, ep
            layer.moe_runner_config = type("StandinRunnerConfig", (), {"is_gated": True})()
            with torch.device("meta"), _linear_group(moe_tp):
                Fp8MoEMethod(config).create_weights(layer, num_experts=max(1, experts // ep),
                                                    hidden_size=text.hidden_size,
                                                    intermediate_size_per_partition=moe // moe_tp,
                                                    params_dtype=torch.bfloat16)


def _one(root: str, case: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": case["id"], "ok": False, "stage": None, "error": None}
    sink = io.StringIO()
    stage = "server_args"
    with case_environment(case.get("env")):
        try:
            folder = tempfile.mkdtemp(dir=root)
            model = config_folder(folder, "model", case["config"], case.get("files"))
            draft = config_folder(folder, "draft", case["draft_config"]) if case.get("draft_config") else None
            with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
                args = _server_args(model, draft, case["argv"])
                stage = "model_config"
                target, drafted = _model_configs(args, draft)
                stage = "architecture"
                _architecture(target, drafted)
                stage = "attention"
                _attention(target, args)
                stage = "fp8_blocks"
                _fp8_blocks(target, args)
            out["ok"] = True
        except SystemExit as exc:
            out.update(stage=stage, error=f"SystemExit({exc.code})")
        except ModuleNotFoundError as exc:
            # A CUDA-only package this CPU venv cannot have (0.5.9's FP8 MoE method reaches
            # sgl_kernel through its MoE imports): SGLang's decision is unknown here, not a refusal.
            if exc.name != "sgl_kernel":
                raise
            out.update(ok=None, stage=stage, error=f"unverifiable here: {exc}")
        except Exception as exc:  # noqa: BLE001 - SGLang's own refusals, whatever their class
            out.update(stage=stage, error=f"{type(exc).__name__}: {str(exc)[:400]}")
    return out


def main() -> None:
    """Run every case of stdin; print the results as JSON."""
    cases = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)
    # A trusted case's remote code is copied into Transformers' modules cache: a scratch one,
    # never the user's (read when transformers is first imported, below).
    modules = tempfile.mkdtemp(prefix="gen-model-oracle-modules-")
    os.environ["HF_MODULES_CACHE"] = modules
    sink = io.StringIO()
    with contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
        standin_registry()
    with tempfile.TemporaryDirectory(prefix="gen-model-oracle-") as root:
        results = [_one(root, case) for case in cases]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
