"""The editor schemas' completions from the committed SGLang pins (README: Editor schema).

The JSON Schemas of :mod:`generator.load.schema_json` say the shape of a manifest; what a
value may be often depends on the SGLang the host runs. An editor cannot know the pin of
the host a model will run on, so the schema offers what the committed catalogs
(``catalogs/sglang/<pin>.json``) accept, each value saying which pins take it:

* a manifest key that sets a flag with choices (``parsers.tool_call``, ``parsers.reasoning``,
  ``dtype``, ...; :data:`generator.load.schema_docs.DOCS` names each key's dest) lists the
  choices of every pin; a flag whose help names its built-in values without fixing them
  (``--speculative-algorithm`` of 0.5.23: "Builtins: EAGLE, ... Or any name registered")
  lists those and still takes any text;
* ``args:`` (of a model and of a service) completes every flag of the pins, with its help,
  except the flags a manifest key sets and those that carry a secret (K001).

The schema stays looser than ``gen check`` (never stricter): a value is listed when one
committed pin accepts it, and ``gen check`` judges it against the host's own pin.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator.errors import GenError
from generator.load.captured import digest_problem
from generator.load.schema_docs import DOCS
from generator.load.schema_json import json_schema
from generator.sglang.catalog import Action, Catalog, known_pins, load_catalog
from generator.sglang.secret_flags import is_secret_action

# "Builtins: EAGLE, EAGLE3, NEXTN." in a help text: values a free-text flag knows by name.
_BUILTINS_RE = re.compile(r"\bBuiltins: ([A-Za-z0-9_.-]+(?:, [A-Za-z0-9_.-]+)*)\.")


def committed_catalogs(root: Path) -> list[Catalog] | None:
    """The catalogs of ROOT's committed pins that load (a broken one is gen check's to report);
    None when one was edited after its capture (C016/C017): the schemas wait for the fix, as
    docs/rules.md waits for a broken rules.yaml, so gen check reports the edit alone."""
    out = []
    for pin in known_pins(root):
        try:
            catalog = load_catalog(root, pin)
            if digest_problem(catalog.source_file.read_bytes()) is not None:
                return None
        except (GenError, OSError, ValueError):
            continue
        out.append(catalog)
    return out


def _values(action: Action) -> tuple[tuple[str, ...], bool]:
    """The values an action names, and whether it takes others too (help-named built-ins)."""
    if action.choices:
        return tuple(str(c) for c in action.choices), False
    found = _BUILTINS_RE.search(action.help or "")
    return (tuple(found.group(1).split(", ")), True) if found else ((), True)


def _pins_text(pins: Sequence[str], every: Sequence[str]) -> str:
    """``SGLang 0.5.9, 0.5.23 (every committed pin)``, or the pins alone when not all."""
    return f"SGLang {', '.join(pins)}" + (" (every committed pin)" if list(pins) == list(every) else "")


def _node(schema: dict[str, Any], dotted: str) -> dict[str, Any] | None:
    """The schema of a docs path (``model.parsers.tool_call``, ``host.services.args``)."""
    node: Any = schema
    for key in dotted.split(".")[1:]:
        if not isinstance(node, dict):
            return None
        if node.get("type") == "array":
            node = node.get("items")
        node = (node or {}).get("properties", {}).get(key)
    return node if isinstance(node, dict) else None


def _choices(node: dict[str, Any], dest: str, catalogs: Sequence[Catalog]) -> None:
    """The values of ``dest`` over the pins, as ``anyOf`` constants saying their pins."""
    pins_of: dict[str, list[str]] = {}
    open_on: list[str] = []
    for catalog in catalogs:
        action = catalog.by_dest(dest)
        if action is None:
            continue
        values, is_open = _values(action)
        for value in values:
            pins_of.setdefault(value, []).append(catalog.pin)
        if is_open:
            open_on.append(catalog.pin)
    if not pins_of:
        return
    every = [c.pin for c in catalogs]
    options: list[dict[str, Any]] = [{"const": v, "description": f"accepted by {_pins_text(p, every)}"}
                                     for v, p in pins_of.items()]
    if open_on:
        options.append({"type": "string", "description": f"{_pins_text(open_on, every)}: also any name "
                                                         "registered with SGLang (its help says so)"})
    node["anyOf"] = options


ARG_VALUE_REF = "#/$defs/arg_value"  # the value rules every flag of args: shares


def _flag_properties(args: dict[str, Any], catalogs: Sequence[Catalog], set_by_keys: set[str]) -> None:
    """Every flag of the pins as a property of ``args``, its value under the rules of any flag."""
    if not isinstance(args.get("additionalProperties"), dict):
        return
    every = [c.pin for c in catalogs]
    pins_of: dict[str, list[str]] = {}
    help_of: dict[str, str] = {}
    for catalog in catalogs:
        for action in catalog.actions:
            if action.dest in set_by_keys or action.deprecated is not None or action.kind == "deprecated" \
                    or is_secret_action(action) or action.help == "==SUPPRESS==":
                continue
            pins_of.setdefault(action.canonical, []).append(catalog.pin)
            help_of[action.canonical] = action.help or ""  # the newest pin's words (catalogs in pin order)
    properties = {}
    for flag in sorted(pins_of):
        properties[flag] = {"$ref": ARG_VALUE_REF,
                            "description": f"{help_of[flag]} ({_pins_text(pins_of[flag], every)})".strip()}
    args["properties"] = properties


def with_pin_completions(schema: dict[str, Any], kind: str, catalogs: Sequence[Catalog]) -> dict[str, Any]:
    """``schema`` (of ``kind``) with the choices and flags of ``catalogs`` for editors to complete."""
    if not catalogs:
        return schema
    out = copy.deepcopy(schema)
    set_by_keys = {doc.flag for doc in DOCS.values() if doc.flag}
    for path, doc in DOCS.items():
        if not path.startswith(f"{kind}.") or not doc.flag:
            continue
        node = _node(out, path)
        if node is not None and node.get("type") == "string":
            _choices(node, doc.flag, catalogs)
    for path in (f"{kind}.args", f"{kind}.services.args"):
        node = _node(out, path)
        if node is not None:
            _flag_properties(node, catalogs, set_by_keys)
            value = {k: v for k, v in node["additionalProperties"].items() if k != "description"}
            out.setdefault("$defs", {})["arg_value"] = value
    return out


def schema_file_text(kind: str, root: Path) -> str | None:
    """``schemas/<kind>.schema.json`` of the repository at ROOT: the JSON Schema with the
    completions of its committed pins, as indented JSON with a final newline (deterministic);
    None while a catalog is edited after its capture (:func:`committed_catalogs`)."""
    catalogs = committed_catalogs(root)
    if catalogs is None:
        return None
    schema = with_pin_completions(json_schema(kind), kind, catalogs)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
