"""History: a flag this pin lacks but another committed pin has (F007), and its successor.

The successor comes, in order, from the curated renames, the same dest under another
option string, or the replacement SGLang's own deprecation named.
"""

from __future__ import annotations

from generator.sglang.catalog import Action, Catalog, version_key
from generator.sglang.flaghistory import history_path, is_before, load_history, past_flag
from generator.sglang.flags.args import Arg
from generator.sglang.flags.context import Context
from generator.sglang.flags.suggest import report_unknown_spelling
from generator.sglang.flags.text import dashed, did_you_mean, q
from generator.sglang.sense import opposite_sense


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
    inverted = [n for n in new if opposite_sense(written, n)]
    if inverted:
        # --no-x of one pin is --x of another: "use --x" would turn on what was meant off
        target = ctx.catalog.by_option(inverted[0])
        if target is not None and not target.takes_value:
            fix = f"leave '{inverted[0]}' out (off by default)" if not target.default else \
                f"nothing: SGLang {pin} has '{inverted[0]}' on by default and no flag to turn it off"
            ctx.diags.error(arg.pos, "F007", f"{what}; its successor '{inverted[0]}' means the opposite, so what "
                            f"'{written}' asks for is: {fix}")
        else:
            ctx.diags.error(arg.pos, "F007", f"{what}; its successor '{inverted[0]}' means the opposite: give it "
                            "the opposite value")
    elif new:
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
    if _report_from_history(ctx, arg, name):
        return
    report_unknown_spelling(ctx, arg, name)


def _report_from_history(ctx: Context, arg: Arg, name: str) -> bool:
    """F007 for a flag of a release gen has no catalog of (the history file), with the
    successor SGLang's own deprecation text named."""
    history = load_history(history_path(ctx.catalog.source_file))
    past = None
    if history is not None:
        past = past_flag(history, name) or past_flag(history, dashed(name))
    if past is None:
        return False
    pin = ctx.catalog.pin
    if is_before(pin, past.first):
        what = f"'{name}' is not in SGLang {pin} (it appears in SGLang {past.first})"
    else:
        removed = f"removed in SGLang {past.gone_from}" if past.gone_from else "not in this pin"
        what = (f"'{name}' was {removed} (it exists in SGLang {past.first}..{past.last})"
                if past.first != past.last else
                f"'{name}' was {removed} (it exists in SGLang {past.first})")
    hint = None
    if past.successor:
        what += f"; SGLang said: use {past.successor}"
        flag = ctx.catalog.by_option(past.successor.split()[0])
        if flag is not None:
            hint = did_you_mean([past.successor.replace(past.successor.split()[0], flag.canonical, 1)])
    else:
        what += "; no successor is known: remove it"
    ctx.diags.error(arg.pos, "F007", what, hint)
    return True
