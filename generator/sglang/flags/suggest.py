"""Suggestions for a flag or choice that matches nothing: other servers' spellings, then
the closest catalog flags by spelling distance; for a choice, case, a reviewed synonym, a
typing slip (sense.slip), then longer names that start with the word.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from generator.sglang.catalog import Action
from generator.sglang.flags.args import Arg
from generator.sglang.flags.context import Context
from generator.sglang.flags.text import dashed, did_you_mean, q
from generator.sglang.sense import holds_in_order, same_model, slip


def report_unknown_spelling(ctx: Context, arg: Arg, name: str) -> None:
    """F001 for a flag no pin has: another server's spelling mapped, or close matches."""
    pin = ctx.catalog.pin
    foreign = ctx.tables.foreign.get(name) or ctx.tables.foreign.get(dashed(name))
    if foreign is not None:
        target = ctx.dest_action(ctx.catalog, foreign.dest) if foreign.dest else None
        also = [a.canonical for a in (ctx.dest_action(ctx.catalog, d) for d in foreign.also)
                if a is not None]
        text = f"unknown flag '{name}': it is {foreign.server}'s spelling"
        if target is not None:
            text += f"; SGLang {pin} uses '{target.canonical}'"
            if also:
                text += f" and also needs {q(also)}"
        else:
            text += f"; SGLang {pin} has no such flag"
        if foreign.note:
            text += f" ({fill(ctx, foreign.note)})"
        if target is not None and target.deprecated is not None:
            text += (f"; '{target.canonical}' is deprecated in SGLang {pin} "
                     f"(SGLang: {target.deprecated.message})")
        hint = did_you_mean([target.canonical]) if target is not None else None
        ctx.diags.error(arg.pos, "F001", text, hint)
        return
    glued = glued_value(ctx, name)
    if glued is not None:
        option, value, action = glued
        ctx.diags.error(arg.pos, "F001", f"unknown flag '{name}' for SGLang {pin}: it is '{option}' and its value "
                        f"'{value}' run together; write '{option} {value}' (rendered as '{action.canonical} {value}')",
                        did_you_mean([f"{action.canonical} {value}"]))
        return
    close = close_matches(ctx, name)
    if close:
        fix = f"use '{close[0]}'" if len(close) == 1 else f"use one of {q(close)}"
    else:
        fix = "remove it (no SGLang flag is close to it)"
    ctx.diags.error(arg.pos, "F001", f"unknown flag '{name}' for SGLang {pin}: {fix}",
                    did_you_mean(close))


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _numeric(action: Action) -> str | None:
    """"int" or "float" when the action reads a number (0.5.23's context length reads '32768' too)."""
    if action.type in ("int", "float"):
        return action.type
    return "int" if (action.type or "").endswith("human_readable_int") else None


def glued_value(ctx: Context, name: str) -> tuple[str, str, Action] | None:
    """``--tp8``: a flag (a full option, an alias or an abbreviation argparse accepts) with its
    value run on: the option as written, the value, and the action; the longest option first.
    The value must be one the action takes: a number for an int or float flag, or a choice."""
    if not name.startswith("--"):
        return None
    for cut in range(len(name) - 1, 2, -1):
        option, value = name[:cut], name[cut:]
        action = ctx.catalog.by_option(option)
        if action is None:
            tuples = ctx.catalog.prefix_tuples(option)
            action = tuples[0][0] if len(tuples) == 1 else None
        if action is None or not action.takes_value:
            continue
        if action.choices is not None:
            if value in action.choices:
                return option, value, action
        elif _numeric(action) and _NUMBER.fullmatch(value) and (_numeric(action) == "float" or "." not in value):
            return option, value, action
    return None


def fill(ctx: Context, note: str) -> str:
    """Replace ``{dest}`` placeholders in a note with this pin's canonical option string."""

    def sub(match: re.Match[str]) -> str:
        action = ctx.dest_action(ctx.catalog, match.group(1))
        return f"'{action.canonical}'" if action else f"'--{match.group(1).replace('_', '-')}'"

    return re.sub(r"\{([a-z0-9_]+)\}", sub, note)


