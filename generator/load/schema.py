"""cerberus schemas for model manifests, host inventories and services.

Validation maps every cerberus error back to the line and column where the offending
key or value was written, gives it a stable code, and suggests the right spelling for
unknown keys. Checks that apply to every string (no control characters) run as a walk
over the whole document, so no field can forget them.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Iterable

from cerberus import Validator, errors as cerrors

from generator import systemd
from generator.errors import Diagnostics
from generator.load.fastcheck import surely_valid
from generator.load.manifests import Document, DocPath

# Names become unit names and file names: systemd's unit-name alphabet, no "..".
NAME_RE = re.compile(r"^[A-Za-z0-9:_.-]+$")
ENV_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"
FLAG_RE = r"^--[A-Za-z0-9][A-Za-z0-9_.-]*$"
PCI_RE = r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$"
CPULIST_RE = r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$"
COMMIT_RE = r"^[0-9a-f]{7,40}$"
USER_RE = r"^[a-z_][a-z0-9_-]{0,31}$"
PIN_RE = r"^([0-9]+\.[0-9]+\.[0-9]+([.a-z0-9]*)|git-[0-9a-f]{40})$"
# A Linux interface name (IFNAMSIZ: at most 15 characters), as NCCL_SOCKET_IFNAME takes it.
IFNAME_RE = r"^[A-Za-z0-9_.-]{1,15}$"
# What other nodes dial for --dist-init-addr: an IPv4/IPv6 literal or a DNS name (no port).
NET_ADDRESS_RE = r"^([0-9A-Fa-f:.]+|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)$"


def _name() -> dict[str, Any]:
    return {"type": "string", "required": True, "empty": False, "check_with": "unit_name"}


def _abs_path(required: bool = False) -> dict[str, Any]:
    return {"type": "string", "required": required, "empty": False, "check_with": "abs_path"}


def _unit_path(required: bool = False) -> dict[str, Any]:
    """A host path gen writes into unit settings (ExecStart program, sandbox paths)."""
    return {"type": "string", "required": required, "empty": False, "check_with": "unit_path"}


ARG_VALUE = {"type": ["string", "integer", "float", "boolean", "list"],
             "schema": {"type": ["string", "integer", "float"], "check_with": "not_bool"}}
ARGS = {
    "type": "dict",
    "keysrules": {"type": "string", "regex": FLAG_RE},
    "valuesrules": ARG_VALUE,
}
ENV = {
    "type": "dict",
    "keysrules": {"type": "string", "regex": ENV_NAME_RE},
    # Booleans are refused: YAML's true would become "True" in the environment.
    "valuesrules": {"type": ["string", "integer", "float"], "check_with": "not_bool"},
}

MODEL_SCHEMA: dict[str, Any] = {
    "name": _name(),
    "description": {"type": "string"},
    "weights": {
        "type": "dict",
        "required": True,
        "schema": {
            "path": _abs_path(required=True),
            "format": {"type": "string", "allowed": ["safetensors", "gguf", "pt"]},
            "size_gb": {"type": "number", "required": True, "min": 0.001},
            "shards": {"type": "integer", "min": 1},
            "params_b": {"type": "number", "min": 0},
            "active_params_b": {"type": "number", "min": 0},
            "quantization": {"type": "string"},
        },
    },
    "served_model_name": {"type": "string", "empty": False},
    "dtype": {"type": "string", "empty": False},
    "trust_remote_code": {"type": "boolean"},
    "context_length": {"type": "integer", "min": 1},
    "parallel": {
        "type": "dict",
        "schema": {
            "tp": {"type": "integer", "min": 1},
            "pp": {"type": "integer", "min": 1},
            "dp": {"type": "integer", "min": 1},
            "ep": {"type": "integer", "min": 1},
            "dp_attention": {"type": "boolean"},
        },
    },
    "speculative": {
        "type": "dict",
        "schema": {
            "algorithm": {"type": "string", "required": True, "empty": False},
            "num_steps": {"type": "integer", "min": 1},
            "eagle_topk": {"type": "integer", "min": 1},
            "num_draft_tokens": {"type": "integer", "min": 1},
            "draft_model_path": _abs_path(),
        },
    },
    "parsers": {
        "type": "dict",
        "schema": {
            "reasoning": {"type": "string", "empty": False},
            "tool_call": {"type": "string", "empty": False},
        },
    },
    "memory": {
        "type": "dict",
        "schema": {"mem_fraction_static": {"type": "number"}},
    },
    "args": ARGS,
    "env": ENV,
    # One replica over several hosts: the list order is the node rank (rank 0 first).
    "multinode": {
        "type": "dict",
        "schema": {
            "hosts": {"type": "list", "required": True, "minlength": 2,
                      "schema": {"type": "string", "empty": False, "check_with": "unit_name"}},
            "port": {"type": "integer", "required": True, "min": 1, "max": 65535},
        },
    },
}

SERVICE_SCHEMA: dict[str, Any] = {
    "name": _name(),
    "model": {"type": "string", "required": True, "empty": False},
    "port": {"type": "integer", "required": True},
    "listen": {"type": "string", "empty": False},
    "gpus": {"type": "list", "schema": {"type": "integer", "min": 0}, "minlength": 1},
    "allow_cross_numa": {"type": "boolean"},
    "enabled": {"type": "boolean"},
    "timeout_start_min": {"type": "integer", "min": 1},
    # The unit also reads /etc/sglang/<name>.secret.env (root, 0600); gen never writes it.
    "secret_env": {"type": "boolean"},
    "args": ARGS,
    "env": ENV,
}

HOST_SCHEMA: dict[str, Any] = {
    "name": _name(),
    "description": {"type": "string"},
    "address": {"type": "string", "required": True, "empty": False},
    "ssh": {
        "type": "dict",
        "schema": {
            "user": {"type": "string", "empty": False},
            "port": {"type": "integer", "min": 1, "max": 65535},
        },
    },
    "gpus": {
        "type": "list",
        "required": True,
        "minlength": 1,
        "schema": {
            "type": "dict",
            "schema": {
                "index": {"type": "integer", "required": True, "min": 0},
                "pci_bus_id": {"type": "string", "required": True, "regex": PCI_RE},
                "memory_gb": {"type": "number", "required": True, "min": 1},
                "numa_node": {"type": "integer", "required": True, "min": 0},
                "model": {"type": "string"},
            },
        },
    },
    "numa": {
        "type": "list",
        "required": True,
        "minlength": 1,
        "schema": {
            "type": "dict",
            "schema": {
                "node": {"type": "integer", "required": True, "min": 0},
                "cpus": {"type": "string", "required": True, "regex": CPULIST_RE},
            },
        },
    },
    "vm_passthrough": {
        "type": "list",
        "schema": {
            "type": "dict",
            "schema": {
                "vm": {"type": "string", "required": True, "empty": False},
                "gpus": {"type": "list", "required": True, "minlength": 1,
                         "schema": {"type": "integer", "min": 0}},
            },
        },
    },
    "storage": {
        "type": "dict",
        "required": True,
        "schema": {
            "model_root": _unit_path(required=True),
            "retired": {"type": "list", "schema": _abs_path()},
        },
    },
    "sglang": {
        "type": "dict",
        "required": True,
        "schema": {
            "pin": {"type": "string", "required": True, "regex": PIN_RE},
            "python": _unit_path(required=True),
            "source_dir": _unit_path(),
            "commit": {"type": "string", "regex": COMMIT_RE},
            "user": {"type": "string", "regex": USER_RE},
        },
    },
    "services": {"type": "list", "schema": {"type": "dict", "schema": SERVICE_SCHEMA}},
    # For multi-node models: the address other nodes reach this host at, and its NIC.
    "network": {
        "type": "dict",
        "schema": {
            "address": {"type": "string", "required": True, "empty": False, "regex": NET_ADDRESS_RE},
            "interface": {"type": "string", "required": True, "empty": False, "regex": IFNAME_RE},
        },
    },
}


class _Validator(Validator):  # type: ignore[misc]
    """cerberus with the project's own checks (names, absolute paths)."""

    def _check_with_unit_name(self, field: str, value: Any) -> None:
        if isinstance(value, str) and (not NAME_RE.match(value) or ".." in value or len(value) > 200):
            self._error(field, "unit_name")

    def _check_with_not_bool(self, field: str, value: Any) -> None:
        if isinstance(value, bool):  # cerberus counts bool as integer; we do not
            self._error(field, "not_bool")

    def _check_with_abs_path(self, field: str, value: Any) -> None:
        if isinstance(value, str) and not value.startswith("/"):
            self._error(field, "abs_path")

    def _check_with_unit_path(self, field: str, value: Any) -> None:
        """Paths written into unit settings as they are (program, sandbox paths)."""
        if not isinstance(value, str):
            return
        if not value.startswith("/"):
            self._error(field, "abs_path")
            return
        try:
            systemd.path_value(value)
            if "$" in value:  # an ExecStart program path is not variable-expanded, argv[0] is
                raise ValueError(f"path contains '$': {value!r}")
        except ValueError as exc:
            self._error(field, "unit_path:" + str(exc))


