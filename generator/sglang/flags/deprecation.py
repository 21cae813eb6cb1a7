"""Deprecation: F104 for a deprecated flag (rendered as its successor when SGLang maps it
one-to-one), F010 for one SGLang refuses."""

from __future__ import annotations

from generator.errors import Position
from generator.sglang.flags.args import Resolved
from generator.sglang.flags.context import Context
from generator.sglang.flags.text import did_you_mean
from generator.sglang.flags.values import rendered_as
from generator.sglang.sense import opposite_sense


def undeprecate(ctx: Context, resolved: Resolved, written: str, pos: Position) -> Resolved | None:
    """F104 for a deprecated action; render its successor when SGLang maps it one-to-one.

    A deprecation SGLang enforces (``fatal``: the parser exits) is error F010 instead.
    """
    action = resolved.action
    dep = action.deprecated
    if dep is None and action.kind != "deprecated":
        return resolved
    pin = ctx.catalog.pin
    replacement = dep.replacement if dep else None
    target = ctx.catalog.by_option(replacement) if replacement else None
    use = ""
    if target is not None and opposite_sense(written, target.canonical):
        use = f"; its successor '{target.canonical}' means the opposite (invert the value, or leave it out)"
        target = None  # never rendered as, nor suggested: it would do the opposite
    elif target is not None:
        use = f"; use '{target.canonical}' instead"
    elif replacement:
        use = f"; use '{replacement}' instead"
    said = f" (SGLang: {dep.message})" if dep and dep.message else ""
    hint = did_you_mean([target.canonical]) if target is not None else None
    if dep is not None and dep.fatal:
        ctx.diags.error(pos, "F010",
                         f"'{written}' is retired in SGLang {pin}, which refuses it{use}{said}",
                         hint)
        return None
    one_to_one = (
        target is not None and target is not action and target.deprecated is None
        and target.kind != "deprecated" and target.dest == action.dest
        and target.takes_value == action.takes_value
    )
    if one_to_one:
        assert target is not None
        successor = Resolved(target, target.canonical, resolved.value)
        ctx.diags.warning(pos, "F104", f"'{written}' is deprecated in SGLang {pin}; {rendered_as(successor)}",
                          hint)
        return successor
    ctx.diags.warning(pos, "F104", f"'{written}' is deprecated in SGLang {pin}{use}{said}",
                       hint)
    return resolved
