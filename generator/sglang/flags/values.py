"""Values: a resolved flag's value rendered as argv words, checked the way argparse would.

Switches (F006), counts, number of values (F005), type conversion and Python bool()
(F004), choices (F003), and values that argparse would read as a flag (F004).
"""

from __future__ import annotations

import json
import re

from typing import Callable, Mapping

from generator.errors import Diagnostics, Position
from generator.sglang.argtypes import ArgTypeError, convert
from generator.sglang.catalog import Action
from generator.sglang.flags.args import ArgValue, Resolved
from generator.sglang.flags.suggest import choice_hint
from generator.sglang.flags.text import describe
from generator.sglang.flags.text import word as as_word

# argparse's _negative_number_matcher: such words are values, any other "-x" is an option.
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
Synonyms = Mapping[str, Mapping[str, str]]  # dest -> word -> choice (choice-synonyms.yaml)
_SWITCH_WORDS = {"true": True, "false": False}


Elsewhere = Callable[[Action, str], "str | None"]  # where a word is a choice, if not of this action


def render(diags: Diagnostics, resolved: Resolved, written: str, pos: Position,
           synonyms: Synonyms | None = None, elsewhere: Elsewhere | None = None) -> tuple[str, ...] | None:
    """The argv words for one resolved flag, or None after an error."""
    action, value = resolved.action, resolved.value
    if action.kind == "help":
        diags.error(pos, "F009",
                         f"'{written}' makes SGLang print its help and exit; remove it")
        return None
    if value is None:
        return ()
    if action.nargs == 0:
        return _render_switch(diags, resolved, written, pos)
    return _render_valued(diags, action, value, written, pos, synonyms or {}, elsewhere)


def stored_value(action: Action, words: tuple[str, ...]) -> object:
    """What argparse would store for ``action`` given the rendered ``words``, comparable with ==.

    Two flags that set one dest agree when this is equal: a value is converted by the
    action's type (``8`` and ``08``, ``0.85`` and ``0.850``, JSON text by its data), a
    BooleanOptional by its form, any other switch by which action it is.
    """
    if not words:
        return ("default",)
    if not action.takes_value:
        if action.kind == "boolean_optional":
            return ("on", words[0] != action.negative)
        return ("switch", action.canonical)
    values = [words[0].split("=", 1)[1]] if len(words) == 1 and "=" in words[0] else list(words[1:])
    converted: list[object] = []
    for word in values:
        try:
            if action.type == "int":
                converted.append(int(word))
            elif action.type == "float":
                converted.append(float(word))
            elif action.type == "callable:json.loads":
                converted.append(json.dumps(json.loads(word), sort_keys=True))
            else:
                converted.append(word)
        except ValueError:
            converted.append(word)
    if action.nargs in (None, "?") and len(converted) == 1:
        return ("value", converted[0])
    return ("values", tuple(converted))


def _render_switch(diags: Diagnostics, resolved: Resolved, written: str,
                   pos: Position) -> tuple[str, ...] | None:
    """Flags taking no value: store_true/false/const, count, BooleanOptional, deprecated."""
    action, value = resolved.action, resolved.value
    if isinstance(value, str) and value.lower() in _SWITCH_WORDS:
        value = _SWITCH_WORDS[value.lower()]
    if action.kind == "count" and isinstance(value, int) and not isinstance(value, bool):
        if value >= 0:
            return (action.canonical,) * value
    if not isinstance(value, bool):
        diags.error(
            pos, "F006",
            f"'{written}' is a switch and takes no value, got '{describe(value)}': "
            f"write true to pass it or false to leave it out",
        )
        return None
    return _switch_words(resolved, value)


def _switch_words(resolved: Resolved, value: bool) -> tuple[str, ...]:
    """A switch's words for ``true``/``false``: ``--no-x: false`` and ``--x: false`` of a
    BooleanOptional flip to the other form; ``false`` of any other switch leaves it out."""
    action = resolved.action
    negated = resolved.matched == action.negative and action.negative is not None
    if action.kind == "boolean_optional" and action.negative:
        on = value != negated
        return (action.canonical,) if on else (action.negative,)
    if negated:
        # "--no-x: true" of a BooleanOptional whose negative form the catalog lacks.
        return (resolved.matched,) if value else ()
    return (action.canonical,) if value else ()


def rendered_as(resolved: Resolved) -> str:
    """What :func:`render` makes of ``resolved``, for the messages that say it (F101-F104):
    ``rendered as '--x'``, or that the value leaves the flag out. A written ``--no-x: false``
    is rendered ``--x``, so the message names that, never the form written."""
    action, value = resolved.action, resolved.value
    if isinstance(value, str) and action.nargs == 0 and value.lower() in _SWITCH_WORDS:
        value = _SWITCH_WORDS[value.lower()]
    if value is None or action.nargs == 0 and isinstance(value, bool):
        words = () if value is None else _switch_words(resolved, value)
        return f"rendered as '{words[0]}'" if words else "left out (its value turns the flag off)"
    return f"rendered as '{action.canonical}'"