_CUSTOM = {
    "unit_name": ("S007", "is not a safe name: use only [A-Za-z0-9:_.-], without '..'"),
    "abs_path": ("S006", "must be an absolute path"),
    "not_bool": ("S002", "must be a string or a number, not a boolean (quote it)"),
}

# Regex mismatches explained in words an operator can act on.
_PATTERN_TEXT = {
    FLAG_RE: "is not a flag: write SGLang flags in full, with the leading '--'",
    ENV_NAME_RE: "is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
    PCI_RE: "is not a PCI bus id like '00000000:01:00.0' (as nvidia-smi prints it)",
    CPULIST_RE: "is not a CPU list like '0-31,64-95'",
    COMMIT_RE: "is not a git commit (7 to 40 lowercase hex digits)",
    USER_RE: "is not a system user name ([a-z_][a-z0-9_-]*, at most 32 characters)",
    PIN_RE: "is not an SGLang pin: a release like '0.5.9' or 'git-<40 hex digits>'",
    IFNAME_RE: "is not a network interface name like 'enp65s0f0' (at most 15 characters)",
    NET_ADDRESS_RE: "is not an IP address or a DNS name (write the port in multinode.port)",
}

def _either(words: list[str]) -> str:
    """'a', 'a or b', 'a, b or c' without repeats (integer and float both read 'a number')."""
    unique = list(dict.fromkeys(words))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:-1]) + " or " + unique[-1]


