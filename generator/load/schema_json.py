"""JSON Schema (draft 2020-12) of model manifests and host inventories, from the cerberus schemas.

The cerberus dicts in :mod:`generator.load.schema` stay the one source of truth; this
module translates the rules they use (type, required, empty, min/max, minlength,
allowed, regex, nested schema, keysrules/valuesrules, the project's check_with rules)
and adds each key's description, default and example from :mod:`generator.load.schema_docs`.
Editors use the result for completion and checking (README: Editor schema); ``gen
check`` fails when the committed ``schemas/*.schema.json`` differ from it.

A rule the translation does not know is recorded in ``UNTRANSLATED`` (a test keeps it
empty), so a new cerberus rule cannot silently vanish from the editor schema, while
``gen check`` keeps working. Some checks exist only in gen (systemd path syntax,
placement, flags): the JSON Schema is looser than ``gen check``, never stricter.
"""

from __future__ import annotations

import json
import re
from typing import Any

from generator.load import schema as cerberus_schema
from generator.load.checks import ROLLOUT_PERCENT
from generator.load.schema_docs import DOCS
from generator.systemd import DEVICE_NAMES

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILES = {"model": "schemas/model.schema.json", "host": "schemas/host.schema.json",
                "rollout": "schemas/rollout.schema.json"}
_TITLES = {"model": "gen model manifest (models/<name>.yaml)", "host": "gen host inventory (hosts/<name>.yaml)",
           "rollout": "gen rollout strategy (rollout.yaml)"}
_SCHEMAS = {"model": cerberus_schema.MODEL_SCHEMA, "host": cerberus_schema.HOST_SCHEMA,
            "rollout": cerberus_schema.ROLLOUT_SCHEMA}

_TYPES = {"string": "string", "integer": "integer", "float": "number", "number": "number",
          "boolean": "boolean", "dict": "object", "list": "array"}
# The project's check_with rules, as far as a pattern can say them.
# A normalized absolute path (what posixpath.normpath keeps): no '//', no '.' or '..' step,
# no trailing '/' (gen's load checks say which and show the fix).
_NORMALIZED = r"(?!.*//)(?!.*/\.\.?(?:/|$))"
# systemd.name_problem's Windows device names (CON, nul.x), case-insensitively (JSON Schema's
# regular expressions have no flags: each letter as a class).
_DEVICE = "|".join(re.sub("[a-z]", lambda m: f"[{m[0].upper()}{m[0]}]", word.replace("[0-9]", "#")).replace("#", "[0-9]")
                   for word in DEVICE_NAMES)
_CHECK_WITH: dict[str, dict[str, Any]] = {
    # systemd.name_problem: 1 to 100 characters, a letter or digit first, no '.'/'-' last, no '..',
    # no device name
    "unit_name": {"pattern": rf"^(?!.*\.\.)(?!(?:{_DEVICE})(?:\.|$))[A-Za-z0-9](?:[A-Za-z0-9_.-]{{0,98}}[A-Za-z0-9_])?$"},
    "abs_path": {"pattern": f"^{_NORMALIZED}(?:/|/.*[^/])$"},
    "unit_path": {"pattern": f"^{_NORMALIZED}(?:/|/[^$]*[^/$])$"},  # systemd's path syntax is gen's
    "not_bool": {},  # JSON's booleans are no strings or numbers: the types already refuse them
    # Load-side checks of addresses, CPU lists and normalized paths: no pattern
    # says them exactly, so they stay gen's (the regex next to them, if any, still applies).
    "norm_path": {"pattern": "^/"},
    "ip_address": {},
    "net_address": {},
    "cpu_list": {},
    # A count (the integer type) or a percentage; a pattern applies to the string form only.
    "rollout_size": {"pattern": f"^{ROLLOUT_PERCENT}$"},
}
# Cerberus rules met that have no translation (each "path: rule"); a test keeps it empty.
UNTRANSLATED: set[str] = set()
# Rules that shape only the parent or nothing at all in JSON Schema.
_HANDLED_ELSEWHERE = {"required", "nullable"}


def _types(rule: Any) -> list[str]:
    names = rule if isinstance(rule, list) else [rule]
    return list(dict.fromkeys(_TYPES[n] for n in names))


