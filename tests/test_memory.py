"""generator/plan/memory.py on real config.json files, worked by hand from SGLang's code per pin.

The cell sizes and defaults are also checked against SGLang itself (tests/test_memory_oracle.py);
these cases pin down the parts around them: the per-pin differences (the draft's layers and
weights in 0.5.23's budget), tensor parallelism, the recurrent state's share, the
sliding-window split, FP8 KV, the request limit and the refusal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.plan.memory import (
    CUDA_CONTEXT_GIB, GIB, Checkpoint, Flags, Measured, _swa_split_0_5_23, budget, cell_size, kv_layers, size_memory,
    stage_ranges, weights_per_rank,
)
from generator.plan.memory_defaults import piecewise_tokens
from generator.plan.model_shape import ShapeError, model_shape

CONFIGS = json.loads((Path(__file__).parent / "data" / "memory_configs.json").read_text())
LLAMA8, LLAMA70 = CONFIGS["meta-llama/Llama-3.1-8B-Instruct"], CONFIGS["meta-llama/Llama-3.1-70B-Instruct"]
DEEPSEEK, DSV32 = CONFIGS["deepseek-ai/DeepSeek-V3"], CONFIGS["deepseek-ai/DeepSeek-V3.2-Exp"]
QNEXT, GPTOSS = CONFIGS["Qwen/Qwen3-Next-80B-A3B-Instruct"], CONFIGS["openai/gpt-oss-120b"]
H100, H200 = 81559, 143771


def test_gqa_heads_shard_then_replicate() -> None:
    shape = model_shape(LLAMA70, "0.5.9")
    # 8 KV heads: 2 per rank at TP 4, 1 at TP 8, still 1 (replicated) at TP 16
    assert [cell_size("0.5.9", shape, Flags(tp=tp), 80) for tp in (4, 8, 16)] == [
        2 * 256 * 80 * 2, 1 * 256 * 80 * 2, 1 * 256 * 80 * 2]


def test_mla_is_not_split_by_tp_and_fp8_halves_it() -> None:
    shape = model_shape(DEEPSEEK, "0.5.9")
    assert shape.mla and (shape.kv_lora_rank, shape.qk_rope_head_dim) == (512, 64)
    assert cell_size("0.5.9", shape, Flags(tp=8), 61) == cell_size("0.5.9", shape, Flags(tp=16), 61) == 576 * 61 * 2
    assert cell_size("0.5.9", shape, Flags(tp=8, kv_cache_dtype="fp8_e4m3"), 61) == 576 * 61


def test_dsa_indexer_and_0_5_23_fp8_layout() -> None:
    shape = model_shape(DSV32, "0.5.9")
    assert shape.index_head_dim == 128
    indexer = (128 + 128 // 128 * 4) * 61
    assert cell_size("0.5.9", shape, Flags(tp=8, kv_cache_dtype="fp8_e4m3"), 61) == 576 * 61 + indexer
    # 0.5.23 sizes the FP8 DSA row as stored: 512 + 512/128 x 4 scale bytes + 64 rope dims in bf16
    new = model_shape(DSV32, "0.5.23")
    assert cell_size("0.5.23", new, Flags(tp=8, kv_cache_dtype="fp8_e4m3"), 61) == (512 + 16 + 128) * 61 + indexer


def test_the_draft_layer_term_is_0_5_23s() -> None:
    shape = model_shape(DEEPSEEK, "0.5.23")
    # One fraction for both: the defaults differ (0.5.9 reserves 2 GiB more for an EAGLE draft)
    flags = Flags(tp=8, mem_fraction_static=0.88, speculative_algorithm="EAGLE", speculative_num_steps=3,
                  speculative_eagle_topk=1)
    old = size_memory("0.5.9", Checkpoint(DEEPSEEK, 688_586_727_753), H200, flags, nvlink=True)
    new = size_memory("0.5.23", Checkpoint(DEEPSEEK, 688_586_727_753), H200, flags, nvlink=True)
    assert old.cell_bytes == 576 * 61 * 2
    assert new.cell_bytes == 576 * 61 * 2 + int(576 * 61 * 2 * 1 / 61)  # one MTP layer
    assert shape.nextn_layers == 1
    # the MTP layer's weights come out of the KV budget on 0.5.23, out of the reserve on 0.5.9
    assert new.draft_counted and not old.draft_counted
    assert new.draft_weights_gib == pytest.approx(old.draft_weights_gib) and old.draft_weights_gib > 0
    assert new.max_total_num_tokens < old.max_total_num_tokens


def test_weights_per_rank_replicate_kv_projections_past_the_kv_heads() -> None:
    shape = model_shape(LLAMA70, "0.5.9")
    total = 141_107_412_992
    kv = 2 * 8192 * 8 * 128 * 80 * 2  # K and V projections, bf16
    target8, mtp = weights_per_rank(shape, Checkpoint(LLAMA70, total), Flags(tp=8))
    target16, _ = weights_per_rank(shape, Checkpoint(LLAMA70, total), Flags(tp=16))
    assert (target8, mtp) == (total / 8, 0.0)
    assert target16 == pytest.approx(total / 16 + kv * (1 / 8 - 1 / 16))


def test_the_linear_attention_state_is_taken_first() -> None:
    shape = model_shape(QNEXT, "0.5.9")
    assert shape.full_attention_layers == tuple(range(3, 48, 4))  # every 4th layer keeps a KV cache
    state = shape.linear_state(4)
    assert state is not None
    # conv: (128 x 32 + 2 x 16 x 128) / 4 ranks x (4 - 1), bf16; ssm: 32 / 4 heads x 128 x 128, fp32; 36 layers
    assert state.bytes_per_request() == ((4096 + 4096) // 4 * 3 * 2 + 8 * 128 * 128 * 4) * 36
    plan = size_memory("0.5.9", Checkpoint(QNEXT, 162_000_000_000), H100, Flags(tp=4, mem_fraction_static=0.9))
    rest = plan.rest_gib
    # 0.5.9: the state takes rest x 0.9 / 1.9 (mamba_full_memory_ratio), in whole requests
    size = int(rest * 0.9 / 1.9 * GIB // state.bytes_per_request())
    assert plan.mamba_gib == pytest.approx(size * state.bytes_per_request() / GIB)
    assert plan.max_total_num_tokens == int((rest - plan.mamba_gib) * GIB) // plan.cell_bytes
    assert plan.rest_gib > 0 and plan.cell_bytes == 1 * 512 * 12 * 2  # 2 KV heads: 1 per rank at TP 4
    assert plan.max_running_requests <= size // 3  # three state slots per request
    # 0.5.23 keeps one padding slot more
    new = size_memory("0.5.23", Checkpoint(QNEXT, 162_000_000_000), H100, Flags(tp=4, mem_fraction_static=0.9))
    per = state.bytes_per_request()
    k = int((rest * 0.9 / 1.9 * GIB - per) // per)
    assert new.mamba_gib == pytest.approx((k + 1) * per / GIB)


def test_sliding_window_layers_share_the_budget_by_the_ratio() -> None:
    shape = model_shape(GPTOSS, "0.5.9")
    assert (len(shape.swa_layers or ()), len(shape.swa_full_layers or ())) == (18, 18)
    flags = Flags(tp=2, mem_fraction_static=0.85)
    old = size_memory("0.5.9", Checkpoint(GPTOSS, 65_000_000_000), H100, flags)
    new = size_memory("0.5.23", Checkpoint(GPTOSS, 65_000_000_000), H100, flags)
    per = 4 * 128 * 2  # 8 KV heads / 2 ranks x (64 + 64) x bf16, full and sliding layers alike
    budget_bytes = int(old.rest_gib * GIB)
    # 0.5.23: full tokens = budget / (full + 0.8 x swa), sliding-window tokens = 0.8 x full
    full = int(budget_bytes // (per * 18 + 0.8 * per * 18))
    assert (new.max_total_num_tokens, new.swa_tokens) == (full, int(full * 0.8))
    # 0.5.9 profiles with the plain sum first, then splits the same memory
    profiled = budget_bytes // (per * 36)
    split = int(profiled * per * 36 / (per * 18 + 0.8 * per * 18))
    assert (old.max_total_num_tokens, old.swa_tokens) == (split, int(split * 0.8))


def test_requests_follow_the_pool_and_speculative_decoding_takes_48() -> None:
    plan = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(tp=1))
    tokens = plan.max_total_num_tokens
    assert plan.context_len == 131072
    assert plan.max_running_requests == min(max(int(tokens / 131072 * 512), 2048), 4096, tokens // 2)
    spec = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(tp=1, speculative_algorithm="NGRAM"))
    assert spec.max_running_requests == 48


def test_the_free_memory_assumption_and_a_measured_one() -> None:
    plan = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(tp=1))
    assert plan.free_before_load_assumed and plan.free_before_load_gib == pytest.approx(H100 / 1024 - CUDA_CONTEXT_GIB)
    measured = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(tp=1), Measured(78.5, 63.0))
    assert not measured.free_before_load_assumed
    # rest = after - before x (1 - fraction), SGLang's profile_max_num_token
    assert measured.rest_gib == pytest.approx(63.0 - 78.5 * (1 - 0.835))


def test_weights_that_leave_nothing_are_refused_with_sglangs_minimum() -> None:
    fit = budget("0.5.23", 70 * GIB, H100, Flags(tp=1, mem_fraction_static=0.85))
    pre = H100 / 1024 - CUDA_CONTEXT_GIB
    assert fit.rest_gib == pytest.approx(pre - 70 - pre * 0.15) and fit.rest_gib < 0
    assert fit.min_fraction == pytest.approx(1 - (pre - 70) / pre)
    plan = size_memory("0.5.9", Checkpoint(LLAMA70, 141_107_412_992), H100, Flags(tp=1))
    assert not plan.fits and plan.max_total_num_tokens == 0


def test_max_total_tokens_and_pages_cap_the_pool() -> None:
    capped = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(tp=1, max_total_tokens=100_000))
    assert capped.max_total_num_tokens == 100_000
    paged = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(tp=1, page_size=64))
    assert paged.max_total_num_tokens % 64 == 0


def test_a_config_without_the_sizing_fields_says_which() -> None:
    with pytest.raises(ShapeError, match="num_hidden_layers"):
        model_shape({"architectures": ["LlamaForCausalLM"]}, "0.5.9")


def test_gpt_oss_on_sm100_loses_the_sliding_window_pool_on_0_5_9_only() -> None:
    # 0.5.9 picks trtllm_mha for GPT-OSS on SM100 and disables hybrid SWA memory with it.
    flags = Flags(tp=2, mem_fraction_static=0.85)
    b200 = 183359
    old = size_memory("0.5.9", Checkpoint(GPTOSS, 65_000_000_000), b200, flags, capability=(10, 0))
    assert old.swa_tokens is None and old.cell_bytes == 4 * 128 * 36 * 2
    hopper = size_memory("0.5.9", Checkpoint(GPTOSS, 65_000_000_000), b200, flags, capability=(9, 0))
    assert hopper.swa_tokens is not None
    new = size_memory("0.5.23", Checkpoint(GPTOSS, 65_000_000_000), b200, flags, capability=(10, 0))
    assert new.swa_tokens is not None


def test_the_request_table_is_rows_of_the_context_and_comes_out_of_the_reserve() -> None:
    # 0.5.9: max(int(tokens / 131072 x 512), 2048) = 2048 rows of (131072 + 4) int32 = 1.0 GiB;
    # 0.5.23 allocates one padding row more.
    flags = Flags(tp=1, mem_fraction_static=0.85)
    old = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, flags)
    new = size_memory("0.5.23", Checkpoint(LLAMA8, 16_060_522_496), H100, flags)
    assert (old.context_len, old.req_table_rows, new.req_table_rows) == (131072, 2048, 2049)
    assert old.req_table_gib == 2048 * (131072 + 4) * 4 / GIB
    assert new.req_table_gib == 2049 * (131072 + 4) * 4 / GIB
    post = H100 / 1024 - CUDA_CONTEXT_GIB - 16_060_522_496 / GIB
    assert old.reserve_gib == pytest.approx(post - old.kv_pool_gib - old.req_table_gib)
    # a shorter context shrinks it; speculative draft tokens widen each row
    short = size_memory("0.5.9", Checkpoint(LLAMA8, 16_060_522_496), H100, Flags(mem_fraction_static=0.85,
                                                                                  context_length=8192))
    assert short.req_table_gib == short.req_table_rows * (8192 + 4) * 4 / GIB


def test_a_dsa_model_left_at_auto_gets_sglangs_kv_dtype_by_compute_capability() -> None:
    # _set_default_nsa_kv_cache_dtype: FP8 from SM100 on, bfloat16 on Hopper (and when unknown)
    flags = Flags(tp=8, mem_fraction_static=0.85)
    hopper = size_memory("0.5.9", Checkpoint(DSV32, 689_000_000_000), H200, flags, nvlink=True, capability=(9, 0))
    blackwell = size_memory("0.5.9", Checkpoint(DSV32, 689_000_000_000), 183359, flags, nvlink=True,
                            capability=(10, 0))
    unknown = size_memory("0.5.9", Checkpoint(DSV32, 689_000_000_000), H200, flags, nvlink=True)
    indexer = (128 + 4) * 61
    assert hopper.cell_bytes == unknown.cell_bytes == 576 * 2 * 61 + indexer
    assert blackwell.cell_bytes == 576 * 61 + indexer
    assert any("compute_cap is unknown" in n for n in unknown.notes)
    assert not any("compute_cap" in n for n in hopper.notes)
    # an explicit dtype is kept
    explicit = size_memory("0.5.9", Checkpoint(DSV32, 689_000_000_000), 183359,
                           Flags(tp=8, mem_fraction_static=0.85, kv_cache_dtype="bfloat16"), nvlink=True,
                           capability=(10, 0))
    assert explicit.cell_bytes == hopper.cell_bytes


def test_0_5_9_budgets_the_fp8_dsa_row_as_576_bytes_and_stores_656() -> None:
    # calculate_mla_kv_cache_dim: 512 FP8 values + 512 / 128 x 4 scale bytes + 64 rope dims in bf16
    flags = Flags(tp=8, mem_fraction_static=0.85, kv_cache_dtype="fp8_e4m3")
    plan = size_memory("0.5.9", Checkpoint(DSV32, 689_000_000_000), 183359, flags, nvlink=True, capability=(10, 0))
    indexer = (128 + 4) * 61
    assert plan.cell_bytes == 576 * 61 + indexer  # what the tokens are divided by
    assert plan.kv_pool_gib * GIB == plan.max_total_num_tokens * (656 * 61 + indexer)  # what is allocated
    # the 80 bytes a layer more come out of the reserve; a trtllm NSA backend keeps the row at 576
    trtllm = size_memory("0.5.9", Checkpoint(DSV32, 689_000_000_000), 183359,
                         Flags(tp=8, mem_fraction_static=0.85, kv_cache_dtype="fp8_e4m3", nsa_trtllm=True),
                         nvlink=True, capability=(10, 0))
    assert trtllm.kv_pool_gib * GIB == trtllm.max_total_num_tokens * (576 * 61 + indexer)
    assert trtllm.reserve_gib - plan.reserve_gib == pytest.approx(plan.max_total_num_tokens * 80 * 61 / GIB)


def test_llama_4s_vision_tower_is_off_by_default_so_no_vlm_reduction() -> None:
    # ModelConfig's mm_disabled_models: Llama 4 runs text-only unless --enable-multimodal is given,
    # and only a multimodal model gets adjust_mem_fraction_for_vlm's smaller default fraction.
    scout = CONFIGS["meta-llama/Llama-4-Scout-17B-16E-Instruct"]
    assert not model_shape(scout, "0.5.9").multimodal
    assert model_shape(scout, "0.5.9", enable_multimodal=True).multimodal
    off = size_memory("0.5.9", Checkpoint(scout, 218_000_000_000), H200, Flags(tp=8), nvlink=True)
    on = size_memory("0.5.9", Checkpoint(scout, 218_000_000_000), H200, Flags(tp=8, enable_multimodal=True),
                     nvlink=True)
    assert on.mem_fraction_static < off.mem_fraction_static


def test_defaults_read_the_sizing_flags_themselves() -> None:
    """SGLang's defaults and the sizing read one Flags object: DefaultInputs holds only what
    is not a flag (it was a second dataclass with 16 of the same fields, copied field by field)."""
    from dataclasses import fields

    from generator.plan.memory import Flags as SizingFlags
    from generator.plan.memory_defaults import DefaultInputs

    flag_names = {f.name for f in fields(SizingFlags)}
    assert {f.name for f in fields(DefaultInputs)} & flag_names == {"flags"} & flag_names
    assert [f.name for f in fields(DefaultInputs)] == ["gpu_memory_mib", "flags", "mla", "multimodal",
                                                       "vision_layers", "vision_hidden"]


def test_a_multimodal_model_reserves_the_vlm_cache_on_0_5_23() -> None:
    """0.5.23's ``mm_runtime_reservation_gb``: SGLANG_VLM_CACHE_SIZE_MB (100 MiB) off the KV budget; 0.5.9 has none."""
    scout = CONFIGS["meta-llama/Llama-4-Scout-17B-16E-Instruct"]
    vlm = model_shape(scout, "0.5.23", enable_multimodal=True)
    text = model_shape(scout, "0.5.23")
    assert vlm.multimodal and not text.multimodal
    flags = Flags(tp=8, mem_fraction_static=0.8)  # a fixed fraction: only the reservation differs
    for pin, reserved in (("0.5.23", 100 / 1024), ("0.5.9", 0.0)):
        with_vlm, without = (budget(pin, 30 * GIB, H100, flags, shape=s) for s in (vlm, text))
        assert without.rest_gib - with_vlm.rest_gib == pytest.approx(reserved, abs=1e-9), pin


