"""History: a flag this pin lacks but another committed pin has (F007), and its successor.

The successor comes, in order, from the curated renames, the same dest under another
option string, or the replacement SGLang's own deprecation named.
"""

from __future__ import annotations

from generator.sglang.catalog import Action, Catalog, version_key
from generator.sglang.flags.args import Arg
from generator.sglang.flags.context import Context
from generator.sglang.flags.suggest import report_unknown_spelling
from generator.sglang.flags.text import dashed, did_you_mean, q


def successors(ctx: Context, old: Action, written: str) -> list[str]:
    """What ``old`` (an action of another pin) became in this pin, when that can be derived.

    In order: the curated renames (a flag split in two names both halves), the same
    dest under another option string, the replacement SGLang's deprecation named.
    """
    cat = ctx.catalog
    for opt in (written, *old.option_strings):
        found = [a.canonical for a in map(cat.by_option, ctx.tables.renames.get(opt, ()))
                 if a is not None]
        if found:
            return list(dict.fromkeys(found))
    same_dest = ctx.dest_action(cat, old.dest)
    if same_dest is not None:
        return [same_dest.canonical]
    if old.deprecated and old.deprecated.replacement:
        replacement = cat.by_option(old.deprecated.replacement)
        if replacement is not None:
            return [replacement.canonical]
    return []


def report_not_in_pin(ctx: Context, arg: Arg, written: str, other: Catalog, old: Action,
                      how: str = "") -> None:
    """F007: the flag exists in another committed pin but not in this one."""
    pin = ctx.catalog.pin
    new = successors(ctx, old, written)
    here, there = version_key(ctx.catalog.version), version_key(other.version)
    if here is not None and there is not None and there > here:
        what = f"'{written}' is not in SGLang {pin} (it appears in SGLang {other.pin})"
    else:
        what = f"'{written}' was removed in SGLang {pin} (it exists in SGLang {other.pin})"
    if how:
        what += f", and {how}"
    if new:
        use = f"use '{new[0]}'" if len(new) == 1 else f"use {q(new[:-1])} or '{new[-1]}'"
        ctx.diags.error(arg.pos, "F007", f"{what}; {use}", did_you_mean(new))
    else:
        ctx.diags.error(arg.pos, "F007",
                        f"{what}; no successor is known: remove it")


def report_unknown(ctx: Context, arg: Arg, name: str) -> None:
    """F007 when another pin has the flag, else F001 with foreign spellings or close matches."""
    for other in ctx.others_nearest_first():
        old = other.by_option(name) or other.by_option(dashed(name))
        if old is not None:
            report_not_in_pin(ctx, arg, name, other, old)
            return
    report_unknown_spelling(ctx, arg, name)
