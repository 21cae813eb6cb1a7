"""Resolve every SGLang flag a manifest produces against the catalog of the host's pin.

Each written flag is matched the way SGLang's own argparse parser would match it (exact
option string first, then a unique ``allow_abbrev`` prefix), and every finding becomes a
Diagnostic: unknown (with the closest catalog flags and other servers' spellings mapped),
ambiguous, abbreviated, aliased, removed in this pin, deprecated, bad choice, bad type,
wrong number of values, or given twice. The output always uses the full canonical option
string, so the server never relies on ``allow_abbrev``.

The concepts live in their own modules: ``resolve`` (which action a written name means,
including spelling variants), ``history`` (flags of other pins and their successors),
``suggest`` (did-you-mean for flags and choices), ``deprecation`` and ``values`` (argv
words, types, choices). This module runs them in order for each flag.

Codes: errors F001 unknown, F002 ambiguous prefix, F003 bad choice, F004 bad type,
F005 wrong number of values, F006 value given to a switch (also `--switch=VALUE`, which argparse
refuses whatever the value), F007 not in this pin,
F008 given twice with different values, F009 flag that cannot run a server (``--help``), F010 deprecated
flag SGLang refuses; warnings F101 abbreviation, F102 alias, F103 underscore spelling,
F104 deprecated, F106 given twice with the same value.
"""

from __future__ import annotations

from typing import Sequence

from generator.errors import Diagnostics
from generator.sglang.catalog import Action, Catalog, FlagTables
from generator.sglang.flags.args import Arg, ArgValue, CheckedArg
from generator.sglang.flags.context import Context
from generator.sglang.flags.deprecation import undeprecate
from generator.sglang.flags.resolve import resolve
from generator.sglang.flags.suggest import choice_elsewhere
from generator.sglang.flags.text import who
from generator.sglang.flags.values import render, stored_value
from generator.sglang.secret_flags import is_secret_action

__all__ = ["Arg", "ArgValue", "CheckedArg", "check_args"]


def check_args(catalog: Catalog, args: Sequence[Arg], diags: Diagnostics,
               other_catalogs: Sequence[Catalog] = (), tables: FlagTables | None = None) -> tuple[CheckedArg, ...]:
    """Resolve ``args`` against ``catalog``; return canonical argv groups in input order.

    Every finding is recorded in ``diags``; a flag with an error is left out of the
    result. ``other_catalogs`` (the other committed pins) let an unknown flag be
    reported as removed or renamed instead of merely unknown. ``tables``: the catalog's
    flag tables when the caller has loaded them already (once per host).
    """
    ctx = Context(catalog, diags, other_catalogs, tables)
    first_by_dest: dict[str, tuple[Arg, Action, tuple[str, ...]]] = {}
    out: list[CheckedArg] = []
    for arg in args:
        answer = _check(ctx, arg, first_by_dest)
        if answer is not None:
            out.append(CheckedArg(answer[0], answer[1], arg.pos))
    return tuple(out)


def _check(ctx: Context, arg: Arg, first_by_dest: dict[str, tuple[Arg, Action, tuple[str, ...]]]
           ) -> tuple[Action, tuple[str, ...]] | None:
    """Check one flag: its action and argv words, or None after a finding that drops it."""
    resolved = resolve(ctx, arg)
    if resolved is None:
        return None
    if is_secret_action(resolved.action):  # its value is quoted in no finding, before or after
        value = resolved.value
        ctx.diags.hide(str(v) for v in (value if isinstance(value, tuple) else (value,))
                       if isinstance(v, (str, int, float)) and not isinstance(v, bool))
    # A structured field's dest means little to the reader of a flag message: name the flag.
    label = resolved.action.canonical if arg.by_dest else arg.name
    resolved = undeprecate(ctx, resolved, label, arg.pos)
    if resolved is None:
        return None
    words = render(ctx.diags, resolved, label, arg.pos, ctx.tables.synonyms,
                   lambda action, word: choice_elsewhere(ctx, action, word))
    if words is None or _given_twice(ctx.diags, resolved.action, words, arg, first_by_dest):
        return None
    return resolved.action, words


def _given_twice(diags: Diagnostics, action: Action, words: tuple[str, ...], arg: Arg,
                 first_by_dest: dict[str, tuple[Arg, Action, tuple[str, ...]]]) -> bool:
    """True (drop ``arg``) when another flag of this service already set ``action``'s dest:
    F008 for another value, F106 (a warning) for the value the first one gave; else remember it.
    """
    if action.kind in ("append", "count"):
        return False
    # argparse keeps the last occurrence silently; two writers of one setting is a bug,
    # unless both say the same: then SGLang gets what either one alone would give it.
    seen = first_by_dest.get(action.dest)
    if seen is None:
        first_by_dest[action.dest] = (arg, action, words)
        return False
    first = seen[0]
    same = stored_value(seen[1], seen[2]) == stored_value(action, words)
    if first.name == arg.name and first.by_dest == arg.by_dest:
        text = f"{who(arg)} is given twice, first at {first.pos}"
    else:
        text = f"{who(arg)} sets '{action.canonical}' again: {who(first)} already set it at {first.pos}"
    if same:
        diags.warning(arg.pos, "F106", f"{text}, to the same value; this one is left out: keep one")
    else:
        diags.error(arg.pos, "F008", f"{text}, to another value (SGLang would take the last one); keep one")
    return True
