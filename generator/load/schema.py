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

from cerberus import errors as cerrors

from generator.errors import Diagnostics
from generator.load.checks import CUSTOM, GenValidator
from generator.load.limits import MAX_DIAGNOSTICS
from generator.load.manifests import Document, DocPath
from generator.load.pins import PIN_RE
from generator.load.values import check_values, describe, dotted as _dotted, shown

ENV_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"
FLAG_RE = r"^--[A-Za-z0-9][A-Za-z0-9_.-]*$"
PCI_RE = r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$"
CPULIST_RE = r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$"
COMMIT_RE = r"^[0-9a-f]{7,40}$"
USER_RE = r"^[a-z_][a-z0-9_-]{0,31}$"
# A Linux interface name (IFNAMSIZ: at most 15 characters), as NCCL_SOCKET_IFNAME takes it.
IFNAME_RE = r"^[A-Za-z0-9_.-]{1,15}$"
# What other nodes dial for --dist-init-addr: an IPv4/IPv6 literal or a DNS name (no port).
NET_ADDRESS_RE = r"^([0-9A-Fa-f:.]+|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)$"
# A CUDA compute capability as `nvidia-smi --query-gpu=compute_cap` prints it: "12.0", "9.0".
COMPUTE_CAP_RE = r"^[1-9][0-9]?\.[0-9]$"
# A driver version as nvidia-smi prints it ("580.95.05", "550.54.15") and a CUDA version ("12.8").
DRIVER_RE = r"^[0-9]+(\.[0-9]+){1,3}$"
CUDA_VERSION_RE = r"^[0-9]+\.[0-9]+$"
# An entry of torch.cuda.get_arch_list(): "sm_90", "sm_90a", "sm_120", "compute_120" (PTX).
ARCH_RE = r"^(sm|compute)_[0-9]{2,3}[a-z]?$"
# A cell of `nvidia-smi topo -m` between two GPUs (its legend): X itself, NV<n> bonded NVLinks,
# PIX one PCIe bridge, PXB several, PHB a host bridge, NODE host bridges of one NUMA node,
# SYS the interconnect between NUMA nodes.
LINK_RE = r"^(X|SYS|NODE|PHB|PXB|PIX|NV[1-9][0-9]?)$"


PORT = {"min": 1, "max": 65535}
GPU_INDEX = {"type": "integer", "min": 0, "max": 1023}  # nvidia-smi numbers GPUs from 0
NUMA_NODE = {"min": 0, "max": 1023}  # MAX_NUMNODES of Linux is 1024
COUNT = {"min": 1, "max": 1024}  # parallel sizes, speculative steps: far above any real setup


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

# Rollout strategy (generator/load/rollout.py): the whole of rollout.yaml, and a model's
# `rollout:` overrides. A size is a count of hosts (min/max) or a percentage ("25%", A001).
ROLLOUT_SIZE = {"type": ["integer", "string"], "min": 1, "max": 100_000, "check_with": "rollout_size"}
ROLLOUT_SCHEMA: dict[str, Any] = {
    "canary": {"type": "integer", "min": 0, "max": 100_000},
    "batch": ROLLOUT_SIZE,
    "max_fail_percentage": {"type": "integer", "min": 0, "max": 100},
    "max_unavailable": ROLLOUT_SIZE,
}
# Acknowledged warnings (load/acks.py): which code, and why; pipeline/acks.py checks the rest.
ACK_KEY = "ack"
ACK_CODE_RE = r"^[A-Z][0-9]{3}$"
ACK = {"type": "list", "schema": {"type": "dict", "schema": {
    "code": {"type": "string", "required": True, "regex": ACK_CODE_RE},
    "reason": {"type": "string", "required": True, "empty": False},
}}}

