"""A quick yes for valid documents, so cerberus only runs when there is something to report.

Validating a host file with cerberus costs more than parsing it. Most documents are
valid, and for those only the answer matters. :func:`surely_valid` walks the schema
itself and answers True only when every rule holds, interpreting the rules exactly as
cerberus does (its own type table, regexes anchored at the end, ``empty``, ``nullable``,
unknown keys refused, and the project's ``check_with`` methods of the validator). A
rule it does not know, or any doubt, is False: cerberus then validates as before and
its errors are reported. So this can make validation faster, never more permissive
(tests/test_fastcheck.py compares both on every fixture and on generated documents).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from generator.errors import GenError

_KNOWN = frozenset({"type", "required", "schema", "min", "max", "empty", "regex", "check_with",
                    "minlength", "maxlength", "keysrules", "valuesrules", "allowed", "nullable",
                    "meta"})
_REGEX: dict[str, re.Pattern[str]] = {}


class _Failed(GenError, ValueError):
    """No sure yes: raised by the stand-in ``_error`` a ``check_with`` method calls, or on doubt.

    Never leaves this module (:func:`surely_valid` turns it into False).
    """


class _Probe:
    """What a ``check_with`` method of the validator sees: only ``_error`` is used."""

    def _error(self, *_args: Any) -> None:
        raise _Failed


def _type_ok(validator: Any, names: Any, value: Any) -> bool:
    for name in names if isinstance(names, list) else [names]:
        definition = validator.types_mapping.get(name)
        if definition is None:
            raise _Failed  # a type this module does not know: let cerberus decide
        if isinstance(value, definition.included_types) and not isinstance(value, definition.excluded_types):
            return True
    return False


def _regex(pattern: str) -> re.Pattern[str]:
    found = _REGEX.get(pattern)
    if found is None:
        # cerberus anchors the pattern at the end and matches from the start.
        found = _REGEX[pattern] = re.compile(pattern if pattern.endswith("$") else pattern + "$")
    return found


# (id(rules), validator class, value type, value) -> (rules, answer) for scalar values. A
# scalar's answer depends on nothing else: the rules are the schema's own (never changed),
# and a check_with method only sees the value (its ``self`` is a _Probe). A fleet repeats
# the same values in every host file (ports, models, PCI ids, paths).
_SCALARS: dict[tuple[int, type, type, Any], tuple[Mapping[str, Any], bool]] = {}
_SCALARS_MAX = 8192
_SCALAR_TYPES = frozenset({str, int, float, bool})


def _value_ok(validator: Any, rules: Mapping[str, Any], value: Any) -> bool:
    """True when ``value`` meets every rule; raises _Failed on anything unknown."""
    if type(value) not in _SCALAR_TYPES:
        return _value_ok_now(validator, rules, value)
    key = (id(rules), type(validator), type(value), value)
    found = _SCALARS.get(key)
    if found is not None and found[0] is rules:
        return found[1]
    answer = _value_ok_now(validator, rules, value)  # _Failed propagates, nothing remembered
    if len(_SCALARS) >= _SCALARS_MAX:
        _SCALARS.clear()
    _SCALARS[key] = (rules, answer)
    return answer


def _value_ok_now(validator: Any, rules: Mapping[str, Any], value: Any) -> bool:
    if not _KNOWN.issuperset(rules):
        raise _Failed
    if value is None:
        return bool(rules.get("nullable", False))
    if "type" in rules and not _type_ok(validator, rules["type"], value):
        return False
    if "allowed" in rules:
        allowed = rules["allowed"]
        if isinstance(value, (list, tuple)) and not isinstance(value, str):
            raise _Failed  # cerberus checks each item: not needed by these schemas
        if value not in allowed:
            return False
    sized = isinstance(value, (str, list, dict, tuple))
    if rules.get("empty", True) is False and sized and len(value) == 0:
        return False
    if "min" in rules and not _compare(value, rules["min"], lambda a, b: a >= b):
        return False
    if "max" in rules and not _compare(value, rules["max"], lambda a, b: a <= b):
        return False
    if "minlength" in rules and sized and len(value) < rules["minlength"]:
        return False
    if "maxlength" in rules and sized and len(value) > rules["maxlength"]:
        return False
    if "regex" in rules and isinstance(value, str) and not _regex(rules["regex"]).match(value):
        return False
    if "check_with" in rules:
        _run_check(validator, rules["check_with"], value)
    return _nested_ok(validator, rules, value)


def _compare(value: Any, bound: Any, ok: Any) -> bool:
    try:
        return bool(ok(value, bound))
    except TypeError:
        raise _Failed from None  # cerberus' own handling of incomparable values decides


def _run_check(validator: Any, names: Any, value: Any) -> None:
    for name in names if isinstance(names, (list, tuple)) else [names]:
        if not isinstance(name, str):
            raise _Failed
        method = getattr(type(validator), f"_check_with_{name}", None)
        if method is None:
            raise _Failed
        try:
            method(_Probe(), "field", value)  # raises _Failed through _Probe._error
        except Exception as exc:  # noqa: BLE001 - a method needing more than _error: ask cerberus
            raise _Failed from exc


def _nested_ok(validator: Any, rules: Mapping[str, Any], value: Any) -> bool:
    if isinstance(value, dict):
        if "schema" in rules and not _mapping_ok(validator, rules["schema"], value):
            return False
        for key, item in value.items():
            if "keysrules" in rules and not _value_ok(validator, rules["keysrules"], key):
                return False
            if "valuesrules" in rules and not _value_ok(validator, rules["valuesrules"], item):
                return False
        return True
    if isinstance(value, list):  # cerberus applies keysrules/valuesrules to mappings only
        item_rules = rules.get("schema")
        return item_rules is None or all(_value_ok(validator, item_rules, item) for item in value)
    return True  # container rules on a scalar: cerberus skips them too


def _mapping_ok(validator: Any, schema: Mapping[str, Any], data: Mapping[Any, Any]) -> bool:
    for key in data:
        if key not in schema:
            return False  # unknown key (allow_unknown is off in these schemas)
    for key, rules in schema.items():
        if rules.__class__ is not dict and not isinstance(rules, Mapping):  # dict first: an ABC check is slow
            raise _Failed
        if key not in data:
            if rules.get("required", False):
                return False
            continue
        if not _value_ok(validator, rules, data[key]):
            return False
    return True


def surely_valid(validator: Any, schema: Mapping[str, Any], data: Any) -> bool:
    """True only when cerberus would accept ``data`` against ``schema`` (False: ask cerberus)."""
    if getattr(validator, "allow_unknown", False) or getattr(validator, "require_all", False):
        return False
    if not isinstance(data, dict) or isinstance(schema, Sequence):
        return False
    try:
        return _mapping_ok(validator, schema, data)
    except (_Failed, RecursionError):
        return False
