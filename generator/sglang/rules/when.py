"""Declarative rules: a ``when:`` condition in rules.yaml instead of a Python predicate.

A rule that only compares settings is written as data::

    when:
      all:
        - on: enable_tokenizer_batch_encode
        - on: enable_dynamic_batch_tokenizer
    blame: [enable_tokenizer_batch_encode, enable_dynamic_batch_tokenizer]

A condition is a mapping; several keys in one mapping must all hold. The keys:

- ``all: [c, ...]``, ``any: [c, ...]``, ``not: c``;
- ``on: NAME`` / ``off: NAME``: the setting is truthy (a switch that is on) / is not;
- ``set: NAME`` / ``unset: NAME``: the value is not None / is None (SGLang's default included);
- ``written: NAME``: the manifest wrote it; ``has: NAME``: the pin has the setting at all;
- ``is: {NAME: V}`` / ``is_not: {NAME: V}``: the value equals V, or is one of a list V (null: None);
- ``matches: {NAME: REGEX}``: the value is text that the regular expression matches whole
  (compiled by RE2, ``sglang/patterns.py``: linear time, no backtracking, bounded size);
- ``lt|le|gt|ge: {NAME: N}``: the number compares so (no number: false);
- ``env: VAR`` (set at all), ``env_true: VAR`` (SGLang's EnvBool reads it as true).

``NAME`` is a setting name as predicates use it (``tp_size``; the pin's dest is found as
for ``Settings.get``), or one of :data:`RESOLVED` (``sglang_algorithm``: a value as SGLang
resolves it before its checks), which ``{value.NAME}`` prints too. A firing declarative rule blames ``blame`` and its texts may
use ``{flag.NAME}``, ``{value.NAME}``, ``{env.VAR}`` and ``{version}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.errors import GenError
from generator.sglang.patterns import compile_pattern
from generator.sglang.rules.predicates.common import algorithm, dp_attention
from generator.sglang.rules.settings import Settings


class WhenError(GenError, ValueError):
    """A ``when:`` condition that is not of the form above (rules.yaml reports it as C030)."""

    def __init__(self, path: tuple[Any, ...], message: str) -> None:
        super().__init__(message)
        self.path = path  # where in the condition, for the position of the diagnostic


# Values as SGLang resolves them before its checks (the same functions the predicates use).
RESOLVED: dict[str, Callable[[Settings], Any]] = {
    "sglang_algorithm": algorithm,  # upper-cased (0.5.15+), NEXTN -> EAGLE, None under aux-state capture
    "sglang_dp_attention": lambda s: dp_attention(s)[0],  # DP attention in effect (0.5.23's attn_dp_size too)
    # the settings that turned DP attention on: an item (its text is in the rule's items:)
    "sglang_dp_settings": lambda s: dp_attention(s)[2],
}


def resolved(s: Settings, name: str) -> Any:
    """A setting, or a value of :data:`RESOLVED` (for conditions and ``{value.NAME}`` in texts)."""
    resolve = RESOLVED.get(name)
    return resolve(s) if resolve is not None else s.get(name)

Test = Callable[[Settings], bool]


_value = resolved


def _number(s: Settings, name: str) -> float | None:
    value = _value(s, name)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _one_of(value: Any, wanted: Any) -> bool:
    options = wanted if isinstance(wanted, list) else [wanted]
    # typed: True is not 1 here, as argparse keeps them apart
    return any(type(value) is type(o) and value == o for o in options)


_NAME_TESTS: dict[str, Callable[[Settings, str], bool]] = {
    "on": lambda s, n: bool(_value(s, n)) if n in RESOLVED else s.on(n),
    "off": lambda s, n: not (bool(_value(s, n)) if n in RESOLVED else s.on(n)),
    "set": lambda s, n: _value(s, n) is not None,
    "unset": lambda s, n: _value(s, n) is None,
    "written": lambda s, n: s.is_set(n),
    "has": lambda s, n: s.has(n),
    "env": lambda s, n: n in s.env,
    "env_true": lambda s, n: s.env_true(n),
}
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}
_VALUE_TESTS = ("is", "is_not", "matches")
_GROUPS = ("all", "any")
KEYS = frozenset({*_NAME_TESTS, *_COMPARE, *_VALUE_TESTS, *_GROUPS, "not"})


def compile_when(data: Any, path: tuple[Any, ...] = ()) -> Test:
    """The test of a condition; WhenError (with where in ``data``) when it is malformed."""
    if not isinstance(data, Mapping) or not data:
        raise WhenError(path, "a condition is a mapping of one or more of " + ", ".join(sorted(KEYS)))
    tests = [_compile_key(str(key), value, path + (key,)) for key, value in data.items()]
    if len(tests) == 1:
        return tests[0]
    return lambda s: all(t(s) for t in tests)


def _name(value: Any, path: tuple[Any, ...]) -> str:
    if not isinstance(value, str) or not value:
        raise WhenError(path, "expected a setting name (text)")
    return value


def _compile_key(key: str, value: Any, path: tuple[Any, ...]) -> Test:
    if key in _GROUPS:
        if not isinstance(value, Sequence) or isinstance(value, str) or not value:
            raise WhenError(path, f"'{key}' takes a list of conditions")
        parts = [compile_when(v, path + (i,)) for i, v in enumerate(value)]
        return (lambda s: all(p(s) for p in parts)) if key == "all" else (lambda s: any(p(s) for p in parts))
    if key == "not":
        inner = compile_when(value, path)
        return lambda s: not inner(s)
    if key in _NAME_TESTS:
        name, test = _name(value, path), _NAME_TESTS[key]
        return lambda s: test(s, name)
    if key in _COMPARE or key in _VALUE_TESTS:
        if not isinstance(value, Mapping) or len(value) != 1:
            raise WhenError(path, f"'{key}' takes one mapping entry: setting name -> value")
        ((raw, wanted),) = value.items()
        name = _name(raw, path + (raw,))
        if key in _COMPARE:
            if isinstance(wanted, bool) or not isinstance(wanted, (int, float)):
                raise WhenError(path + (raw,), f"'{key}' compares with a number")
            compare = _COMPARE[key]

            def compared(s: Settings) -> bool:
                number = _number(s, name)
                return number is not None and compare(number, wanted)
            return compared
        if key == "matches":
            if not isinstance(wanted, str):
                raise WhenError(path + (raw,), "'matches' takes a regular expression (text)")
            # Repository data matched against manifest values: never a backtracking re.
            pattern, problem = compile_pattern(wanted)
            if pattern is None:
                raise WhenError(path + (raw,), f"'matches': {problem}")

            def matched(s: Settings) -> bool:
                value = _value(s, name)
                return isinstance(value, str) and pattern.fullmatch(value) is not None
            return matched
        if key == "is":
            return lambda s: _one_of(_value(s, name), wanted)
        return lambda s: not _one_of(_value(s, name), wanted)
    raise WhenError(path, f"unknown condition '{key}' (one of {', '.join(sorted(KEYS))})")


@dataclass(frozen=True)
class When:
    """A compiled ``when:`` with the settings its rule blames."""

    test: Test
    blame: tuple[str, ...]
    source: Any = None  # the condition as rules.yaml writes it (for docs/rules.md)

    def holds(self, s: Settings) -> bool:
        """True when the rule fires on ``s``."""
        return self.test(s)
