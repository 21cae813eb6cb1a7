"""Resolution: which catalog action a written flag means, as SGLang's argparse would match it.

Exact option string first (an alias warns F102), then a unique ``allow_abbrev`` prefix
(F101; ambiguous F002), then the spelling with underscores (F103); a structured field
names its action by dest. What matches nothing goes to the history (another pin has it)
and the suggestions.
"""

from __future__ import annotations

from generator.errors import Position
from generator.sglang.catalog import Action
from generator.sglang.flags.args import Arg, ArgValue, Resolved
from generator.sglang.flags.context import Context
from generator.sglang.flags.history import report_not_in_pin, report_unknown
from generator.sglang.flags.text import closest, dashed, describe, did_you_mean
from generator.sglang.flags.values import rendered_as


def resolve(ctx: Context, arg: Arg) -> Resolved | None:
    """The action ``arg`` means, recording warnings; None after an error."""
    if arg.by_dest:
        return _resolve_dest(ctx, arg)
    name, value = arg.name, arg.value
    explicit: str | None = None
    if name.startswith("--") and "=" in name:
        # argparse splits "--x=v" at "=" before matching the option part.
        name, _, explicit = name.partition("=")
        if value is not True and value is not None:
            ctx.diags.error(
                arg.pos, "F005",
                f"'{arg.name}' carries a value after '=' and another one ({describe(value)}); "
                f"give the value once",
            )
            return None
        value = explicit
    resolved = _resolve_written(ctx, arg, name, value)
    if resolved is not None and explicit is not None and not resolved.action.takes_value:
        _switch_with_explicit_value(ctx, arg, name, resolved, explicit)
        return None
    return resolved


def _switch_with_explicit_value(ctx: Context, arg: Arg, name: str, resolved: Resolved,
                                explicit: str) -> None:
    """F006: ``--switch=VALUE``. argparse refuses any explicit value for an action that takes
    none (store_true/false/const, count, BooleanOptional and its ``--no-`` form, SGLang's
    deprecated switches, help), whatever the value: "ignored explicit argument 'True'", exit 2.
    """
    action = resolved.action
    shown = action.negative if resolved.matched == action.negative else action.canonical
    if "_" in name and ctx.catalog.by_option(name) is None and not ctx.catalog.prefix_tuples(name):
        said = f"unrecognized arguments: {arg.name}"  # the underscore spelling matches no option
    else:
        said = f"argument {shown}: ignored explicit argument {explicit!r}"
    ctx.diags.error(
        arg.pos, "F006",
        f"'{arg.name}' gives a value to a switch: SGLang's parser refuses a value after '=' "
        f"on '{shown}', whatever it is, and exits 2 ({said}); write '{shown}' alone to pass it, "
        f"or leave it out",
        did_you_mean([shown]),
    )


def _resolve_written(ctx: Context, arg: Arg, name: str, value: ArgValue) -> Resolved | None:
    """The action the option part ``name`` of ``arg`` means (warnings recorded); None after an error."""
    cat = ctx.catalog
    action = cat.by_option(name)
    if action is not None:
        resolved = Resolved(action, name, value)
        if name not in (action.canonical, action.negative):
            ctx.diags.warning(
                arg.pos, "F102",
                f"'{name}' is an alias of '{action.canonical}'; {rendered_as(resolved)}",
                did_you_mean([action.canonical]),
            )
        return resolved
    tuples = cat.prefix_tuples(name)
    if tuples and _renamed_into_prefix(ctx, arg, name, tuples):
        return None
    if len(tuples) == 1:
        action, matched, _ = tuples[0]
        of = f"'{matched}'" if matched == action.canonical else (
            f"'{matched}', an alias of '{action.canonical}'")
        # The hint spells out the form written; the message names what is rendered, which
        # differs for a switch written false ("--no-enable-ov: false" is "--enable-overlap").
        shown = action.negative if matched == action.negative else action.canonical
        resolved = Resolved(action, matched, value)
        ctx.diags.warning(
            arg.pos, "F101",
            f"'{name}' is an abbreviation of {of}; {rendered_as(resolved)} "
            f"(abbreviations break when SGLang adds a flag with the same prefix)",
            did_you_mean([shown]),
        )
        return resolved
    if len(tuples) > 1:
        # argparse's own wording: "ambiguous option: X could match A, B".
        matches = ", ".join(opt for _, opt, _ in sorted(tuples, key=lambda t: t[1]))
        candidates = list(dict.fromkeys(a.canonical for a, _, _ in tuples))
        ctx.diags.error(
            arg.pos, "F002",
            f"ambiguous option: {name} could match {matches}; write the full flag",
            did_you_mean(closest(name, candidates)),
        )
        return None
    if "_" in name:
        underscored = _resolve_underscored(ctx, name, value, arg.pos)
        if underscored is not None:
            return underscored
    report_unknown(ctx, arg, name)
    return None


def _renamed_into_prefix(ctx: Context, arg: Arg, name: str,
                         tuples: list[tuple[Action, str, str | None]]) -> bool:
    """F007 when a full flag of another pin is, in this pin, only a prefix of other flags.

    argparse would reject it as ambiguous, or silently read it as a different
    setting; either way the real story is that this pin dropped the flag.
    """
    for other in ctx.others_nearest_first():
        old = other.by_option(name)
        if old is None:
            continue
        if len(tuples) == 1 and tuples[0][0].dest == old.dest:
            return False  # the abbreviation still means the same setting: F101 only
        if len(tuples) > 1:
            matches = ", ".join(sorted(opt for _, opt, _ in tuples))
            how = f"in SGLang {ctx.catalog.pin} it is an ambiguous prefix of {matches}"
        else:
            how = (f"SGLang {ctx.catalog.pin} would read it as an abbreviation of "
                   f"'{tuples[0][1]}'")
        report_not_in_pin(ctx, arg, name, other, old, how)
        return True
    return False


def _resolve_underscored(ctx: Context, name: str, value: ArgValue, pos: Position) -> Resolved | None:
    """``--tp_size``: argparse rejects it, but the dashed spelling is meant; warn F103."""
    spelled = dashed(name)
    action = ctx.catalog.by_option(spelled)
    matched = spelled
    if action is None:
        tuples = ctx.catalog.prefix_tuples(spelled)
        if len(tuples) != 1:
            return None
        action, matched, _ = tuples[0]
    shown = action.negative if matched == action.negative else action.canonical
    resolved = Resolved(action, matched, value)
    ctx.diags.warning(
        pos, "F103",
        f"'{name}' is written with underscores, which SGLang's parser does not accept; "
        f"{rendered_as(resolved)}",
        did_you_mean([shown]),
    )
    return resolved


def _resolve_dest(ctx: Context, arg: Arg) -> Resolved | None:
    """A structured field addresses its action by dest (``tp_size``)."""
    action = ctx.dest_action(ctx.catalog, arg.name)
    if action is not None:
        return Resolved(action, action.canonical, arg.value)
    for other in ctx.others_nearest_first():
        old = ctx.dest_action(other, arg.name)
        if old is not None:
            report_not_in_pin(ctx, arg, arg.name, other, old)
            return None
    ctx.diags.error(
        arg.pos, "F001",
        f"setting '{arg.name}' has no SGLang flag in SGLang {ctx.catalog.pin} "
        f"(no action stores dest '{arg.name}'); remove it or use a pin that has it",
    )
    return None