MODEL_SCHEMA: dict[str, Any] = {
    "name": _name(),
    "description": {"type": "string"},
    "weights": {
        "type": "dict",
        "required": True,
        "schema": {
            "path": _abs_path(required=True),
            "format": {"type": "string", "allowed": ["safetensors", "gguf", "pt"]},
            # Optional: a model snapshot (catalogs/models/) gives it; without one M010 asks for it.
            "size_gb": {"type": "number", "min": 0.001, "max": 100_000},
            "shards": {"type": "integer", "min": 1, "max": 100_000},
            "params_b": {"type": "number", "min": 0, "max": 100_000},
            "active_params_b": {"type": "number", "min": 0, "max": 100_000},
            "quantization": {"type": "string"},
        },
    },
    "served_model_name": {"type": "string", "empty": False},
    "dtype": {"type": "string", "empty": False},
    "trust_remote_code": {"type": "boolean"},
    "context_length": {"type": "integer", "min": 1, "max": 2**31 - 1},
    "parallel": {
        "type": "dict",
        "schema": {
            "tp": {"type": "integer", **COUNT},
            "pp": {"type": "integer", **COUNT},
            "dp": {"type": "integer", **COUNT},
            "ep": {"type": "integer", **COUNT},
            "dp_attention": {"type": "boolean"},
        },
    },
    "speculative": {
        "type": "dict",
        "schema": {
            "algorithm": {"type": "string", "required": True, "empty": False},
            "num_steps": {"type": "integer", **COUNT},
            "eagle_topk": {"type": "integer", **COUNT},
            "num_draft_tokens": {"type": "integer", **COUNT},
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
        "schema": {"mem_fraction_static": {"type": "number", "min": 0, "max": 1}},
    },
    "args": ARGS,
    "env": ENV,
    "rollout": {"type": "dict", "schema": ROLLOUT_SCHEMA},
    # One replica over several hosts: the list order is the node rank (rank 0 first).
    "multinode": {
        "type": "dict",
        "schema": {
            "hosts": {"type": "list", "required": True, "minlength": 2,
                      "schema": {"type": "string", "empty": False, "check_with": "unit_name"}},
            "port": {"type": "integer", "required": True, **PORT},
        },
    },
    ACK_KEY: ACK,
}

SERVICE_SCHEMA: dict[str, Any] = {
    "name": _name(),
    "model": {"type": "string", "required": True, "empty": False},
    "port": {"type": "integer", "required": True, **PORT},
    "listen": {"type": "string", "empty": False, "check_with": "ip_address"},
    "gpus": {"type": "list", "schema": GPU_INDEX, "minlength": 1},
    "allow_cross_numa": {"type": "boolean"},
    "enabled": {"type": "boolean"},
    "timeout_start_min": {"type": "integer", "min": 1, "max": 10_080},  # a week
    # The unit also reads /etc/sglang/secrets/<name>.env (root, 0600); gen never writes it.
    "secret_env": {"type": "boolean"},
    # Flags whose values SGLang reads from /etc/credstore/sglang-<name>.yaml (root, 0600) via
    # --config and a systemd credential; gen never sees the values (generator/emit/secrets.py).
    "secret_args": {"type": "list", "schema": {"type": "string", "regex": FLAG_RE}},
    "args": ARGS,
    "env": ENV,
}

HOST_SCHEMA: dict[str, Any] = {
    "name": _name(),
    "description": {"type": "string"},
    "address": {"type": "string", "required": True, "empty": False, "regex": NET_ADDRESS_RE,
                "check_with": "net_address"},
    "ssh": {
        "type": "dict",
        "schema": {
            "user": {"type": "string", "empty": False, "regex": USER_RE},
            "port": {"type": "integer", **PORT},
            # Other inventories of the same machine (same address and port); see load/addresses.py.
            "shared_with": {"type": "list", "schema": {"type": "string", "empty": False}},
        },
    },
    "gpus": {
        "type": "list",
        "required": True,
        "minlength": 1,
        "schema": {
            "type": "dict",
            "schema": {
                "index": {**GPU_INDEX, "required": True},
                "pci_bus_id": {"type": "string", "required": True, "regex": PCI_RE},
                # One of memory_mib (measured) or memory_gb (typed from a data sheet) is
                # required, and both agree where both are given (R040/R041, load/resolve.py).
                "memory_mib": {"type": "integer", "min": 1, "max": 10_000_000},
                "memory_gb": {"type": "number", "min": 1, "max": 10_000},
                "compute_cap": {"type": "string", "regex": COMPUTE_CAP_RE},
                "numa_node": {"type": "integer", "required": True, **NUMA_NODE},
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
                "node": {"type": "integer", "required": True, **NUMA_NODE},
                "cpus": {"type": "string", "required": True, "regex": CPULIST_RE, "check_with": "cpu_list"},
            },
        },
    },
    # What `gen host snapshot` captured from the host; `gen verify` fails when it differs.
    "facts": {
        "type": "dict",
        "schema": {
            "driver_version": {"type": "string", "regex": DRIVER_RE},
            "cuda_version": {"type": "string", "regex": CUDA_VERSION_RE},
            # null: the host SGLang's torch is built without CUDA (absent: not known)
            "torch_cuda": {"type": "string", "regex": CUDA_VERSION_RE, "nullable": True},
            "torch_arch_list": {"type": "list", "schema": {"type": "string", "regex": ARCH_RE}},
            "topology": {
                "type": "dict",
                "schema": {
                    "gpus": {"type": "list", "required": True, "minlength": 1, "schema": GPU_INDEX},
                    "links": {"type": "list", "required": True, "minlength": 1,
                              "schema": {"type": "list", "schema": {"type": "string", "regex": LINK_RE}}},
                },
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
                         "schema": GPU_INDEX},
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
            "address": {"type": "string", "required": True, "empty": False, "regex": NET_ADDRESS_RE,
                        "check_with": "net_address"},
            "interface": {"type": "string", "required": True, "empty": False, "regex": IFNAME_RE},
        },
    },
    ACK_KEY: ACK,
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
    ACK_CODE_RE: "is not a diagnostic code like 'F104' (a letter and three digits)",
    COMPUTE_CAP_RE: "is not a compute capability like \"12.0\" (as `nvidia-smi --query-gpu=compute_cap` "
                    "prints it)",
    DRIVER_RE: "is not a driver version like \"580.95.05\" (as nvidia-smi prints it)",
    CUDA_VERSION_RE: "is not a CUDA version like \"12.8\"",
    ARCH_RE: "is not an architecture of torch.cuda.get_arch_list() like 'sm_120' or 'compute_120'",
    LINK_RE: "is not a link of `nvidia-smi topo -m` (X, NV<n>, PIX, PXB, PHB, NODE or SYS)",
}

def _either(words: list[str]) -> str:
    """'a', 'a or b', 'a, b or c' without repeats (integer and float both read 'a number')."""
    unique = list(dict.fromkeys(words))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:-1]) + " or " + unique[-1]


