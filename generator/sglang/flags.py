"""Resolve every SGLang flag a manifest produces against the catalog of the host's pin.

Each written flag is matched the way SGLang's own argparse parser would match it (exact
option string first, then a unique ``allow_abbrev`` prefix), and every finding becomes a
Diagnostic: unknown (with the closest catalog flags and other servers' spellings mapped),
ambiguous, abbreviated, aliased, removed in this pin, deprecated, bad choice, bad type,
wrong number of values, or given twice. The output always uses the full canonical option
string, so the server never relies on ``allow_abbrev``.

Codes: errors F001 unknown, F002 ambiguous prefix, F003 bad choice, F004 bad type,
F005 wrong number of values, F006 value given to a switch, F007 not in this pin,
F008 given twice, F009 flag that cannot run a server (``--help``), F010 deprecated
flag SGLang refuses; warnings F101 abbreviation, F102 alias, F103 underscore spelling,
F104 deprecated.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Sequence

from generator.sglang.catalog import Action, Catalog, FlagTables, load_flag_tables, version_key
from generator.errors import Diagnostics, Position

ArgValue = bool | int | float | str | tuple[str | int | float, ...] | None

# argparse's _negative_number_matcher: such words are values, any other "-x" is an option.
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_SWITCH_WORDS = {"true": True, "false": False}


@dataclass(frozen=True)
class Arg:
    """One flag as the manifest wrote it, before checking."""

    name: str  # as written: "--speculative-algo", or a dest like "tp_size" when by_dest
    value: ArgValue  # True for a bare switch; False to turn a switch off; tuple for nargs
    pos: Position  # where it was written
    by_dest: bool = False  # structured manifest fields address actions by dest, stable across pins


@dataclass(frozen=True)
class CheckedArg:
    """A flag resolved to its catalog action and rendered as argv words.

    ``words`` is empty when the value turns the flag off (``false`` for a store_true)
    or is None: nothing is passed and SGLang keeps its default.
    """

    action: Action
    words: tuple[str, ...]  # e.g. ("--tensor-parallel-size", "4")
    pos: Position


@dataclass(frozen=True)
class _Resolved:
    """Which action a written flag means, which of its strings matched, and the value."""

    action: Action
    matched: str  # the option string argparse would match (alias, "--no-x", ...)
    value: ArgValue


def _q(items: Sequence[str]) -> str:
    """Quote and join flags for a message: 'a', 'b'."""
    return ", ".join(f"'{i}'" for i in items)


def _did_you_mean(options: Sequence[str]) -> str | None:
    """The hint text for one or more suggested spellings."""
    if not options:
        return None
    if len(options) == 1:
        return f"did you mean '{options[0]}'?"
    return "did you mean " + ", ".join(f"'{o}'" for o in options[:-1]) + f" or '{options[-1]}'?"


def _dashed(name: str) -> str:
    """``--tp_size`` -> ``--tp-size``: the leading dashes stay, underscores become dashes."""
    stripped = name.lstrip("-")
    return name[: len(name) - len(stripped)] + stripped.replace("_", "-")


def _describe(value: ArgValue) -> str:
    """A value as the user wrote it, for messages (never a Python repr like True)."""
    if isinstance(value, tuple):
        return "[" + ", ".join(_word(v) for v in value) + "]"
    if value is None:
        return "null"
    return _word(value)


def _word(value: object) -> str:
    """One argv word, written the way argparse's type functions read it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    # str() of a float is the shortest round-trip form ("0.1", "1e-05"): float() reads it back.
    return str(value)


def _who(arg: Arg) -> str:
    """How a message names an argument: the flag as written, or the manifest setting."""
    return f"setting '{arg.name}'" if arg.by_dest else f"'{arg.name}'"


