"""What SGLang's argparse stores for a flag: each catalog type converted as the pin's parser converts it.

A catalog records an action's ``type`` by name (``int``, ``float``, ``callable:json.loads``,
``callable:sglang.srt.utils.common.human_readable_int``, ...). :func:`convert` applies the
same conversion to one word, and :func:`stored` gives the value argparse leaves in the
namespace for one rendered flag group (its kind, ``nargs``, ``const``, SGLang's own action
classes). Both the flag check (a word argparse would refuse) and the rules' ``Settings`` (the
typed value a predicate reads) use them, so a rule never sees the text ``"0"`` where SGLang
holds the integer 0. ``tests/test_argtypes_sglang.py`` parses argvs with each pin's real
``ServerArgs`` parser and compares, for every action of both catalogs.

Every type of a committed catalog is known here (:data:`KNOWN_TYPES`); a type a future
pin adds is read as text until it is added, and the table test fails on it first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Sequence

from generator.errors import GenError
from generator.sglang.catalog import Action
from generator.load import json_text


class ArgTypeError(GenError, ValueError):
    """argparse would refuse this word: the type function raised (exit 2 before any check)."""


@dataclass(frozen=True)
class Unparsed:
    """A value SGLang's parser refuses: the words as rendered and the parser's reason.

    The flag check reports such words (F004) and renders none of them, so a predicate
    meets one only when a rule test gives Settings an argv directly. It is neither a
    number nor text: readers treat it as "not a value of the flag's type".
    """

    words: tuple[str, ...]
    reason: str


_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")


def human_readable_int(word: str) -> int:
    """sglang.srt.utils.common.human_readable_int: ``4k`` 4000, ``1Ki`` 1024, ``25.6k`` 25600."""
    text = word.strip()
    match = _HUMAN.fullmatch(text)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            if "." in number:
                raise ArgTypeError(f"Decimals are not allowed with IEC suffixes like '{suffix}'")
            return int(number) * _IEC[suffix]
        return int(Decimal(number) * _SI[suffix])
    try:
        return int(text)
    except ValueError:
        raise ArgTypeError(f"Invalid integer value: '{text}'. Use a plain integer, SI suffixes (1k, 1M), "
                           "or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive.") from None


def _no_constant(name: str) -> Any:
    raise ArgTypeError(f"Invalid JSON list: {name} is not JSON to orjson")


_U64 = 2**64


def _orjson_int(text: str) -> int | float:
    value = int(text)
    return value if -(2**63) <= value < _U64 else float(text)  # orjson reads a wider integer as a float


def json_list_type(word: str) -> Any:
    """sglang.srt.utils.common.json_list_type: ``orjson.loads`` (no NaN/Infinity; wider than 64-bit is a float)."""
    try:
        return json_text.loads(word, parse_constant=_no_constant, parse_int=_orjson_int)
    except json.JSONDecodeError as exc:
        raise ArgTypeError(f"Invalid JSON list: {word}. Please provide a valid JSON list. ({exc.msg})") from None


def json_loads(word: str) -> Any:
    """argparse ``type=json.loads``."""
    try:
        return json_text.loads(word)
    except json.JSONDecodeError as exc:
        raise ArgTypeError(exc.msg) from None


def nullable_str(word: str) -> str | None:
    """sglang.srt.utils.common.nullable_str: an empty word or ``None`` is None."""
    return None if not word or word == "None" else word


def cuda_graph_backend(word: str) -> str:
    """parse_cuda_graph_backend_arg (0.5.23): the retired ``tc_piecewise`` is refused."""
    if word == "tc_piecewise":
        raise ArgTypeError("tc_piecewise was removed; select breakable, full, or disabled")
    return word


# cuda_graph_config.ALLOWED_KEYS_PER_PHASE (0.5.23)
_GRAPH_KEYS = {"decode": ("backend", "max_bs", "bs"),
               "prefill": ("backend", "max_bs", "bs", "max_context_size", "full_prefill_max_req",
                           "full_prefill_prefix_chunk_tokens", "max_seq_len")}


def cuda_graph_config(word: str) -> dict[str, dict[str, Any]]:
    """parse_cuda_graph_config_arg (0.5.23): a JSON object of phase -> settings, keys checked."""
    try:
        parsed = json_text.loads(word)
    except json.JSONDecodeError as exc:
        raise ArgTypeError(f"--cuda-graph-config must be JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ArgTypeError(f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}")
    result: dict[str, dict[str, Any]] = {}
    for phase, settings in parsed.items():
        if phase not in _GRAPH_KEYS:
            raise ArgTypeError(f"--cuda-graph-config: unknown phase '{phase}', expected one of "
                               f"{tuple(_GRAPH_KEYS)}")
        if not isinstance(settings, dict):
            raise ArgTypeError(f"--cuda-graph-config['{phase}'] must be a JSON object, got {type(settings).__name__}")
        if "backend" in settings:
            if not isinstance(settings["backend"], str):
                raise ArgTypeError(f"--cuda-graph-config['{phase}'].backend must be text")
            cuda_graph_backend(settings["backend"])
        for key in settings:
            if key not in _GRAPH_KEYS[phase]:
                raise ArgTypeError(f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of "
                                   f"{_GRAPH_KEYS[phase]}")
        result[phase] = dict(settings)
    return result


def _python_bool(word: str) -> bool:
    return bool(word)  # argparse type=bool is Python's bool(): every non-empty word is True


def _number(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(word: str) -> Any:
        try:
            return kind(word)
        except ValueError:
            raise ArgTypeError(f"invalid {kind.__name__} value: '{word}'") from None
    return convert


_CONVERTERS: dict[str | None, Callable[[str], Any]] = {
    None: str,
    "str": str,
    "int": _number(int),
    "float": _number(float),
    "bool": _python_bool,
    "callable:json.loads": json_loads,
    "callable:sglang.srt.utils.common.json_list_type": json_list_type,
    "callable:sglang.srt.utils.common.nullable_str": nullable_str,
    "callable:sglang.srt.utils.common.human_readable_int": human_readable_int,
    "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_backend_arg": cuda_graph_backend,
    "callable:sglang.srt.model_executor.cuda_graph_config.parse_cuda_graph_config_arg": cuda_graph_config,
}
KNOWN_TYPES = frozenset(_CONVERTERS)
# The argparse.Action subclasses of SGLang whose __call__ gen replays (besides argparse's own).
KNOWN_ACTIONS = frozenset({"other:LoRAPathAction"})


def convert(action: Action, word: str) -> Any:
    """``word`` through the action's type, as argparse's ``_get_value`` does; ArgTypeError when refused."""
    return _CONVERTERS.get(action.type, str)(word)


def _lora_paths(words: Sequence[str]) -> list[Any]:
    """LoRAPathAction.__call__: each word stripped; a ``{...}`` word is a JSON object with both keys."""
    out: list[Any] = []
    for word in words:
        text = word.strip()
        if text.startswith("{") and text.endswith("}"):
            try:
                obj = json_text.loads(text)
            except json.JSONDecodeError as exc:
                raise ArgTypeError(f"{text!r} looks like JSON but does not parse ({exc.msg})") from None
            if not (isinstance(obj, dict) and "lora_path" in obj and "lora_name" in obj):
                raise ArgTypeError(f"{text!r} looks like a JSON str, but it does not contain 'lora_name' and "
                                   "'lora_path' keys.")
            out.append(obj)
        else:
            out.append(text)
    return out


def split_option(action: Action, words: Sequence[str]) -> list[str]:
    """The value words of one rendered group: ``--x=v`` counts as ``--x v`` (argparse's explicit argument)."""
    first = words[0]
    if "=" in first and first.split("=", 1)[0] in action.option_strings:
        return [first.split("=", 1)[1], *words[1:]]
    return list(words[1:])


def stored(action: Action, words: Sequence[str]) -> Any:
    """The value argparse stores in ``action.dest`` for one rendered group (``words[0]`` is the option).

    ArgTypeError when SGLang's parser refuses the words. A deprecated action that stores
    nothing (0.5.9's DeprecatedAction) gives :data:`NOTHING`.
    """
    kind = action.kind
    if kind == "store_true":
        return True
    if kind == "store_false":
        return False
    if kind == "boolean_optional":
        return words[0] != action.negative
    if kind in ("store_const", "append_const"):
        return [action.const] if kind == "append_const" else action.const
    if kind == "count":
        return sum(1 for w in words if w in action.option_strings)
    values = split_option(action, words)
    if kind == "deprecated":
        if action.const is not None:
            return action.const  # DeprecatedStoreTrueAction / DeprecatedStoreConstAction
        if not action.takes_value:
            return NOTHING  # DeprecatedAction warns (or errors) and stores nothing
    if kind == "other:LoRAPathAction":
        return _lora_paths([convert(action, w) for w in values])
    if kind == "append":
        return [convert(action, w) for w in _occurrences(action, words)]
    if action.nargs == "?" and not values:
        const = action.const
        return convert(action, const) if isinstance(const, str) else const
    if action.nargs in (None, "?") and len(values) == 1:
        return convert(action, values[0])
    return [convert(action, w) for w in values]


def _occurrences(action: Action, words: Sequence[str]) -> list[str]:
    """The one value of each ``--x v`` / ``--x=v`` occurrence of an append flag rendered as a group."""
    out: list[str] = []
    expect = False
    for word in words:
        if expect:
            out.append(word)
            expect = False
        elif word in action.option_strings:
            expect = True
        else:
            out.append(split_option(action, [word])[0])
    return out


class _Nothing:
    """The marker of an action that leaves its dest alone."""

    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()