def _render_valued(diags: Diagnostics, action: Action, value: ArgValue, written: str,
                   pos: Position, synonyms: Synonyms, elsewhere: Elsewhere | None = None) -> tuple[str, ...] | None:
    """Flags taking values: convert, check type, choices and count like argparse does."""
    nargs = action.nargs
    if isinstance(value, dict):
        # A YAML mapping for a JSON-valued flag: SGLang reads the JSON text back.
        value = json.dumps(value)
    if isinstance(value, bool):
        spelled = _bool_as_value(action, value)
        if spelled is None:
            if value and nargs in ("?", "*"):
                return (action.canonical,)
            diags.error(
                pos, "F005",
                f"'{written}' expects {_expects(nargs)}, got a bare {as_word(value)}; "
                f"give it a value",
            )
            return None
        value = spelled
    assert value is not None  # render() leaves None out before this point
    items: list[str | int | float] = list(value) if isinstance(value, tuple) else [value]
    words = [as_word(v) for v in items]
    # An append flag with one value per occurrence takes a list as repeated occurrences.
    repeated = action.kind == "append" and nargs in (None, "?")
    if not repeated and not _count_ok(nargs, len(words)):
        diags.error(
            pos, "F005",
            f"'{written}' expects {_expects(nargs)}, got {len(words)} "
            f"({describe(tuple(items))})",
        )
        return None
    ok = True
    for word in words:
        ok = _check_word(diags, action, word, written, pos, synonyms, elsewhere) and ok
    if not ok:
        return None
    if repeated:
        return tuple(w for word in words for w in _pair(action, word))
    if nargs in (None, "?") and len(words) == 1:
        return _pair(action, words[0])
    dashy = [w for w in words if _looks_like_option(w)]
    if dashy:
        diags.error(
            pos, "F004",
            f"'{written}' value '{dashy[0]}' starts with '-', so SGLang's parser would read "
            f"it as a flag; a multi-value flag cannot carry it",
        )
        return None
    return (action.canonical, *words)


def _looks_like_option(word: str) -> bool:
    """argparse reads a word starting with '-' as an option unless it is a negative number."""
    return word.startswith("-") and len(word) > 1 and not _NEGATIVE_NUMBER.match(word)


def _pair(action: Action, word: str) -> tuple[str, ...]:
    """``--x v``, or ``--x=-v`` when the value would otherwise be read as a flag."""
    if _looks_like_option(word):
        return (f"{action.canonical}={word}",)
    return (action.canonical, word)


def _bool_as_value(action: Action, value: bool) -> str | None:
    """A YAML boolean for a valued flag: its spelling among the choices or for a bool type."""
    word = as_word(value)
    if action.choices is not None:
        for choice in action.choices:
            if choice.lower() == word:
                return choice
        return None
    if action.type == "bool":
        return word
    return None


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


def _check_word(diags: Diagnostics, action: Action, word: str, written: str, pos: Position,
                synonyms: Synonyms, elsewhere: Elsewhere | None = None) -> bool:
    """Apply the action's type to one word, then its choices, as argparse does."""
    kind = action.type
    try:
        converted = convert(action, word)  # the pin's own type function (generator/sglang/argtypes.py)
    except ArgTypeError as exc:
        expected = _EXPECTED.get(kind or "", "a value SGLang's parser takes")
        detail = "" if kind in ("int", "float") else f" ({exc})"
        diags.error(
            pos, "F004",
            f"invalid {_type_name(kind)} value for '{written}': '{word}'{detail}; "
            f"it takes {expected}",
        )
        return False
    if kind == "bool" and word.strip().lower() in ("false", "0", "no", "off"):
        # argparse's type=bool is Python bool(): every non-empty word means True.
        diags.error(
            pos, "F004",
            f"'{written}' converts its value with Python bool(), so '{word}' would turn it "
            f"on; leave the flag out to keep it off",
        )
        return False
    if action.choices is not None:
        # int/float choices are stored as numbers and compared by str(); others as written
        compared = str(converted) if kind in ("int", "float") else word
        if compared not in action.choices:
            note = elsewhere(action, word) if elsewhere is not None else None
            diags.error(
                pos, "F003",
                f"invalid choice for '{written}': '{word}' "
                f"(choose from {', '.join(repr(c) for c in action.choices)})" + (f"; {note}" if note else ""),
                choice_hint(word, action.choices, synonyms.get(action.dest)),
            )
            return False
    return True


# What each type function takes, for the F004 message.
_EXPECTED = {
    "int": "an integer", "float": "a number", "callable:json.loads": "JSON",
    "callable:sglang.srt.utils.common.json_list_type": "JSON (SGLang reads it with orjson: no NaN or Infinity)",
    "callable:sglang.srt.utils.common.human_readable_int":
        "an integer, optionally with an SI (4k, 2M) or IEC (1Ki, 1Mi) suffix",
    "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_backend_arg": "breakable, full or disabled",
    "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_config_arg":
        "a JSON object of phases (decode, prefill) with their known keys",
}


def _type_name(kind: str | None) -> str:
    """argparse names a type by its function: int, float, loads."""
    if kind and kind.startswith("callable:"):
        return kind.rsplit(".", 1)[-1]
    return kind or "str"