def _closest(name: str, candidates: Sequence[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates``, most similar to ``name`` first (difflib ratio)."""
    ranked = sorted(candidates,
                    key=lambda c: -difflib.SequenceMatcher(None, name, c).ratio())
    return ranked[:n]


class _Checker:
    """One run of check_args: the catalog, the lookup tables and the findings so far."""

    def __init__(self, catalog: Catalog, diags: Diagnostics, others: Sequence[Catalog]):
        self.catalog = catalog
        self.diags = diags
        self.others = [c for c in others if c.pin != catalog.pin]
        self.tables: FlagTables = load_flag_tables(catalog.source_file)

    # ----- resolving the written name to an action -----

    def resolve(self, arg: Arg) -> _Resolved | None:
        """The action ``arg`` means, recording warnings; None after an error."""
        if arg.by_dest:
            return self._resolve_dest(arg)
        name, value = arg.name, arg.value
        if name.startswith("--") and "=" in name:
            # argparse splits "--x=v" at "=" before matching the option part.
            name, _, explicit = name.partition("=")
            if value is not True and value is not None:
                self.diags.error(
                    arg.pos, "F005",
                    f"'{arg.name}' carries a value after '=' and another one ({_describe(value)}); "
                    f"give the value once",
                )
                return None
            value = explicit
        cat = self.catalog
        action = cat.by_option(name)
        if action is not None:
            if name not in (action.canonical, action.negative):
                self.diags.warning(
                    arg.pos, "F102",
                    f"'{name}' is an alias of '{action.canonical}'; "
                    f"rendered as '{action.canonical}'",
                    _did_you_mean([action.canonical]),
                )
            return _Resolved(action, name, value)
        tuples = cat.prefix_tuples(name)
        if tuples and self._renamed_into_prefix(arg, name, tuples):
            return None
        if len(tuples) == 1:
            action, matched, _ = tuples[0]
            of = f"'{matched}'" if matched == action.canonical else (
                f"'{matched}', an alias of '{action.canonical}'")
            shown = action.negative if matched == action.negative else action.canonical
            self.diags.warning(
                arg.pos, "F101",
                f"'{name}' is an abbreviation of {of}; rendered as '{shown}' "
                f"(abbreviations break when SGLang adds a flag with the same prefix)",
                _did_you_mean([shown]),
            )
            return _Resolved(action, matched, value)
        if len(tuples) > 1:
            # argparse's own wording: "ambiguous option: X could match A, B".
            matches = ", ".join(opt for _, opt, _ in sorted(tuples, key=lambda t: t[1]))
            candidates = list(dict.fromkeys(a.canonical for a, _, _ in tuples))
            self.diags.error(
                arg.pos, "F002",
                f"ambiguous option: {name} could match {matches}; write the full flag",
                _did_you_mean(_closest(name, candidates)),
            )
            return None
        if "_" in name:
            resolved = self._resolve_underscored(name, value, arg.pos)
            if resolved is not None:
                return resolved
        self._report_unknown(arg, name)
        return None

    def _renamed_into_prefix(self, arg: Arg, name: str,
                             tuples: list[tuple[Action, str, str | None]]) -> bool:
        """F007 when a full flag of another pin is, in this pin, only a prefix of other flags.

        argparse would reject it as ambiguous, or silently read it as a different
        setting; either way the real story is that this pin dropped the flag.
        """
        for other in self._others_nearest_first():
            old = other.by_option(name)
            if old is None:
                continue
            if len(tuples) == 1 and tuples[0][0].dest == old.dest:
                return False  # the abbreviation still means the same setting: F101 only
            if len(tuples) > 1:
                matches = ", ".join(sorted(opt for _, opt, _ in tuples))
                how = f"in SGLang {self.catalog.pin} it is an ambiguous prefix of {matches}"
            else:
                how = (f"SGLang {self.catalog.pin} would read it as an abbreviation of "
                       f"'{tuples[0][1]}'")
            self._report_not_in_pin(arg, name, other, old, how)
            return True
        return False

    def _resolve_underscored(self, name: str, value: ArgValue, pos: Position) -> _Resolved | None:
        """``--tp_size``: argparse rejects it, but the dashed spelling is meant; warn F103."""
        dashed = _dashed(name)
        action = self.catalog.by_option(dashed)
        matched = dashed
        if action is None:
            tuples = self.catalog.prefix_tuples(dashed)
            if len(tuples) != 1:
                return None
            action, matched, _ = tuples[0]
        shown = action.negative if matched == action.negative else action.canonical
        self.diags.warning(
            pos, "F103",
            f"'{name}' is written with underscores, which SGLang's parser does not accept; "
            f"rendered as '{shown}'",
            _did_you_mean([shown]),
        )
        return _Resolved(action, matched, value)

    def _dest_action(self, catalog: Catalog, dest: str) -> Action | None:
        """The action for ``dest`` in ``catalog``, trying the dest's other names across pins."""
        for candidate in self.tables.dest_names(dest):
            action = catalog.by_dest(candidate)
            if action is not None:
                return action
        return None

    def _resolve_dest(self, arg: Arg) -> _Resolved | None:
        """A structured field addresses its action by dest (``tp_size``)."""
        action = self._dest_action(self.catalog, arg.name)
        if action is not None:
            return _Resolved(action, action.canonical, arg.value)
        for other in self._others_nearest_first():
            old = self._dest_action(other, arg.name)
            if old is not None:
                self._report_not_in_pin(arg, arg.name, other, old)
                return None
        self.diags.error(
            arg.pos, "F001",
            f"setting '{arg.name}' has no SGLang flag in SGLang {self.catalog.pin} "
            f"(no action stores dest '{arg.name}'); remove it or use a pin that has it",
        )
        return None

    # ----- unknown and removed flags -----

    def _others_nearest_first(self) -> list[Catalog]:
        """Other pins, older ones first (newest of them first), then newer ones (oldest first)."""
        here = version_key(self.catalog.version)

        def key(c: Catalog) -> tuple[object, ...]:
            v = version_key(c.version)
            if here is None or v is None:
                return (2, c.pin)
            if v < here:
                return (0, tuple(-p for p in v))
            return (1, v)

        return sorted(self.others, key=key)

    def _successors(self, old: Action, written: str) -> list[str]:
        """What ``old`` (an action of another pin) became in this pin, when that can be derived.

        In order: the curated renames (a flag split in two names both halves), the same
        dest under another option string, the replacement SGLang's deprecation named.
        """
        cat = self.catalog
        for opt in (written, *old.option_strings):
            found = [a.canonical for a in map(cat.by_option, self.tables.renames.get(opt, ()))
                     if a is not None]
            if found:
                return list(dict.fromkeys(found))
        same_dest = self._dest_action(cat, old.dest)
        if same_dest is not None:
            return [same_dest.canonical]
        if old.deprecated and old.deprecated.replacement:
            replacement = cat.by_option(old.deprecated.replacement)
            if replacement is not None:
                return [replacement.canonical]
        return []

    def _report_not_in_pin(self, arg: Arg, written: str, other: Catalog, old: Action,
                           how: str = "") -> None:
        """F007: the flag exists in another committed pin but not in this one."""
        pin = self.catalog.pin
        new = self._successors(old, written)
        here, there = version_key(self.catalog.version), version_key(other.version)
        if here is not None and there is not None and there > here:
            what = f"'{written}' is not in SGLang {pin} (it appears in SGLang {other.pin})"
        else:
            what = f"'{written}' was removed in SGLang {pin} (it exists in SGLang {other.pin})"
        if how:
            what += f", and {how}"
        if new:
            use = f"use '{new[0]}'" if len(new) == 1 else f"use {_q(new[:-1])} or '{new[-1]}'"
            self.diags.error(arg.pos, "F007", f"{what}; {use}", _did_you_mean(new))
        else:
            self.diags.error(arg.pos, "F007",
                             f"{what}; no successor is known: remove it")

    def _report_unknown(self, arg: Arg, name: str) -> None:
        """F007 when another pin has the flag, else F001 with foreign spellings or close matches."""
        for other in self._others_nearest_first():
            old = other.by_option(name) or other.by_option(_dashed(name))
            if old is not None:
                self._report_not_in_pin(arg, name, other, old)
                return
        pin = self.catalog.pin
        foreign = self.tables.foreign.get(name) or self.tables.foreign.get(_dashed(name))
        if foreign is not None:
            target = self._dest_action(self.catalog, foreign.dest) if foreign.dest else None
            also = [a.canonical for a in (self._dest_action(self.catalog, d) for d in foreign.also)
                    if a is not None]
            text = f"unknown flag '{name}': it is {foreign.server}'s spelling"
            if target is not None:
                text += f"; SGLang {pin} uses '{target.canonical}'"
                if also:
                    text += f" and also needs {_q(also)}"
            else:
                text += f"; SGLang {pin} has no such flag"
            if foreign.note:
                text += f" ({self._fill(foreign.note)})"
            if target is not None and target.deprecated is not None:
                text += (f"; '{target.canonical}' is deprecated in SGLang {pin} "
                         f"(SGLang: {target.deprecated.message})")
            hint = _did_you_mean([target.canonical]) if target is not None else None
            self.diags.error(arg.pos, "F001", text, hint)
            return
        close = self._close_matches(name)
        if close:
            fix = f"use '{close[0]}'" if len(close) == 1 else f"use one of {_q(close)}"
        else:
            fix = "remove it (no SGLang flag is close to it)"
        self.diags.error(arg.pos, "F001", f"unknown flag '{name}' for SGLang {pin}: {fix}",
                         _did_you_mean(close))

    def _fill(self, note: str) -> str:
        """Replace ``{dest}`` placeholders in a note with this pin's canonical option string."""

        def sub(match: re.Match[str]) -> str:
            action = self._dest_action(self.catalog, match.group(1))
            return f"'{action.canonical}'" if action else f"'--{match.group(1).replace('_', '-')}'"

        return re.sub(r"\{([a-z0-9_]+)\}", sub, note)

    def _close_matches(self, name: str) -> list[str]:
        """Canonical names of the catalog flags closest to ``name`` (difflib), best first."""
        options = self.catalog.option_strings
        scored: dict[str, float] = {}
        for probe in dict.fromkeys((name, _dashed(name))):
            for opt in difflib.get_close_matches(probe, options, n=5, cutoff=0.6):
                action = self.catalog.by_option(opt)
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

    # ----- deprecation -----

    def undeprecate(self, resolved: _Resolved, written: str, pos: Position) -> _Resolved | None:
        """F104 for a deprecated action; render its successor when SGLang maps it one-to-one.

        A deprecation SGLang enforces (``fatal``: the parser exits) is error F010 instead.
        """
        action = resolved.action
        dep = action.deprecated
        if dep is None and action.kind != "deprecated":
            return resolved
        pin = self.catalog.pin
        replacement = dep.replacement if dep else None
        target = self.catalog.by_option(replacement) if replacement else None
        use = ""
        if target is not None:
            use = f"; use '{target.canonical}' instead"
        elif replacement:
            use = f"; use '{replacement}' instead"
        said = f" (SGLang: {dep.message})" if dep and dep.message else ""
        hint = _did_you_mean([target.canonical]) if target is not None else None
        if dep is not None and dep.fatal:
            self.diags.error(pos, "F010",
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
            self.diags.warning(
                pos, "F104",
                f"'{written}' is deprecated in SGLang {pin}; rendered as '{target.canonical}'",
                hint)
            return _Resolved(target, target.canonical, resolved.value)
        self.diags.warning(pos, "F104", f"'{written}' is deprecated in SGLang {pin}{use}{said}",
                           hint)
        return resolved

    # ----- values -----

    def render(self, resolved: _Resolved, written: str, pos: Position) -> tuple[str, ...] | None:
        """The argv words for one resolved flag, or None after an error."""
        action, value = resolved.action, resolved.value
        if action.kind == "help":
            self.diags.error(pos, "F009",
                             f"'{written}' makes SGLang print its help and exit; remove it")
            return None
        if value is None:
            return ()
        if action.nargs == 0:
            return self._render_switch(resolved, written, pos)
        return self._render_valued(action, value, written, pos)

    def _render_switch(self, resolved: _Resolved, written: str,
                       pos: Position) -> tuple[str, ...] | None:
        """Flags taking no value: store_true/false/const, count, BooleanOptional, deprecated."""
        action, value = resolved.action, resolved.value
        if isinstance(value, str) and value.lower() in _SWITCH_WORDS:
            value = _SWITCH_WORDS[value.lower()]
        if action.kind == "count" and isinstance(value, int) and not isinstance(value, bool):
            if value >= 0:
                return (action.canonical,) * value
        if not isinstance(value, bool):
            self.diags.error(
                pos, "F006",
                f"'{written}' is a switch and takes no value, got '{_describe(value)}': "
                f"write true to pass it or false to leave it out",
            )
            return None
        negated = resolved.matched == action.negative and action.negative is not None
        if action.kind == "boolean_optional" and action.negative:
            on = value != negated
            return (action.canonical,) if on else (action.negative,)
        if negated:
            # "--no-x: true" of a BooleanOptional whose negative form the catalog lacks.
            return (resolved.matched,) if value else ()
        return (action.canonical,) if value else ()

    def _render_valued(self, action: Action, value: ArgValue, written: str,
                       pos: Position) -> tuple[str, ...] | None:
        """Flags taking values: convert, check type, choices and count like argparse does."""
        nargs = action.nargs
        if isinstance(value, dict):
            # A YAML mapping for a JSON-valued flag: SGLang reads the JSON text back.
            value = json.dumps(value)
        if isinstance(value, bool):
            spelled = self._bool_as_value(action, value)
            if spelled is None:
                if value and nargs in ("?", "*"):
                    return (action.canonical,)
                self.diags.error(
                    pos, "F005",
                    f"'{written}' expects {self._expects(nargs)}, got a bare {_word(value)}; "
                    f"give it a value",
                )
                return None
            value = spelled
        assert value is not None  # render() leaves None out before this point
        items: list[str | int | float] = list(value) if isinstance(value, tuple) else [value]
        words = [_word(v) for v in items]
        # An append flag with one value per occurrence takes a list as repeated occurrences.
        repeated = action.kind == "append" and nargs in (None, "?")
        if not repeated and not self._count_ok(nargs, len(words)):
            self.diags.error(
                pos, "F005",
                f"'{written}' expects {self._expects(nargs)}, got {len(words)} "
                f"({_describe(tuple(items))})",
            )
            return None
        ok = True
        for word in words:
            ok = self._check_word(action, word, written, pos) and ok
        if not ok:
            return None
        if repeated:
            return tuple(w for word in words for w in self._pair(action, word))
        if nargs in (None, "?") and len(words) == 1:
            return self._pair(action, words[0])
        dashy = [w for w in words if self._looks_like_option(w)]
        if dashy:
            self.diags.error(
                pos, "F004",
                f"'{written}' value '{dashy[0]}' starts with '-', so SGLang's parser would read "
                f"it as a flag; a multi-value flag cannot carry it",
            )
            return None
        return (action.canonical, *words)

    @staticmethod
    def _looks_like_option(word: str) -> bool:
        """argparse reads a word starting with '-' as an option unless it is a negative number."""
        return word.startswith("-") and len(word) > 1 and not _NEGATIVE_NUMBER.match(word)

    def _pair(self, action: Action, word: str) -> tuple[str, ...]:
        """``--x v``, or ``--x=-v`` when the value would otherwise be read as a flag."""
        if self._looks_like_option(word):
            return (f"{action.canonical}={word}",)
        return (action.canonical, word)

    @staticmethod
    def _bool_as_value(action: Action, value: bool) -> str | None:
        """A YAML boolean for a valued flag: its spelling among the choices or for a bool type."""
        word = _word(value)
        if action.choices is not None:
            for choice in action.choices:
                if choice.lower() == word:
                    return choice
            return None
        if action.type == "bool":
            return word
        return None

    @staticmethod
    def _count_ok(nargs: int | str | None, n: int) -> bool:
        """argparse's nargs pattern for an optional: None one, ? at most one, * any, + some, N."""
        if nargs is None:
            return n == 1
        if nargs == "?":
            return n <= 1
        if nargs == "*":
            return True
        if nargs == "+":
            return n >= 1
        if isinstance(nargs, int):
            return n == nargs
        return True  # argparse.REMAINDER / PARSER never appear on SGLang's optionals

    @staticmethod
    def _expects(nargs: int | str | None) -> str:
        """argparse's wording for an nargs value ("expected one argument")."""
        if nargs is None:
            return "one argument"
        if nargs == "?":
            return "at most one argument"
        if nargs == "+":
            return "at least one argument"
        if isinstance(nargs, int):
            return f"{nargs} argument" + ("" if nargs == 1 else "s")
        return "any number of arguments"

    def _check_word(self, action: Action, word: str, written: str, pos: Position) -> bool:
        """Apply the action's type to one word, then its choices, as argparse does."""
        kind = action.type
        converted: object = word
        try:
            if kind == "int":
                converted = int(word)
            elif kind == "float":
                converted = float(word)
            elif kind == "callable:json.loads":
                converted = json.loads(word)
        except ValueError as exc:
            expected = {"int": "an integer", "float": "a number"}.get(kind or "", "JSON")
            detail = f" ({exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
            self.diags.error(
                pos, "F004",
                f"invalid {self._type_name(kind)} value for '{written}': '{word}'{detail}; "
                f"it takes {expected}",
            )
            return False
        if kind == "bool" and word.strip().lower() in ("false", "0", "no", "off"):
            # argparse's type=bool is Python bool(): every non-empty word means True.
            self.diags.error(
                pos, "F004",
                f"'{written}' converts its value with Python bool(), so '{word}' would turn it "
                f"on; leave the flag out to keep it off",
            )
            return False
        if action.choices is not None:
            # int/float choices are stored as numbers and compared by str(); others as written
            compared = str(converted) if kind in ("int", "float") else word
            if compared not in action.choices:
                self.diags.error(
                    pos, "F003",
                    f"invalid choice for '{written}': '{word}' "
                    f"(choose from {', '.join(repr(c) for c in action.choices)})",
                    self._choice_hint(word, action.choices),
                )
                return False
        return True

    @staticmethod
    def _type_name(kind: str | None) -> str:
        """argparse names a type by its function: int, float, loads."""
        if kind and kind.startswith("callable:"):
            return kind.rsplit(".", 1)[-1]
        return kind or "str"

    @staticmethod
    def _choice_hint(word: str, choices: Sequence[str]) -> str | None:
        """Suggest a choice: same letters in another case, else longer names, then difflib.

        "qwen3" as a tool-call parser means "qwen3_coder" more often than "qwen".
        """
        lower = word.lower()
        for choice in choices:
            if choice.lower() == lower:
                return f"did you mean '{choice}'?"
        longer = [c for c in choices if c.lower().startswith(lower)] if lower else []
        close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
        return _did_you_mean(list(dict.fromkeys(longer[:2] + close)))


def check_args(catalog: Catalog, args: Sequence[Arg], diags: Diagnostics,
               other_catalogs: Sequence[Catalog] = ()) -> tuple[CheckedArg, ...]:
    """Resolve ``args`` against ``catalog``; return canonical argv groups in input order.

    Every finding is recorded in ``diags``; a flag with an error is left out of the
    result. ``other_catalogs`` (the other committed pins) let an unknown flag be
    reported as removed or renamed instead of merely unknown.
    """
    checker = _Checker(catalog, diags, other_catalogs)
    first_by_dest: dict[str, Arg] = {}
    out: list[CheckedArg] = []
    for arg in args:
        resolved = checker.resolve(arg)
        if resolved is None:
            continue
        # A structured field's dest means little to the reader of a flag message: name the flag.
        label = resolved.action.canonical if arg.by_dest else arg.name
        resolved = checker.undeprecate(resolved, label, arg.pos)
        if resolved is None:
            continue
        action = resolved.action
        if action.kind not in ("append", "count"):
            # argparse keeps the last occurrence silently; two writers of one setting is a bug.
            first = first_by_dest.get(action.dest)
            if first is not None:
                if first.name == arg.name and first.by_dest == arg.by_dest:
                    text = f"{_who(arg)} is given twice, first at {first.pos}; keep one"
                else:
                    text = (f"{_who(arg)} sets '{action.canonical}' again: {_who(first)} "
                            f"already set it at {first.pos}; keep one")
                diags.error(arg.pos, "F008", text)
                continue
            first_by_dest[action.dest] = arg
        words = checker.render(resolved, label, arg.pos)
        if words is not None:
            out.append(CheckedArg(action, words, arg.pos))
    return tuple(out)