def close_matches(ctx: Context, name: str) -> list[str]:
    """Canonical names of the catalog flags ``name`` may be a misspelling of, best first: those
    a typing slip away (sense.slip, the closest only: ``--contex-length``), else
    those holding all of its words in order with one or two more, fewest first (a word left
    out: ``--enable-gc`` -> ``--enable-cudagraph-gc``). Never a neighbour by likeness alone
    (``--enable-gc`` is not ``--enable-trace``), and never a flag of other numbers (--fp4-* is
    not --fp8-*)."""
    # Compared without the leading dashes every option shares (they made '--tp8' look like '--dtype').
    bare = {o.lstrip("-"): o for o in ctx.catalog.option_strings if same_model(name, o)}

    def shown(opt: str) -> str:
        action = ctx.catalog.by_option(opt)
        assert action is not None
        return opt if opt == action.negative else action.canonical

    probes = list(dict.fromkeys((name.lstrip("-"), dashed(name).lstrip("-"))))
    near: dict[str, int] = {}
    for probe in probes:
        for found, opt in bare.items():
            edits = slip(probe, found)
            if edits is not None:
                near[shown(opt)] = min(edits, near.get(shown(opt), edits))
    if near:
        best = min(near.values())
        return [s for s in sorted(near, key=lambda s: (near[s], s)) if near[s] == best][:3]
    held: dict[str, int] = {}
    for probe in probes:
        words = [w for w in probe.split("-") if w]
        for found, opt in bare.items():
            theirs = [w for w in found.split("-") if w]
            extra = len(theirs) - len(words)
            if words and 0 < extra <= 2 and holds_in_order(theirs, words):
                held[shown(opt)] = min(extra, held.get(shown(opt), extra))
    return sorted(held, key=lambda s: (held[s], s))[:3]


def _fold(name: str) -> str:
    return name.lower().replace("-", "_")


def choice_hint(word: str, choices: Sequence[str],
                synonyms: Mapping[str, str] | None = None) -> str | None:
    """Suggest a choice by meaning first, then by spelling, never another model's.

    In order: the same letters in another case or with '-' for '_' (``deepseek_r1``), the
    reviewed synonym of that meaning (choice-synonyms.yaml: ``flash_attn`` -> ``fa3``), the
    choices a typing slip away (:func:`generator.sglang.sense.slip`, the closest only:
    ``lfoat16`` -> ``float16``, not ``bfloat16``), else the longer names whose leading words it is
    (``trtllm`` -> ``trtllm_mla``), never one that merely holds it (``thinking`` is a word of
    another model's ``granite_thinking_parser``). Spelling alone
    proposes no other thing: ``nvfp4`` is not ``mxfp4``, ``lfm3`` not ``llama3``, and a
    candidate carrying other numbers than the word names another model or version
    (``minimax-m2``/``minimax-m3``, ``quark``/``quark_int4fp8_moe``): never suggested.
    """
    lower = word.lower()
    for choice in choices:
        if choice.lower() == lower:
            return f"did you mean '{choice}'?"
    folded = _fold(word)
    for choice in choices:
        if _fold(choice) == folded:
            return f"did you mean '{choice}'?"
    meant = (synonyms or {}).get(lower)
    if meant is not None and meant in choices:
        return did_you_mean([meant])  # a reviewed meaning: spelling neighbours would only blur it
    if not folded:
        return None
    candidates = [c for c in choices if same_model(word, c)]
    slips = {c: slip(folded, _fold(c)) for c in candidates}
    near = {c: d for c, d in slips.items() if d is not None}
    if near:
        best = min(near.values())
        return did_you_mean([c for c in candidates if near.get(c) == best][:3])
    # the leading words of a longer name; not a name that merely holds the word ('thinking'
    # is one word of 'granite_thinking_parser', another model's parser)
    longer = [c for c in candidates if _fold(c).startswith(folded + "_")]
    return did_you_mean(longer[:3]) if longer else None


def choice_elsewhere(ctx: Context, action: Action, word: str) -> str | None:
    """Where ``word`` is a choice if not of ``action`` in this pin: the same setting in another
    committed pin, or another flag of this pin (a tool-call parser given as reasoning parser)."""
    for other in ctx.others_nearest_first():
        there = ctx.dest_action(other, action.dest)
        if there is not None and there.choices is not None and word in there.choices:
            return f"'{word}' is a choice of '{there.canonical}' in SGLang {other.pin}, not in {ctx.catalog.pin}"
    if word.lower() in ctx.tables.synonyms.get(action.dest, {}):
        return None  # the reviewed synonym says what it means here
    kind = action.dest.rsplit("_", 1)[-1]  # parser, backend, dtype: flags of one kind share choices
    for sibling in ctx.catalog.actions:
        if sibling is not action and sibling.choices is not None and word in sibling.choices \
                and sibling.dest != action.dest and sibling.dest.rsplit("_", 1)[-1] == kind:
            return f"'{word}' is a choice of '{sibling.canonical}', not of '{action.canonical}'"
    return None