_TYPE_NAMES = {"string": "a string", "integer": "an integer", "float": "a number",
               "number": "a number", "boolean": "true or false", "dict": "a mapping",
               "list": "a list"}


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


# A string where a mapping or a list was meant: YAML's reading of a missing space.
_KEY_NO_SPACE = re.compile(r"^(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*):(?P<value>(?!//)\S.*)$")
_DASH_NO_SPACE = re.compile(r"^-(?P<item>[^\s-].*)$")


def _one_word_hint(wanted: list[Any], value: Any) -> str | None:
    """The fix for a string that YAML read from a mapping or list written without its space:
    ``path:/a`` (one word, not a key and a value), ``-0`` (not a list item)."""
    if not isinstance(value, str):
        return None
    first = value.split(" ", 1)[0]
    found = _KEY_NO_SPACE.match(first)
    if "dict" in wanted and found:
        return (f"write '{found.group('key')}: {found.group('value')}': without a space after the colon "
                "YAML reads one word, not a key and its value")
    item = _DASH_NO_SPACE.match(first)
    if "list" in wanted and item:
        return f"write '- {item.group('item')}': a list item needs a space after its '-'"
    return None


def _ack_hint(path: DocPath, value: Any) -> str | None:
    """The shape of an ``ack:`` entry, for ``ack: [X160]`` or ``ack: {X160: why}``: every
    acknowledgement carries its reason."""
    if not path or path[0] != ACK_KEY or len(path) > 2:
        return None
    code = value if isinstance(value, str) else next(iter(value), None) if isinstance(value, dict) and value else None
    code = code if isinstance(code, str) and re.fullmatch(ACK_CODE_RE, code) else "F104"
    return f"write each entry as a code and its reason: '- {{code: {code}, reason: \"why it is accepted\"}}'"