_TYPE_NAMES = {"string": "a string", "integer": "an integer", "float": "a number",
               "number": "a number", "boolean": "true or false", "dict": "a mapping",
               "list": "a list"}


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"{type(value).__name__} {value!r}"


def _leaves(errs: Iterable[cerrors.ValidationError]) -> Iterable[cerrors.ValidationError]:
    for err in errs:
        if err.is_group_error:
            yield from _leaves(err.child_errors)
        else:
            yield err


def _known_keys(schema: dict[str, Any], schema_path: DocPath) -> list[str]:
    node: Any = schema
    for step in schema_path:
        node = node.get(step) if isinstance(node, dict) else None
        if node is None:
            return []
    return sorted(k for k in node if isinstance(k, str)) if isinstance(node, dict) else []


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest spelling among candidates, or None (difflib, as git and argparse do)."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def check_strings(doc: Document, diags: Diagnostics, data: Any = None, path: DocPath = ()) -> bool:
    """Refuse control characters (newline, NUL, ...) in every key and value of a document.

    Returns True when the document holds none.
    """
    before = len(diags.items)
    _check_strings(doc, diags, doc.data if data is None and not path else data, path)
    return len(diags.items) == before


def _check_strings(doc: Document, diags: Diagnostics, data: Any, path: DocPath) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str) and _has_control(key):
                diags.error(doc.pos(path + (key,), key=True), "S008",
                            f"key {key!r} contains a control character")
            elif isinstance(key, str) and systemd.noncharacter(key) is not None:
                diags.error(doc.pos(path + (key,), key=True), "S008",
                            f"key {key!r} contains a Unicode noncharacter, which systemd refuses")
            _check_strings(doc, diags, value, path + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _check_strings(doc, diags, value, path + (i,))
    elif isinstance(data, str) and _has_control(data):
        diags.error(doc.pos(path), "S008",
                    f"'{_dotted(path)}' contains a control character (newline, tab, NUL, ...): {data!r}")
    elif isinstance(data, str) and systemd.noncharacter(data) is not None:
        # Found by the hypothesis test of ExecStart= parse-back: systemd drops such a line.
        bad = ord(systemd.noncharacter(data) or "\0")
        diags.error(doc.pos(path), "S008", f"'{_dotted(path)}' contains the Unicode noncharacter "
                    f"U+{bad:04X}, which systemd refuses in unit and environment files: {data!r}")


def _has_control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def _dotted(path: DocPath) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(document)"


_VALIDATORS: dict[int, _Validator] = {}


def _validator_for(schema: dict[str, Any]) -> _Validator:
    """One validator per schema: cerberus checks the schema itself on construction, which
    costs more than validating a small document; the module-level schemas never change."""
    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        validator = _VALIDATORS[id(schema)] = _Validator(schema)
    return validator


def validate(doc: Document, schema: dict[str, Any], diags: Diagnostics, base: DocPath = ()) -> bool:
    """Validate ``doc.data`` (or the part at ``base``) against a schema; record diagnostics.

    Returns True when this schema found no error.
    """
    data: Any = doc.data
    for step in base:
        data = data[step]
    if not isinstance(data, dict):
        diags.error(doc.pos(base), "S002", f"expected a mapping at the top, got {_describe(data)}")
        return False
    validator = _validator_for(schema)
    if surely_valid(validator, schema, data):  # the common case, without cerberus' cost
        return True
    # No rule of these schemas normalizes (no coerce, default, rename or purge): skipping
    # cerberus' normalization pass halves the cost of a validation and changes nothing.
    if validator.validate(data, normalize=False):
        return True
    for err in _leaves(validator._errors):
        path = base + tuple(err.document_path)
        where = _dotted(path)
        if err.code == cerrors.UNKNOWN_FIELD.code:
            key = path[-1]
            hint = suggest(str(key), _known_keys(schema, tuple(err.schema_path)))
            diags.error(doc.pos(path, key=True), "S001", f"unknown key '{where}'",
                        f"did you mean '{hint}'?" if hint else None)
        elif err.code == cerrors.REQUIRED_FIELD.code:
            parent = path[:-1]
            diags.error(doc.pos(parent, key=bool(parent)), "S003", f"required key '{where}' is missing")
        elif err.code == cerrors.BAD_TYPE.code:
            wanted = err.constraint if isinstance(err.constraint, list) else [err.constraint]
            names = _either([_TYPE_NAMES.get(w, w) for w in wanted])
            diags.error(doc.pos(path), "S002", f"'{where}' must be {names}, got {_describe(err.value)}")
        elif err.code in (cerrors.MIN_VALUE.code, cerrors.MAX_VALUE.code):
            bound = "at least" if err.code == cerrors.MIN_VALUE.code else "at most"
            diags.error(doc.pos(path), "S005", f"'{where}' must be {bound} {err.constraint}, got {err.value!r}")
        elif err.code in (cerrors.MIN_LENGTH.code, cerrors.MAX_LENGTH.code):
            diags.error(doc.pos(path), "S005", f"'{where}' must have at least {err.constraint} item(s)")
        elif err.code == cerrors.EMPTY_NOT_ALLOWED.code:
            diags.error(doc.pos(path), "S005", f"'{where}' must not be empty")
        elif err.code == cerrors.UNALLOWED_VALUE.code:
            allowed = ", ".join(map(str, err.constraint))
            hint = suggest(str(err.value), map(str, err.constraint))
            diags.error(doc.pos(path), "S004", f"'{where}' must be one of: {allowed}; got {err.value!r}",
                        f"did you mean '{hint}'?" if hint else None)
        elif err.code == cerrors.REGEX_MISMATCH.code:
            is_key = bool(err.schema_path) and "keysrules" in err.schema_path
            text = _PATTERN_TEXT.get(err.constraint, f"does not match {err.constraint}")
            diags.error(doc.pos(path, key=is_key), "S009", f"{'key' if is_key else 'value'} "
                        f"{err.value!r} at '{_dotted(path[:-1]) if is_key else where}' {text}")
        elif err.code == cerrors.NOT_NULLABLE.code:
            diags.error(doc.pos(path), "S002", f"'{where}' must not be null")
        elif err.code == cerrors.CUSTOM.code and err.info and str(err.info[0]).startswith("unit_path:"):
            diags.error(doc.pos(path), "S010", f"'{where}' cannot be written into a unit file: "
                        f"{str(err.info[0]).split(':', 1)[1]}")
        elif err.code == cerrors.CUSTOM.code and err.info and err.info[0] in _CUSTOM:
            code, text = _CUSTOM[err.info[0]]
            diags.error(doc.pos(path), code, f"'{where}' {text}, got {err.value!r}")
        else:  # a cerberus rule this mapping does not name yet: still positioned, never lost
            diags.error(doc.pos(path), "S000", f"'{where}': invalid value {err.value!r} ({err.rule})")
    return False
