"""SGLang's defaults that depend on the GPU's memory, per pin: chunked prefill, CUDA graphs, the fraction.

Mirrors ``ServerArgs._handle_gpu_memory_settings`` of 0.5.9 (``server_args.py``) and
``handle_gpu_memory_settings`` / ``reserve_for_graph_mb`` / ``adjust_mem_fraction_for_vlm``
of 0.5.23 (``arg_groups/memory_hook.py``). SGLang reads the GPU's capacity from
``nvidia-smi --query-gpu=memory.total`` in MiB, which is the inventory's
``gpus[].memory_mib``. ``tests/test_memory_oracle.py`` runs SGLang's own resolution in the
pinned venvs with that capacity patched in and compares every field this module returns.

:class:`Flags`, the service's settings that memory sizing reads, is defined here, the lower
of the two modules: :mod:`generator.plan.memory` sizes from the same object.
"""

from __future__ import annotations

from dataclasses import dataclass

# (upper bound in MiB, chunked_prefill_size, cuda graph max bs for tp < 4, for tp >= 4), per pin.
_TIERS: dict[str, tuple[tuple[float, int, int, int], ...]] = {
    "0.5.9": ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
              (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (float("inf"), 16384, 512, 512)),
    "0.5.23": ((20 * 1024, 2048, 8, 8), (35 * 1024, 4096, 48, 160), (60 * 1024, 4096, 32, 160),
               (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (float("inf"), 16384, 512, 512)),
}


@dataclass(frozen=True)
class Flags:
    """The service's SGLang settings that sizing reads (dest names; None: not given, SGLang decides)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    mem_fraction_static: float | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int = 16384
    cuda_graph_max_bs: int | None = None
    cuda_graph_bs: tuple[int, ...] | None = None
    disable_cuda_graph: bool = False
    disable_cuda_graph_padding: bool = False
    enable_piecewise_cuda_graph: bool = False
    piecewise_cuda_graph_max_tokens: int | None = None
    kv_cache_dtype: str = "auto"
    dtype: str = "auto"
    page_size: int = 1
    context_length: int | None = None
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    speculative_algorithm: str | None = None
    speculative_num_draft_tokens: int | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    mamba_full_memory_ratio: float = 0.9
    max_mamba_cache_size: int | None = None
    mamba_ssm_dtype: str | None = None
    disable_radix_cache: bool = False
    swa_full_tokens_ratio: float = 0.8
    disable_hybrid_swa_memory: bool = False
    deepep: bool = False
    attention_backend: str | None = None
    nsa_trtllm: bool = False  # 0.5.9: --nsa-prefill-backend or --nsa-decode-backend trtllm (the MLA row unpadded)
    enable_multimodal: bool | None = None  # --enable-multimodal (None: SGLang's default for the architecture)

    @property
    def attn_tp(self) -> int:
        """``get_attention_tp_size``: TP ranks sharing one attention replica."""
        return self.tp // self.dp if self.dp_attention and self.dp > 1 else self.tp


@dataclass(frozen=True)
class DefaultInputs:
    """What SGLang's memory defaults read: the GPU's memory, the service's flags, the model's shape."""

    gpu_memory_mib: int
    flags: Flags = Flags()
    mla: bool = False
    multimodal: bool = False
    vision_layers: int | None = None
    vision_hidden: int | None = None


@dataclass(frozen=True)
class Defaults:
    """What SGLang resolves: the fraction (and whether it was the default), sizes, the reserve it aimed at."""

    mem_fraction_static: float
    fraction_is_default: bool
    chunked_prefill_size: int  # after the DP-attention division
    cuda_graph_max_bs: int
    reserved_mib: float  # what the default rule keeps out of the static pool, for these flags
    default_fraction: float  # the fraction SGLang would pick for these flags and this GPU


def _tier(pin: str, mib: int, tp: int) -> tuple[int, int]:
    for bound, chunk, small, large in _TIERS[pin]:
        if mib < bound:
            return chunk, (small if tp < 4 else large)
    raise AssertionError("unreachable: the last tier is unbounded")


def decode_graph_sizes(max_bs: int, speculative: bool, no_padding: bool, pin: str) -> list[int]:
    """``_generate_cuda_graph_batch_sizes`` (0.5.9) / ``generate_decode_cuda_graph_batch_sizes`` (0.5.23)."""
    if no_padding:
        sizes = list(range(1, max_bs + 1))
    elif not speculative:
        sizes = [1, 2, 4, 8, 12] + list(range(16, 257, 8)) + list(range(272, 512, 16)) + list(range(512, max_bs + 1, 32))
    else:
        sizes = (list(range(1, 9)) + list(range(10, 33, 2)) + list(range(40, 65, 4)) + list(range(72, 257, 8))
                 + list(range(272, max_bs + 1, 16)))
    sizes = [s for s in sizes if s <= max_bs]
    if pin != "0.5.9" and max_bs not in sizes:
        sizes.append(max_bs)
    return sizes


def piecewise_tokens(max_tokens: int) -> list[int]:
    """``_generate_piecewise_cuda_graph_tokens`` (0.5.9; 0.5.23's prefill graph sizes are the same list)."""
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32)) + list(range(576, 1025, 64))
             + list(range(1280, 4097, 256)) + list(range(4608, max_tokens + 1, 512)))
    return [s for s in sizes if s <= max_tokens]


