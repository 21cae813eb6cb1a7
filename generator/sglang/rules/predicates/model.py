"""Model rules: the checkpoint (``Settings.model``, ``Settings.draft``: generator/checkpoint/)
against the flags, as SGLang decides when it builds the model and its ModelConfig.

These checks fire minutes into a start, after the weights are read (``divide()`` in the
attention layers, the FP8 methods' shape checks, ``ModelConfig._derive_context_length``), so no
ServerArgs oracle sees them; tests/test_model_oracle.py runs the pinned SGLang's own code on
real config.json shapes against these predicates. Each is silent when the fact it needs is
absent (no snapshot, or a key the snapshot lacks).
"""

from __future__ import annotations

from generator.sglang.rules.predicates.common import dp_attention
from generator.sglang.rules.registry import Hit, Item, check, first_broken, item, predicate
from generator.sglang.rules.settings import Architectures, Settings  # the pin's registry, as Settings holds it
from generator.sglang.rules.spec import RuleSpec


def attention_tp(s: Settings) -> tuple[int, list[Item]]:
    """The attention-TP width (TP divided by the DP-attention and attention-CP sizes), and the
    settings it came from as items (``tp``, the DP-attention items of common.dp_attention,
    ``attn-cp`` in the rule's ``items:``)."""
    tp = s.integer("tp_size", 1)
    on, dp, dp_item = dp_attention(s)
    cp = s.integer("attn_cp_size", 1) if s.has("attn_cp_size") else 1
    width = max(1, tp // (dp if on else 1) // max(1, cp))
    parts = [item("tp")] + ([dp_item] if dp_item is not None else []) + ([item("attn-cp")] if cp > 1 else [])
    return width, parts


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _kv_misfit(heads: int, width: int) -> bool:
    """QKVParallelLinear: more KV heads than ranks are divided, fewer are replicated; either must be even."""
    return bool(heads % width) if heads >= width else bool(width % heads)


@predicate("tp-attention-heads")
def _tp_heads(s: Settings, rule: RuleSpec) -> Hit | None:
    """The query heads, the KV heads (unless MLA) and a vision tower's heads per attention-TP rank."""
    m = s.model
    if m is None:
        return None
    width, how = attention_tp(s)
    blame = ("tp_size", "dp_size")
    heads, kv, vision = m.attention_heads, m.kv_heads, m.vision_heads
    return first_broken([
        check(heads is not None and heads % width != 0, "heads", blame, heads=heads, divisors=_divisors(heads or 1)),
        check(kv is not None and not m.uses_mla and _kv_misfit(kv, width), "kv-heads", blame, heads=kv,
              divisors=_divisors(kv or 1)),
        check(vision is not None and vision % width != 0, "vision-heads", blame, heads=vision,
              divisors=_divisors(vision or 1)),
    ], width=width, how=how)


@predicate("fp8-block-per-rank")
def _fp8_blocks(s: Settings, rule: RuleSpec) -> Hit | None:
    """Block-wise FP8: each rank's slice of the MLP (Fp8LinearMethod) and of every expert
    (Fp8MoEMethod, over TP / EP ranks) is a whole number of [block_n, block_k] blocks."""
    m = s.model
    block = m.weight_block_size if m is not None else None
    tp = s.integer("tp_size", 1)
    if m is None or block is None or tp <= 1:
        return None
    ep = s.integer("ep_size", 1)
    dense, moe = m.int_of("intermediate_size"), m.int_of("moe_intermediate_size")
    checks = []
    if dense:
        part = dense // tp
        checks += [check(part % block[0] != 0, "dense", ("tp_size",), size=dense, ways=tp, part=part, block=block[0],
                         side="block_n"),
                   check(part % block[1] != 0, "dense", ("tp_size",), size=dense, ways=tp, part=part, block=block[1],
                         side="block_k")]
    if moe and m.experts:
        ways = max(1, tp // max(1, ep))
        part = moe // ways
        checks += [check(part % block[0] != 0, "experts", ("tp_size", "ep_size"), size=moe, ways=ways, part=part,
                         block=block[0], side="block_n"),
                   check(ways > 1 and part % block[1] != 0, "experts", ("tp_size", "ep_size"), size=moe, ways=ways,
                         part=part, block=block[1], side="block_k")]
    return first_broken(checks, block_n=block[0], block_k=block[1])


@predicate("context-length-limit")
def _context(s: Settings, rule: RuleSpec) -> Hit | None:
    """ModelConfig._derive_context_length: longer than the checkpoint's needs SGLang's override variable."""
    m = s.model
    wanted = s.opt_int("context_length")
    if m is None or wanted is None:
        return None
    limit = m.context_limit(s.rope_scaling_applies)
    allowed = s.env_true("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN") or s.env_true("SGLANG_IS_IN_CI")
    return first_broken([check(wanted > limit and not allowed, None, ("context_length",), wanted=wanted, limit=limit)])


# (whose config, what failed) -> the check's texts in rules.yaml, spelled out so every name is a constant
_CHECK_NAMES = {
    ("model", "missing"): "missing", ("model", "incompatible"): "incompatible",
    ("draft", "missing"): "draft-missing", ("draft", "incompatible"): "draft-incompatible",
    ("model", "unknown"): "unknown", ("model", "remote-code"): "remote-code",
    ("draft", "unknown"): "draft-unknown", ("draft", "remote-code"): "draft-remote-code"}


def _unloadable(archs: tuple[str, ...], known: Architectures, auto_map: dict[str, object], impl: str,
                rule: RuleSpec, version: tuple[int, ...] | None) -> tuple[str, str] | None:
    """(the check, the architecture) SGLang's ``get_model_architecture`` refuses, or None.

    As SGLang decides: a class of its registry loads natively (any of the list), unless
    ``--model-impl transformers``; otherwise ``resolve_transformers_arch`` looks each class up
    in Transformers. One it lacks, without ``auto_map.AutoModel``, is "missing" (0.5.23 skips it
    under ``--model-impl transformers``); one whose own ``is_backend_compatible()`` is False is
    "incompatible" (0.5.23 only warns under ``--model-impl transformers``; ``--model-impl sglang``
    asks no compatibility, the registry's Transformers backend takes the class).
    A custom class (``auto_map.AutoModel``) is remote code gen never runs: silent."""
    if impl == "mindspore" or (impl != "transformers" and any(a in known.sglang for a in archs)):
        return None
    for arch in archs:
        if arch.startswith("Transformers"):
            continue
        if arch not in known.transformers:
            if "AutoModel" in auto_map or (impl == "transformers"
                                           and rule.param("transformers_impl_skips_missing", version)):
                continue
            return "missing", arch
        if impl not in ("auto", "transformers"):
            continue  # --model-impl sglang: no compatibility gate, the registry's Transformers backend takes it
        if impl == "transformers" and rule.param("transformers_impl_skips_compatibility", version):
            continue
        if known.backend_compatible(arch) is False:
            return "incompatible", arch
    return None


@predicate("architecture-registered")
def _architecture(s: Settings, rule: RuleSpec) -> Hit | None:
    """The checkpoint's (and the draft's) architecture is one the pinned SGLang can build."""
    known = s.architectures
    if known is None:
        return None
    impl = str(s.get("model_impl", "auto")).lower()
    checks = []
    for role, facts in (("model", s.model), ("draft", s.draft)):
        if facts is None or not facts.architectures:
            continue
        found = _unloadable(facts.architectures, known, facts.auto_map or {}, impl, rule, s.version)
        checks.append(check(found is not None, _CHECK_NAMES[role, found[0] if found else "missing"], ("model_impl",),
                            arch=found[1] if found else None, transformers=known.transformers_version))
    return first_broken(checks)


def _config_refused(model_type: str | None, auto_map: dict[str, object], trust: bool, known: frozenset[str],
                    fallbacks: list[str]) -> str | None:
    """The check AutoConfig.from_pretrained (SGLang's get_config) fails, or None.

    A ``model_type`` the pin's AutoConfig recognizes (Transformers' own, or a config class SGLang
    registered) loads with local code, ``auto_map`` or not; another one needs the checkpoint's
    ``auto_map.AutoConfig`` and ``--trust-remote-code``. A config without ``model_type`` is
    matched by its folder name, which gen does not judge: silent."""
    if model_type is None or model_type in known or model_type in fallbacks:
        return None
    if "AutoConfig" not in auto_map:
        return "unknown"
    return None if trust else "remote-code"


@predicate("model-type-known")
def _model_type(s: Settings, rule: RuleSpec) -> Hit | None:
    """config.json's model_type (and the draft's) is one the pinned SGLang's AutoConfig can load."""
    if s.architectures is None or s.architectures.model_types is None:
        return None
    known = s.architectures.model_types
    trust = s.on("trust_remote_code")
    fallbacks = list(rule.param("config_fallbacks", s.version) or [])
    checks = []
    for role, facts in (("model", s.model), ("draft", s.draft)):
        if facts is None:
            continue
        found = _config_refused(facts.model_type, facts.auto_map or {}, trust, known, fallbacks)
        checks.append(check(found is not None, _CHECK_NAMES[role, found or "unknown"], ("trust_remote_code",),
                            model_type=facts.model_type, transformers=s.architectures.transformers_version))
    return first_broken(checks)


@predicate("quantization-matches-checkpoint")
def _quantization(s: Settings, rule: RuleSpec) -> Hit | None:
    """``--quantization`` against the checkpoint's ``quantization_config.quant_method``, as
    ModelConfig._verify_quantization decides for the target model (a draft adopts its own).

    SGLang keeps the flag when it equals the checkpoint's method, when its compatibility table
    pairs them (``compatible``), or when the flag asks for online requantization
    (``requantization``); a method's ``override_quantization_method`` may first replace the
    flag: ModelOpt's claims its own checkpoints whatever the flag (``claimed_methods``), the
    others claim a checkpoint of their family for their own flag, deciding from the rest of
    the config (bits, desc_act, the GPU: ``overrides``, flag -> methods, ``*`` any), and there
    gen stays silent. Otherwise SGLang raises. Silent without a quant_method (SGLang then takes
    the flag, or reads files beside config.json gen has no facts of)."""
    m = s.model
    wanted = s.text("quantization")
    qc = m.quantization_config if m is not None else None
    method = qc.get("quant_method") if qc is not None else None
    if wanted is None or not isinstance(method, str) or not method:
        return None
    flag, found = wanted.lower(), method.lower()
    compatible = rule.param("compatible", s.version) or {}
    overrides = rule.param("overrides", s.version) or {}
    claimed = overrides.get(flag) or ()
    spared = (flag == found or found in (compatible.get(flag) or ())
              or flag in (rule.param("requantization", s.version) or ())
              or found in (rule.param("claimed_methods", s.version) or ()) or "*" in claimed or found in claimed)
    return first_broken([check(not spared, None, ("quantization",), wanted=flag, method=found)])


@predicate("deterministic-mla-attention")
def _deterministic_mla(s: Settings, rule: RuleSpec) -> Hit | None:
    """Deterministic inference on an absorbed-MLA (DeepSeek-family) checkpoint takes only the
    attention backends with a deterministic radix path (SGLang's is_deepseek_model list, per
    pin). A backend left unset is SGLang's pick by GPU (one of those); a backend outside the
    deterministic choices is X291's."""
    m = s.model
    backend = s.text("attention_backend")
    if m is None or backend is None or not (s.on("enable_deterministic_inference") or s.on("rl_on_policy_target")):
        return None
    if m.architecture not in (rule.param("architectures", s.version) or ()):
        return None
    allowed = list(rule.param("radix_backends", s.version) or ())
    deterministic = rule.param("deterministic_backends", s.version) or ()
    broken = backend in deterministic and backend not in allowed
    return first_broken([check(broken, None, ("attention_backend", "enable_deterministic_inference"),
                               backend=backend, arch=m.architecture, allowed=allowed)])


@predicate("dual-chunk-attention-backend")
def _dual_chunk(s: Settings, rule: RuleSpec) -> Hit | None:
    """A checkpoint with ``dual_chunk_attention_config`` (Qwen2.5's 1M-token models) runs only on
    SGLang's dual_chunk_flash_attn backend; unset, ServerArgs picks it itself."""
    m = s.model
    backend = s.text("attention_backend")
    if m is None or backend is None or m.text("dual_chunk_attention_config") is None:
        return None
    return first_broken([check(backend != "dual_chunk_flash_attn", None, ("attention_backend",), backend=backend)])