def _literal_default(text: str | None, types: list[str]) -> Any:
    """The default as a JSON value for editors, when the docs' text is one ("false", "22", "root")."""
    if text is None:
        return None
    if "boolean" in types and text in ("true", "false"):
        return text == "true"
    if "integer" in types and text.isdigit():
        return int(text)
    if types == ["string"] and re.fullmatch(r"[A-Za-z0-9_.:/-]+", text):
        return text
    return None


def _field(rules: dict[str, Any], path: str, documented: bool = True) -> dict[str, Any]:
    """One cerberus field's rules as a JSON Schema; ``path`` is its dotted docs path.

    A list's items share the list's path; ``documented=False`` keeps the text on the list only.
    """
    out: dict[str, Any] = {}
    if documented and path in DOCS:
        entry = DOCS[path]
        out["description"] = entry.description + (f" Default: {entry.default}." if entry.default else "")
        if entry.example is not None:
            out["examples"] = [entry.example]
    types = _types(rules["type"]) if "type" in rules else []
    if types:
        out["type"] = types[0] if len(types) == 1 else types
    if documented and path in DOCS:
        literal = _literal_default(DOCS[path].default, types)
        if literal is not None:
            out["default"] = literal
    for rule, value in rules.items():
        if rule in ("type", *_HANDLED_ELSEWHERE):
            continue
        if rule == "empty":
            if value is False:
                out.update({"minLength": 1} if "string" in types else {"minItems": 1})
        elif rule == "min":
            out["minimum"] = value
        elif rule == "max":
            out["maximum"] = value
        elif rule in ("minlength", "maxlength"):
            bound = "min" if rule == "minlength" else "max"
            out[f"{bound}Length" if types == ["string"] else f"{bound}Items"] = value
        elif rule == "allowed":
            out["enum"] = list(value)
        elif rule == "regex":
            out["pattern"] = value
        elif rule == "check_with":
            # gen's own checks say what a pattern can; one this table does not know stays gen's alone
            out.update(_CHECK_WITH.get(value, {}))
        elif rule == "schema" and "dict" in (rules["type"] if isinstance(rules["type"], list) else [rules["type"]]):
            out.update(_object(value, path))
        elif rule == "schema":
            out["items"] = _field(value, path, documented=False)
        elif rule == "keysrules":
            out["propertyNames"] = {k: v for k, v in _field(value, path + ".<key>").items()
                                    if k not in ("type",)}
        elif rule == "valuesrules":
            out["additionalProperties"] = _field(value, path + ".<value>")
        else:
            # A rule without a translation: the JSON Schema stays looser than gen (never
            # stricter); tests/test_schema_json.py fails until the table here learns it.
            UNTRANSLATED.add(f"{path}: {rule}")
    return out


def _object(fields: dict[str, Any], path: str) -> dict[str, Any]:
    """A cerberus mapping schema: properties, required keys, unknown keys refused (S001)."""
    properties = {key: _field(rules, f"{path}.{key}") for key, rules in fields.items()}
    required = [key for key, rules in fields.items() if rules.get("required")]
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``kind`` (``model``, ``host`` or ``rollout``)."""
    body = _object(_SCHEMAS[kind], kind)
    return {"$schema": DIALECT, "title": _TITLES[kind],
            "description": f"Generated by `gen schema {kind}` from generator/load/schema.py and "
                           "generator/load/schema_docs.py; do not edit.", **body}


def schema_text(kind: str) -> str:
    """The committed file's text: indented JSON with a final newline (deterministic)."""
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"


def schema_keys(kind: str) -> list[str]:
    """Every dotted docs path of ``kind``'s cerberus schema (the keys schema_docs must cover)."""
    fields = _SCHEMAS[kind]
    out: list[str] = []

    def walk(node: dict[str, Any], path: str) -> None:
        for key, rules in node.items():
            here = f"{path}.{key}"
            out.append(here)
            inner = rules.get("schema")
            if isinstance(inner, dict) and "type" in inner and isinstance(inner.get("schema"), dict) \
                    and inner.get("type") == "dict":
                walk(inner["schema"], here)  # a list of mappings: items add no step
            elif isinstance(inner, dict) and rules.get("type") == "dict":
                walk(inner, here)

    walk(fields, kind)
    return out
