"""Suggestions for a flag or choice that matches nothing: other servers' spellings, then
the closest catalog flags by spelling distance; for a choice, case, longer names, difflib.
"""

from __future__ import annotations

import difflib
import re
from typing import Mapping, Sequence

from generator.sglang.flags.args import Arg
from generator.sglang.flags.context import Context
from generator.sglang.flags.text import dashed, did_you_mean, q


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
    close = close_matches(ctx, name)
    if close:
        fix = f"use '{close[0]}'" if len(close) == 1 else f"use one of {q(close)}"
    else:
        fix = "remove it (no SGLang flag is close to it)"
    ctx.diags.error(arg.pos, "F001", f"unknown flag '{name}' for SGLang {pin}: {fix}",
                    did_you_mean(close))


def fill(ctx: Context, note: str) -> str:
    """Replace ``{dest}`` placeholders in a note with this pin's canonical option string."""

    def sub(match: re.Match[str]) -> str:
        action = ctx.dest_action(ctx.catalog, match.group(1))
        return f"'{action.canonical}'" if action else f"'--{match.group(1).replace('_', '-')}'"

    return re.sub(r"\{([a-z0-9_]+)\}", sub, note)


def close_matches(ctx: Context, name: str) -> list[str]:
    """Canonical names of the catalog flags closest to ``name`` (difflib), best first."""
    options = ctx.catalog.option_strings
    scored: dict[str, float] = {}
    for probe in dict.fromkeys((name, dashed(name))):
        for opt in difflib.get_close_matches(probe, options, n=5, cutoff=0.6):
            action = ctx.catalog.by_option(opt)
            assert action is not None
            shown = opt if opt == action.negative else action.canonical
            score = difflib.SequenceMatcher(None, probe, opt).ratio()
            scored[shown] = max(score, scored.get(shown, 0.0))
    if not scored:
        return []
    # SGLang's flags share long prefixes, so weak matches are noise next to a close one.
    best = max(scored.values())
    ranked = sorted(scored, key=lambda s: -scored[s])
    return [s for s in ranked if scored[s] >= best - 0.1][:3]


def choice_hint(word: str, choices: Sequence[str],
                synonyms: Mapping[str, str] | None = None) -> str | None:
    """Suggest a choice: same letters in another case, else the reviewed synonym of that
    meaning (choice-synonyms.yaml: flash_attn -> fa3), longer names, then difflib.

    "qwen3" as a tool-call parser means "qwen3_coder" more often than "qwen".
    """
    lower = word.lower()
    for choice in choices:
        if choice.lower() == lower:
            return f"did you mean '{choice}'?"
    meant = (synonyms or {}).get(lower)
    by_meaning = [meant] if meant is not None and meant in choices else []
    longer = [c for c in choices if c.lower().startswith(lower)] if lower else []
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return did_you_mean(list(dict.fromkeys(by_meaning + longer[:2] + close)))