@pytest.mark.parametrize("full", [0, 1])
def test_0_5_23_sizes_an_all_sliding_window_model_without_the_ratio(full: int) -> None:
    """``HybridSWAPoolConfigurator._recompute_cell_size``: with no full-attention layer the cell is
    the sliding-window rows alone (no ratio: no full pool to relate to); with one, full + 0.8 x swa."""
    kinds = ["sliding_attention"] * (36 - full) + ["full_attention"] * full
    shape = model_shape(dict(GPTOSS, layer_types=kinds), "0.5.23")
    assert (len(shape.swa_layers or ()), len(shape.swa_full_layers or ())) == (36 - full, full)
    per = 4 * 128 * 2  # 8 KV heads / 2 ranks x (64 + 64) x bf16, as in the case above
    cell, full_tok, swa_tok = _swa_split_0_5_23(shape, Flags(tp=2), 2, 0)
    assert (full_tok, swa_tok) == (per, per)
    assert cell == (per * 36 if full == 0 else per * 1 + 0.8 * per * 35)


def test_piecewise_graph_sizes_are_sglangs_list() -> None:
    """``ServerArgs._generate_piecewise_cuda_graph_tokens`` (0.5.9 server_args.py): four steps, then 512s."""
    assert piecewise_tokens(600) == (list(range(4, 33, 4)) + list(range(48, 257, 16)) + [288, 320, 352, 384, 416,
                                                                                        448, 480, 512, 576])
    assert piecewise_tokens(5120)[-4:] == [3840, 4096, 4608, 5120]
    assert len(piecewise_tokens(8192)) == 8 + 14 + 8 + 8 + 12 + 8


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_a_pipeline_rank_sizes_its_stage_only_where_the_class_splits_its_layers(pin: str) -> None:
    """SGLang takes a rank's layers from the model's start_layer/end_layer (the pin's
    <pin>.pipeline.json says which classes have them): Llama's are split, a wrapper class
    without them sizes the pool for all 80 layers on each of the 4 ranks; unknown keeps the
    stage's share and says so."""
    flags = Flags(pp=4, mem_fraction_static=0.85)
    checkpoint = Checkpoint(LLAMA70, 141_107_412_992)
    split = size_memory(pin, checkpoint, H100, flags, layer_split=True)
    whole = size_memory(pin, checkpoint, H100, flags, layer_split=False)
    unknown = size_memory(pin, checkpoint, H100, flags)
    assert split.cell_bytes == 8 * 256 * 20 * 2 and whole.cell_bytes == 8 * 256 * 80 * 2
    assert whole.max_total_num_tokens == pytest.approx(split.max_total_num_tokens / 4, rel=0.001)
    assert whole.kv_pool_gib == pytest.approx(split.kv_pool_gib, rel=0.001)  # the same budget, 4x the layers
    assert whole.weights_gib == split.weights_gib  # the language model's layers are split either way
    assert any("all 80 layers" in note for note in whole.notes)
    assert unknown.cell_bytes == split.cell_bytes and any("not captured" in note for note in unknown.notes)
    # Without pipeline parallelism the fact is never read.
    assert size_memory(pin, checkpoint, H100, Flags(tp=4), layer_split=False).cell_bytes == 2 * 256 * 80 * 2


def test_a_hybrid_models_pipeline_rank_counts_the_full_attention_layers_of_its_own_range() -> None:
    """Qwen3-Next: 48 layers, full attention every 4th (3, 7, ..., 47). At PP 5 SGLang gives the
    ranks 9, 9, 10, 10, 10 layers (get_pp_indices: the extra ones last); the pool is sized by the
    rank with the most full-attention layers ([18, 28) and [38, 48): 3 each), not the first's 2."""
    shape = model_shape(QNEXT, "0.5.9")
    assert stage_ranges(48, 5) == [(0, 9), (9, 18), (18, 28), (28, 38), (38, 48)]
    assert kv_layers(shape, 5, True) == 3
    assert kv_layers(shape, 5, False) == 12 and kv_layers(shape, 1, True) == 12
    assert kv_layers(model_shape(LLAMA70, "0.5.9"), 3, True) == 27  # 80 = 26 + 27 + 27