def _vlm_factor(inputs: DefaultInputs) -> float:
    """``adjust_mem_fraction_for_vlm``: 0.95 times a factor from the vision tower's size, in [0.8, 1.05]."""
    layers = inputs.vision_layers if inputs.vision_layers is not None else 24
    hidden = inputs.vision_hidden if inputs.vision_hidden is not None else 1024
    ratio = layers * hidden ** 2 / (24 * 1024 ** 2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def resolve_defaults(pin: str, inputs: DefaultInputs) -> Defaults:
    """SGLang ``pin``'s chunked prefill size, CUDA graph batch size and mem_fraction_static."""
    mib = inputs.gpu_memory_mib
    chunk_default, bs_default = _tier(pin, mib, inputs.flags.tp)
    chunk = inputs.flags.chunked_prefill_size if inputs.flags.chunked_prefill_size is not None else chunk_default
    max_bs = inputs.flags.cuda_graph_max_bs if inputs.flags.cuda_graph_max_bs is not None else bs_default
    speculative = inputs.flags.speculative_algorithm is not None
    if pin != "0.5.9" and inputs.flags.cuda_graph_max_bs is None and inputs.flags.max_running_requests is not None:
        max_bs = min(max_bs, inputs.flags.max_running_requests)  # a default max_bs never exceeds the running limit
    if inputs.flags.cuda_graph_bs:
        max_bs = max(inputs.flags.cuda_graph_bs)
    if pin == "0.5.9":
        reserved = _reserved_0_5_9(inputs, chunk, max_bs)
    else:
        reserved = _reserved_0_5_23(inputs, chunk, max_bs)
    fraction = round((mib - reserved) / mib, 3)
    if inputs.multimodal:
        fraction = fraction * _vlm_factor(inputs)
    chosen = inputs.flags.mem_fraction_static if inputs.flags.mem_fraction_static is not None else fraction
    final_chunk = chunk // inputs.flags.dp if inputs.flags.dp_attention and inputs.flags.dp > 1 else chunk
    del speculative
    return Defaults(chosen, inputs.flags.mem_fraction_static is None, final_chunk, max_bs, reserved, fraction)


def _reserved_0_5_9(inputs: DefaultInputs, chunk: int, max_bs: int) -> float:
    reserved: float = 512
    reserved += max(chunk if chunk > 0 else inputs.flags.max_prefill_tokens, 2048) * 1.5
    reserved += max_bs * 2
    reserved += inputs.flags.tp * inputs.flags.pp / 8 * 1024
    if inputs.flags.dp_attention and inputs.flags.dp > 1:
        reserved += max_bs * inputs.flags.dp * 3
        if max_bs > 300:
            reserved += max_bs * inputs.flags.dp * 1.5
    if inputs.flags.enable_piecewise_cuda_graph:
        limit = inputs.flags.piecewise_cuda_graph_max_tokens or (2048 if inputs.mla else chunk)
        reserved += len(piecewise_tokens(limit)) * 8
    if inputs.gpu_memory_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if inputs.flags.speculative_algorithm == "STANDALONE":
        reserved += 6 * 1024
    elif inputs.flags.speculative_algorithm is not None and inputs.flags.speculative_algorithm != "NGRAM":
        reserved += 2 * 1024
    return reserved


def _reserved_0_5_23(inputs: DefaultInputs, chunk: int, max_bs: int) -> float:
    reserved: float = 512
    reserved += max(chunk if chunk > 0 else inputs.flags.max_prefill_tokens, 2048) * 1.5
    reserved += inputs.flags.tp * inputs.flags.pp / 8 * 1024
    graph: float = 0
    if not inputs.flags.disable_cuda_graph:
        graph += max_bs * 2
    if inputs.flags.dp_attention and inputs.flags.dp > 1:
        graph += max_bs * inputs.flags.dp * 3
        if max_bs > 300:
            graph += max_bs * inputs.flags.dp * 1.5
    # The prefill CUDA graph is off by default in 0.5.23 (cuda_graph_config.prefill.backend
    # 'disabled'), so its len(bs) * 8 MiB (1.5 GiB for MLA) term does not apply.
    reserved += graph
    if inputs.gpu_memory_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if inputs.flags.deepep and not inputs.flags.disable_cuda_graph:
        reserved += 2 * 1024
    return reserved
