"""The memory findings through the real pipeline (gen check on a copy of the example repo).

The example host llm-two has 4 x RTX PRO 6000 (memory_mib 97887, PCIe) for qwen3.5-122b-a10b
at TP 4 with EAGLE speculative decoding on SGLang 0.5.9. Its checkpoint snapshot holds only the
config keys cited pages state (catalogs/models/qwen3.5-122b-a10b.json: no index, too few keys to
size a token), so the weights are weights.size_gb and these cases exercise the budget SGLang
computes before any token is sized: the refusal (P030, with the fraction that works) and the
high fraction (P033).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from generator.cli.main import main
from generator.errors import Diagnostics
from generator.pipeline.fleet import run_fleet
from generator.plan.memory import CUDA_CONTEXT_GIB, Checkpoint, Flags, size_memory
from generator.plan.memory_check import _after_pool

QWEN = "models/qwen3.5-122b-a10b.yaml"
HOST = "hosts/llm-two.yaml"


def _rewrite(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new))


def _check(root: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["check", "--root", str(root), "--format", "json"])
    doc = json.loads(result.stdout)
    return result.exit_code, [f"{d['file']}:{d['line']}:{d['column']}: {d['severity']}[{d['code']}]: "
                              f"{d['message']}" + (f" ({d['fix']})" if d["fix"] else "")
                              for d in doc["diagnostics"] if d["code"].startswith("P03")]


def test_the_example_services_fit(repo_root: Path) -> None:
    code, found = _check(repo_root)
    assert (code, found) == (0, [])


def test_weights_that_leave_no_kv_cache_are_refused_with_the_fraction_that_works(repo_copy: Path) -> None:
    # 400 GB over TP 4 is 93.1 GiB per GPU; 94.5 GiB are free before load (95.6 - 1.1 context).
    _rewrite(repo_copy, QWEN, "size_gb: 234", "size_gb: 400")
    code, found = _check(repo_copy)
    pre = 97887 / 1024 - CUDA_CONTEXT_GIB
    post = pre - 400e9 / 4 / 2**30
    assert code == 1
    assert found == [
        f"{QWEN}:27:24: error[P030]: 'qwen3.5-122b-a10b' cannot start on GPU 0, 1, 2, 3 (RTX PRO 6000 Blackwell), 95.6 GiB "
        f"each: 93.1 GiB of weights per GPU (from weights.size_gb) leave {post:.1f} GiB of "
        f"the {pre:.1f} GiB free before load, and mem_fraction_static 0.85 (the manifest's) keeps "
        f"{pre * 0.15:.1f} GiB out of the static pool: no memory is left for the KV cache; SGLang 0.5.9 stops "
        "with \"Not enough memory. Please try to increase --mem-fraction-static\" (set memory.mem_fraction_static to "
        f"at least 0.986 (1 - {post:.2f}/{pre:.2f} GiB, SGLang's own minimum; more leaves less room for CUDA "
        "graphs), or spread the weights over more GPUs (parallel.tp))"]


def test_the_default_fraction_is_sglangs_own_rule(repo_copy: Path) -> None:
    # Without the manifest's 0.85, SGLang 0.5.9 keeps 512 + 8192 x 1.5 + 512 x 2 + 4/8 x 1024 = 14336 MiB,
    # plus 2048 for the EAGLE draft: round((97887 - 16384) / 97887, 3) = 0.833, not the documented 0.9.
    _rewrite(repo_copy, QWEN, "size_gb: 234", "size_gb: 350")
    _rewrite(repo_copy, QWEN, "  mem_fraction_static: 0.85\n", "")
    _rewrite(repo_copy, QWEN, "memory:\n", "")
    code, found = _check(repo_copy)
    assert code == 1
    [finding] = found
    assert "mem_fraction_static 0.833 (SGLang's default for this GPU and these flags)" in finding
    # no fraction is written: the finding is at the service's model key
    assert finding.startswith(f"{HOST}:36:12: error[P030]: ")
    assert "set memory.mem_fraction_static to at least 0.863 (1 - 13.00/94.49 GiB" in finding


def test_a_fraction_at_or_above_095_warns(repo_copy: Path) -> None:
    _rewrite(repo_copy, QWEN, "mem_fraction_static: 0.85", "mem_fraction_static: 0.97")
    _, found = _check(repo_copy)  # exits 1 all the same: output/ still renders 0.85
    assert found == [f"{QWEN}:27:24: warning[P033]: mem_fraction_static 0.97 is at or above 0.95: SGLang's own rule picks "
                     "0.833 for this GPU and these flags, and the CUDA graph capture after the KV pool runs out of "
                     "memory at such values (lower memory.mem_fraction_static to 0.833 or remove it)"]


def test_a_percentage_is_the_fraction_rules_with_the_fraction_meant(repo_copy: Path) -> None:
    _rewrite(repo_copy, QWEN, "mem_fraction_static: 0.85", "mem_fraction_static: 85")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    assert "error[S005]: 'memory.mem_fraction_static' must be at most 1, got 85 (a fraction, not a " \
           "percentage: write 0.85)" in result.stderr


def test_a_percentage_in_args_names_the_fraction(repo_copy: Path) -> None:
    _rewrite(repo_copy, QWEN, "memory:\n  mem_fraction_static: 0.85\n", "")
    _rewrite(repo_copy, QWEN, "  --attention-backend: triton\n",
             "  --attention-backend: triton\n  --mem-fraction-static: 85\n")  # the example's own args:
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    assert "error[X021]: --mem-fraction-static 85.0 is not between 0 and 1 (SGLang accepts it and fails at " \
           "runtime) (write 0.85: a fraction, not a percentage)" in result.stderr
    assert "P030" not in result.stderr and "P033" not in result.stderr  # nothing is sized from a bad fraction


def test_nvlink_gpus_lose_the_communication_buffers_before_load(repo_root: Path) -> None:
    # gpu-a: 8 x H200 (NVLink) at TP 16: 1.1 GiB of context and 1.95 GiB of NCCL/all-reduce buffers.
    result = CliRunner().invoke(main, ["show", "--host", "gpu-a", "--root", str(repo_root), "--format", "json"])
    memory = json.loads(result.stdout)["services"][0]["memory"]
    assert memory["free_before_load_gib"] == round(143771 / 1024 - 1.1 - 1.95, 2)
    # The snapshot's DeepSeek-V3 config.json sizes it: its MTP layer (num_nextn_predict_layers 1,
    # one of 62 decoder layers once the two 129280 x 7168 BF16 embeddings are set aside) is the
    # draft's, not loaded without speculative decoding.
    body = 1342e9 - 2 * 129280 * 7168 * 2
    assert memory["skipped"] is None
    assert memory["weights_gib_per_gpu"] == round((1342e9 - body / 62) / 16 / 2**30, 2)


def test_gpus_without_memory_mib_are_named_in_one_info_line(repo_copy: Path) -> None:
    host = repo_copy / HOST
    host.write_text(host.read_text().replace(" memory_mib: 97887,", ""))
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    notes = [ln for ln in result.stderr.splitlines() if ln.startswith("gen: note: memory sizing")]
    assert notes == ["gen: note: memory sizing by token (the KV cache's tokens, P031 context fit, P032 reserve) "
                     "skipped on llm-two: GPUs without memory_mib (`gen host snapshot` captures it; P030 read "
                     "memory_gb as GiB)"]
    _rewrite(repo_copy, QWEN, "size_gb: 234", "size_gb: 400")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "error[P030]" in result.stderr and "96.0 GiB each" in result.stderr  # memory_gb 96 read as 96 GiB


def test_a_request_table_that_does_not_fit_names_the_context_that_does(repo_root: Path) -> None:
    # sglang#5755: Llama 4 Scout's 10,485,760-token context on 8 x H100: 2,048 request slots x
    # (10,485,760 + 4) int32 = 80.0 GiB, after 25.4 GiB of weights and the KV cache SGLang's default
    # fraction leaves (0.5.9 on H100 at TP 8, Llama 4's vision tower off by default: no VLM reduction).
    config = json.loads((Path(__file__).parent / "data" / "memory_configs.json").read_text())[
        "meta-llama/Llama-4-Scout-17B-16E-Instruct"]
    plan = size_memory("0.5.9", Checkpoint(config, 218_000_000_000), 81559, Flags(tp=8, disable_cuda_graph=True),
                       nvlink=True)
    [render] = run_fleet(repo_root, ["llm-two"], detail=True).renders
    placement = render.services[0].placement
    diags = Diagnostics()
    _after_pool(diags, placement.service.pos("model"), placement, plan)
    [finding] = diags.items
    left = plan.reserve_gib + plan.req_table_gib
    assert finding.code == "P034"
    assert finding.message == (
        f"'{placement.model.name}' cannot start: after 25.4 GiB of weights and a {plan.kv_pool_gib:.1f} GiB KV cache "
        "per GPU, SGLang "
        "0.5.9 still allocates a request table of 80.0 GiB (one int32 slot per token of the context length "
        f"10,485,760 for each of 2,048 request slots), and only {left:.1f} GiB is left: CUDA runs out of memory at "
        "launch, before serving")
    fits = int(left * 2**30 // (2048 * 4)) - 4
    assert finding.hint is not None and finding.hint.startswith(f"set context_length to {fits} or less in the model "
                                                                 "manifest (--context-length;")
    assert 2048 * (fits + 4) * 4 <= left * 2**30 < 2048 * (fits + 5) * 4 + 2048 * 4


def test_a_draft_loaded_after_the_pool_names_the_fraction_window(repo_root: Path) -> None:
    # sglang#6875: Llama-3.1-70B drafting for itself on 8 x H100 under 0.5.9: at 0.88 the draft's
    # 16.4 GiB of weights and its KV cache (as large as the target's) do not fit what is left.
    config = json.loads((Path(__file__).parent / "data" / "memory_configs.json").read_text())[
        "meta-llama/Llama-3.1-70B-Instruct"]
    checkpoint = Checkpoint(config, 141107412992, draft_config=config, draft_weight_bytes=141107412992)
    flags = Flags(tp=8, mem_fraction_static=0.88, speculative_algorithm="EAGLE")
    plan = size_memory("0.5.9", checkpoint, 81559, flags, nvlink=True)
    [render] = run_fleet(repo_root, ["llm-two"], detail=True).renders
    placement = render.services[0].placement
    diags = Diagnostics()
    _after_pool(diags, placement.service.pos("model"), placement, plan)
    [finding] = diags.items
    assert finding.code == "P034"
    assert "still allocates the speculative draft's weights and KV cache, 67.4 GiB (0.5.9 loads the draft " \
           "after sizing the target's pool)" in finding.message
    assert finding.hint is not None and finding.hint.startswith(
        "lower memory.mem_fraction_static to 0.499 or less (from 0.215 up the weights still leave a KV cache;")
    # the window it names holds: 0.499 fits, 0.5 does not (the report's "mem-fraction >= 0.5 always OOMs")
    at = {f: size_memory("0.5.9", checkpoint, 81559, Flags(tp=8, mem_fraction_static=f, speculative_algorithm="EAGLE"),
                         nvlink=True).reserve_gib for f in (0.499, 0.5)}
    assert at[0.499] > 0 > at[0.5]
    # 0.5.23 counts the draft in the budget: the same config starts
    assert size_memory("0.5.23", checkpoint, 81559, flags, nvlink=True).reserve_gib > 0


def test_a_captured_snapshot_too_thin_to_size_tokens_is_named_once(repo_copy: Path) -> None:
    """The example Qwen snapshot is written from published pages (it says the checks needing
    other keys stay silent: no note); the same config as a capture gets the info line."""
    from generator.load.captured import captured_json

    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "gen: note: memory sizing" not in result.stderr
    path = repo_copy / "catalogs/models/qwen3.5-122b-a10b.json"
    doc = json.loads(path.read_text())
    doc.pop("captured")
    doc["checkpoint"]["source"] = {"kind": "folder", "path": "/shared/models/Qwen3.5-122B-A10B"}
    path.write_text(captured_json(doc, tool="gen model snapshot", reader=1))
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    notes = [ln for ln in result.stderr.splitlines() if ln.startswith("gen: note: memory sizing")]
    assert notes == ["gen: note: memory sizing by token (the KV cache's tokens, P031 context fit, P032 reserve) of "
                     "model 'qwen3.5-122b-a10b' skipped: the snapshot's config.json has no number "
                     "'num_attention_heads' (SGLang reads it to size the KV cache) (`gen model snapshot --model "
                     "qwen3.5-122b-a10b` from the checkpoint captures its full config.json)"], result.stderr


DEEPSEEK = "models/deepseek-v3-bf16.yaml"


def test_weights_sized_from_the_checkpoint_that_leave_no_kv_cache_are_refused(repo_copy: Path) -> None:
    # gpu-a's DeepSeek-V3 is sized from its snapshot's config.json (the token path, not the budget):
    # on 80 GB GPUs its 76.9 GiB of weights per GPU leave nothing of the 76.6 GiB free before load.
    host = repo_copy / "hosts" / "gpu-a.yaml"
    host.write_text(host.read_text().replace("memory_gb: 141, memory_mib: 143771", "memory_gb: 80, memory_mib: 81559"))
    code, found = _check(repo_copy)
    assert code == 1
    [finding] = found
    assert finding.startswith(
        f"{DEEPSEEK}:24:24: error[P030]: 'deepseek-v3-bf16' cannot start on GPU 0, 1, 2, 3, 4, 5, 6, 7 (H200), "
        "79.6 GiB each: 76.9 GiB of weights per GPU (from weights.size_gb and the snapshot's config.json) leave "
        "-0.3 GiB of the 76.6 GiB free before load, and mem_fraction_static 0.85 (the manifest's)")
    assert finding.endswith("(the weights alone exceed the GPU's memory: spread them over more GPUs (parallel.tp) "
                            "or use a smaller checkpoint)")


def test_a_written_max_running_requests_is_kept_without_data_parallelism(repo_copy: Path) -> None:
    # SGLang 0.5.9 divides --max-running-requests by --dp-size; without one written dp is 1.
    model = repo_copy / DEEPSEEK
    model.write_text(model.read_text() + "args:\n  --max-running-requests: 100\n")
    result = CliRunner().invoke(main, ["show", "--host", "gpu-a", "--root", str(repo_copy), "--format", "json"])
    memory = json.loads(result.stdout)["services"][0]["memory"]
    assert (memory["pin"], memory["max_running_requests"]) == ("0.5.9", 100)


def _show_memory(root: Path, host: str) -> dict:
    result = CliRunner().invoke(main, ["show", "--host", host, "--root", str(root), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["services"][0]["memory"]


def test_a_pipeline_rank_holds_the_layers_the_pins_captured_class_gives_it(repo_copy: Path) -> None:
    """DeepSeek-V3 at TP 8 x PP 2 over gpu-a and gpu-b: the pin's pipeline.json says its class
    splits the layers, so a rank's pool holds ceil(61 / 2) = 31; where the capture says the class
    does not split (re-captured file of the same pin, stamped), every rank holds all 61 and gen
    show says so."""
    _rewrite(repo_copy, DEEPSEEK, "parallel:\n  tp: 16\n", "parallel:\n  tp: 8\n  pp: 2\n")
    split = _show_memory(repo_copy, "gpu-a")
    assert (split["kv_layers"], split["pp_all_layers"], split["bytes_per_token"]) == (31, False, 576 * 31 * 2)
    from generator.load.captured import captured_json

    path = repo_copy / "catalogs" / "sglang" / "0.5.9.pipeline.json"
    doc = json.loads(path.read_text())
    doc["architectures"]["DeepseekV3ForCausalLM"]["layers"] = False
    path.write_text(captured_json(doc))
    whole = _show_memory(repo_copy, "gpu-a")
    assert (whole["kv_layers"], whole["pp_all_layers"], whole["bytes_per_token"]) == (61, True, 576 * 61 * 2)
    assert whole["max_total_num_tokens"] < split["max_total_num_tokens"] // 1.9
    text = CliRunner().invoke(main, ["show", "--host", "gpu-a", "--root", str(repo_copy)]).output
    assert "every pipeline rank holds all 61 layers: the pin's model class does not split them" in text


def test_pipeline_parallel_for_a_class_without_pp_support_is_refused(repo_copy: Path) -> None:
    """P035: SGLang asserts support_pp ("pp_proxy_tensors" in the model's forward) with --pp-size
    above 1. DeepSeek-V3's class has it on 0.5.9 (no finding); a capture of the pin that says
    it has not (re-stamped) makes gen refuse the service and size nothing for it."""
    _rewrite(repo_copy, DEEPSEEK, "parallel:\n  tp: 16\n", "parallel:\n  tp: 8\n  pp: 2\n")
    code, found = _check(repo_copy)
    assert not [f for f in found if "P035" in f]
    from generator.load.captured import captured_json

    path = repo_copy / "catalogs" / "sglang" / "0.5.9.pipeline.json"
    doc = json.loads(path.read_text())
    doc["architectures"]["DeepseekV3ForCausalLM"]["pp_proxy_tensors"] = False
    path.write_text(captured_json(doc))
    code, found = _check(repo_copy)
    assert code == 1
    refused = [f for f in found if "P035" in f]
    assert len(refused) == 1  # both nodes report it at the manifest's parallel.pp, once
    assert refused[0] == (
        f"{DEEPSEEK}:17:7: "
        "error[P035]: 'deepseek-v3-bf16' cannot start with parallel.pp 2: SGLang 0.5.9's DeepseekV3ForCausalLM "
        "takes no pp_proxy_tensors in its forward, so the model runner stops after loading the weights with "
        "\"Pipeline Parallel is not compatible with this model.\" (the pin's catalogs/sglang/<pin>.pipeline.json) "
        "(set parallel.pp to 1 and spread the model with parallel.tp, or pin an SGLang release whose "
        "DeepseekV3ForCausalLM supports pipeline parallelism)")
    assert found == refused  # nothing else is sized for it