def _child_keys(rules: Any) -> set[str]:
    """The keys a mapping (or the mappings of a list) under ``rules`` may hold."""
    if not isinstance(rules, dict):
        return set()
    if rules.get("type") == "list":
        rules = rules.get("schema")
        if not isinstance(rules, dict):
            return set()
    inner = rules.get("schema")
    return {k for k in inner if isinstance(k, str)} if rules.get("type") == "dict" and isinstance(inner, dict) else set()


def _home_of(doc: Document, schema: dict[str, Any], schema_path: DocPath, path: DocPath) -> str | None:
    """For a key unknown where it was written: the sibling key it belongs under, when one
    holds it (a key indented too little, or a section whose lines lost their indentation)."""
    node: Any = schema
    for step in schema_path:
        node = node.get(step) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None
    key, parent = path[-1], path[:-1]
    line = doc.key_pos.get(path, (0, 0))[0]
    homes = [s for s, rules in node.items() if isinstance(s, str) and key in _child_keys(rules)]
    listed = {s for s in homes if isinstance(node[s], dict) and node[s].get("type") == "list"}
    written = [(doc.key_pos[parent + (s,)][0], s) for s in homes if parent + (s,) in doc.key_pos]
    above = [w for w in written if w[0] < line]
    if above:
        at, home = max(above)
        into = f"into an item of '{home}'" if home in listed else f"under '{home}'"
        return f"'{key}' is a key of {'an item of ' if home in listed else ''}'{home}' (line {at}): indent it {into}"
    if written or homes:
        at, home = min(written) if written else (0, sorted(homes)[0])
        return (f"'{key}' is a key of {'an item of ' if home in listed else ''}'{home}'"
                + (f" (line {at})" if at else "") + f": write it under '{home}:'")
    return None


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest spelling among candidates, or None (difflib, as git and argparse do)."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def check_strings(doc: Document, diags: Diagnostics) -> bool:
    """Refuse control and format characters, NaN, infinity and huge integers in every key and
    value of a document (:mod:`generator.load.values`). Returns True when it holds none."""
    return check_values(doc, diags)


_VALIDATORS: dict[int, GenValidator] = {}


def _validator_for(schema: dict[str, Any]) -> GenValidator:
    """One validator per schema: cerberus checks the schema itself on construction, which
    costs more than validating a small document; the module-level schemas never change."""
    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        validator = _VALIDATORS[id(schema)] = GenValidator(schema)
    return validator


def error_paths(doc: Document, schema: dict[str, Any]) -> list[DocPath]:
    """The document path of every error the schema finds (validate() reports them)."""
    validator = _validator_for(schema)
    if not isinstance(doc.data, dict) or validator.validate(doc.data, normalize=False):
        return []
    return [tuple(e.document_path) for e in _leaves(validator._errors)]


