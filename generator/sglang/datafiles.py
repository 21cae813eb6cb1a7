"""The data files under ``catalogs/`` read as input: positioned YAML and a schema.

``rules.yaml``, ``foreign-flags.yaml`` and ``renames.yaml`` are reviewed by hand, so a
broken entry is an input problem like a broken manifest: ``path:line:col: error[CODE]``,
all of them at once, exit 1 (never exit 4 without a position). YAML problems keep their
``Y0xx`` codes and schema problems their ``S0xx`` codes; what only these files can get
wrong has a ``C0xx`` code:

  C010  a rule id without a predicate in generator/sglang/rules/predicates/
  C011  a predicate without a rule in rules.yaml
  C012  an id or a code used twice
  C013  a rule's code does not fit its severity (X0xx and X2xx errors, X1xx warnings)
  C014  a version range that is not "all" or comma-joined bounds like ">=0.5.15,<0.5.23"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.errors import Diagnostic, Diagnostics, InputError
from generator.load.limits import MAX_DATA_NODES
from generator.load.manifests import Document, load_file
from generator.load.schema import FLAG_RE, validate


class DataFileError(InputError):
    """A data file under catalogs/ is broken; carries every positioned diagnostic."""


def display_path(path: Path) -> str:
    """``catalogs/<name>`` for the project's tables (as manifests show ``models/x.yaml``)."""
    if path.parent.name == "catalogs":
        return f"catalogs/{path.name}"
    return str(path)


def load_data_file(path: Path, schema: dict[str, Any], diags: Diagnostics) -> Document | None:
    """Load ``path`` with positions and validate it; None when it has an error.

    A data file of gen's own catalogs may hold more values than a manifest (MAX_DATA_NODES):
    rules.yaml grows with every rule.
    """
    doc = load_file(path, display_path(path), diags, MAX_DATA_NODES)
    if doc is None:
        return None
    if not validate(doc, schema, diags):
        return None
    return doc


def raise_if_errors(diags: Diagnostics) -> None:
    """Raise DataFileError with every error recorded in ``diags``."""
    # dict.fromkeys: a YAML alias (shared params) reports its anchor's problem only once.
    errors: list[Diagnostic] = list(dict.fromkeys(d for d in diags.items if d.is_error))
    if errors:
        raise DataFileError(errors)


_STRING = {"type": "string", "required": True, "empty": False}
_RULE_ID_RE = r"^[a-z0-9][a-z0-9-]*$"
_CODE_RE = r"^[XGM][012][0-9]{2}$"  # X flag rules, G GPU rules, M model rules (the checkpoint against the flags)

RULES_SCHEMA: dict[str, Any] = {
    "rules": {
        "type": "list", "required": True,
        "schema": {
            "type": "dict",
            "schema": {
                "id": {**_STRING, "regex": _RULE_ID_RE},
                "code": {**_STRING, "regex": _CODE_RE},
                "versions": _STRING,
                "severity": {**_STRING, "allowed": ["error", "warning"]},
                "enforced": {**_STRING, "allowed": ["args", "runtime", "none"]},
                "message": _STRING,
                "fix": _STRING,
                "evidence": {**_STRING, "allowed": ["run", "read"]},
                # name -> {version range -> value}
                "params": {"type": "dict", "keysrules": {"type": "string"},
                           "valuesrules": {"type": "dict", "keysrules": {"type": "string"}}},
                # check name -> field name -> template (one entry per SGLang check the rule mirrors)
                "checks": {"type": "dict", "keysrules": {**_STRING, "regex": _RULE_ID_RE},
                           "valuesrules": {"type": "dict", "keysrules": {**_STRING, "regex": r"[a-z_]+"},
                                           "valuesrules": {"type": "string"}}},  # "" is a text too (no suffix)
                # item name -> template: the texts of a list's entries (a predicate's item(name, ...))
                "items": {"type": "dict", "keysrules": {**_STRING, "regex": _RULE_ID_RE},
                          "valuesrules": {"type": "string"}},
                # a declarative rule: its condition (checked by generator/sglang/rules/when.py) and blame
                "when": {"type": "dict"},
                "blame": {"type": "list", "schema": _STRING},
            },
        },
    },
}

# One entry of foreign-flags.yaml (the file maps each foreign flag to one; tables.py checks
# the flag names and each entry against this).
FOREIGN_ENTRY_SCHEMA: dict[str, Any] = {
    "server": _STRING,
    "dest": {"type": "string", "nullable": True, "empty": False},
    "also": {"type": "list", "schema": {"type": "string"}},
    "note": {"type": "string", "empty": False},
}

RENAMES_SCHEMA: dict[str, Any] = {
    "options": {
        "type": "dict",
        "keysrules": {"type": "string", "regex": FLAG_RE},
        "valuesrules": {"type": ["string", "list"], "regex": FLAG_RE,
                        "schema": {"type": "string", "regex": FLAG_RE}},
    },
    "dests": {
        "type": "list",
        "schema": {"type": "list", "minlength": 2, "schema": {"type": "string", "empty": False}},
    },
}