def validate(doc: Document, schema: dict[str, Any], diags: Diagnostics, base: DocPath = ()) -> bool:
    """Validate ``doc.data`` (or the part at ``base``) against a schema; record diagnostics.

    Returns True when this schema found no error.
    """
    data: Any = doc.data
    for step in base:
        data = data[step]
    if not isinstance(data, dict):
        diags.error(doc.pos(base), "S002", f"expected a mapping at the top, got {describe(data)}")
        return False
    validator = _validator_for(schema)
    # No rule of these schemas normalizes (no coerce, default, rename or purge): skipping
    # cerberus' normalization pass halves the cost of a validation and changes nothing.
    if validator.validate(data, normalize=False):
        return True
    # In the order they were written, so the spelling hints (difflib: slow) go to the first
    # MAX_DIAGNOSTICS unknown keys, the ones a capped report shows.
    leaves = sorted(_leaves(validator._errors), key=lambda e: doc.pos(base + tuple(e.document_path), key=True))
    hints_left = MAX_DIAGNOSTICS
    for err in leaves:
        path = base + tuple(err.document_path)
        if path in doc.refused:
            continue  # a NaN or a control character, reported by check_strings already
        where = _dotted(path)
        if err.code == cerrors.UNKNOWN_FIELD.code:
            key = path[-1]
            hints_left -= 1
            home = _home_of(doc, schema, tuple(err.schema_path), path)
            hint = suggest(str(key), _known_keys(schema, tuple(err.schema_path))) if hints_left >= 0 else None
            diags.error(doc.pos(path, key=True), "S001", f"unknown key '{where}'",
                        home if home else f"did you mean '{hint}'?" if hint else None)
        elif err.code == cerrors.REQUIRED_FIELD.code:
            parent = path[:-1]
            diags.error(doc.pos(parent, key=bool(parent)), "S003", f"required key '{where}' is missing")
        elif err.code == cerrors.BAD_TYPE.code:
            wanted = err.constraint if isinstance(err.constraint, list) else [err.constraint]
            names = _either([_TYPE_NAMES.get(str(w), str(w)) for w in wanted])
            # YAML reads an unquoted 12.0 or 6000 as a number: a text field wants it quoted.
            quote = wanted == ["string"] and isinstance(err.value, (int, float)) and not isinstance(err.value, bool)
            diags.error(doc.pos(path), "S002", f"'{where}' must be {names}, got {describe(err.value)}",
                        "write it in quotes" if quote else _ack_hint(path, err.value) or _one_word_hint(wanted, err.value))
        elif err.code in (cerrors.MIN_VALUE.code, cerrors.MAX_VALUE.code):
            bound = "at least" if err.code == cerrors.MIN_VALUE.code else "at most"
            diags.error(doc.pos(path), "S005", f"'{where}' must be {bound} {err.constraint}, got {shown(err.value)}",
                        _percent_hint(err))
        elif err.code in (cerrors.MIN_LENGTH.code, cerrors.MAX_LENGTH.code):
            diags.error(doc.pos(path), "S005", f"'{where}' must have at least {err.constraint} item(s)")
        elif err.code == cerrors.EMPTY_NOT_ALLOWED.code:
            diags.error(doc.pos(path), "S005", f"'{where}' must not be empty")
        elif err.code == cerrors.UNALLOWED_VALUE.code:
            allowed = ", ".join(map(str, err.constraint))
            hint = suggest(str(err.value), map(str, err.constraint))
            diags.error(doc.pos(path), "S004", f"'{where}' must be one of: {allowed}; got {shown(err.value)}",
                        f"did you mean '{hint}'?" if hint else None)
        elif err.code == cerrors.REGEX_MISMATCH.code:
            is_key = bool(err.schema_path) and "keysrules" in err.schema_path
            text = _PATTERN_TEXT.get(err.constraint, f"does not match {err.constraint}")
            diags.error(doc.pos(path, key=is_key), "S009", f"{'key' if is_key else 'value'} "
                        f"{err.value!r} at '{_dotted(path[:-1]) if is_key else where}' {text}")
        elif err.code == cerrors.NOT_NULLABLE.code:
            # `key:` with nothing after it (and nothing indented below it) is YAML's null.
            diags.error(doc.pos(path), "S002", f"'{where}' has no value: it is null (nothing after '{path[-1]}:' "
                        "and nothing indented below it, or null written)",
                        f"write its value after '{path[-1]}:', or remove the key")
        elif err.code == cerrors.CUSTOM.code and err.info and str(err.info[0]).startswith("unit_path:"):
            diags.error(doc.pos(path), "S010", f"'{where}' cannot be written into a unit file: "
                        f"{str(err.info[0]).split(':', 1)[1]}")
        elif err.code == cerrors.CUSTOM.code and err.info and str(err.info[0]).split(":", 1)[0] in CUSTOM:
            rule, _, detail = str(err.info[0]).partition(":")
            code, text = CUSTOM[rule]
            diags.error(doc.pos(path), code, f"'{where}' {text.format(detail=detail)}, got {shown(err.value)}")
        else:  # a cerberus rule this mapping does not name yet: still positioned, never lost
            diags.error(doc.pos(path), "S000", f"'{where}': invalid value {err.value!r} ({err.rule})")
    return False


def _percent_hint(err: Any) -> str | None:
    """For a fraction (at most 1) written as a percentage: 85 means 0.85."""
    value = err.value
    if err.code == cerrors.MAX_VALUE.code and err.constraint == 1 and isinstance(value, (int, float)) \
            and not isinstance(value, bool) and 10 <= value <= 100:
        return f"a fraction, not a percentage: write {value / 100:g}"
    return None
