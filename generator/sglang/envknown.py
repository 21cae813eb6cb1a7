"""The reviewed table of non-SGLang environment variables (``catalogs/env-known.yaml``).

Only the names in the table are checked; every other ``CUDA_*``/``NCCL_*``/``TORCH_*``/
``GLOO_*``/``HF_*`` variable passes (the issue's rule: other variables pass unless a
reviewed table says otherwise). Codes: E005 a value its reader does not understand, E103
(warning) a name its reader has renamed. (A variable gen sets itself, CUDA_VISIBLE_DEVICES
among them, is E004 from the rendered unit: generator/emit/owned_env.py.)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from generator.errors import Diagnostics, Position
from generator.sglang.datafiles import load_data_file, raise_if_errors
from generator.sglang.patterns import LinearPattern, compile_pattern

# The families the table may hold; a service setting none of them never reads the table.
PREFIXES = ("CUDA_", "NCCL_", "TORCH_", "GLOO_", "HF_")
FILE_NAME = "env-known.yaml"

_TEXT = {"type": "string", "empty": False}
SCHEMA = {
    "variables": {
        "type": "dict", "required": True,
        "keysrules": {"type": "string", "regex": r"^(CUDA|NCCL|TORCH|GLOO|HF)_[A-Z0-9_]+$"},
        "valuesrules": {"type": "dict", "schema": {
            "values": {"type": "list", "minlength": 1, "schema": _TEXT},
            "case": {"type": "string", "allowed": ["exact", "insensitive"]},
            "pattern": _TEXT, "split": {"type": "string"}, "renamed": _TEXT,
            "why": _TEXT, "source": {**_TEXT, "required": True}}},
    },
}


@dataclass(frozen=True)
class KnownVar:
    """One reviewed entry: the name its reader now reads, or which values its reader takes."""

    name: str
    values: tuple[str, ...]
    insensitive: bool
    pattern: LinearPattern | None
    split: str
    renamed: str | None
    why: str


def table_path(catalog_file: Path) -> Path:
    """``catalogs/env-known.yaml`` for a flag catalog ``catalogs/sglang/<pin>.json``."""
    return catalog_file.parent.parent / FILE_NAME


@functools.lru_cache(maxsize=4)
def load_table(path: Path) -> dict[str, KnownVar]:
    """The table at ``path``; a broken table is an input problem (DataFileError)."""
    diags = Diagnostics()
    doc = load_data_file(path, SCHEMA, diags)
    raise_if_errors(diags)
    assert doc is not None  # raise_if_errors raised otherwise
    out: dict[str, KnownVar] = {}
    for name, e in doc.data["variables"].items():
        pattern = None
        if e.get("pattern"):
            pattern, problem = compile_pattern(e["pattern"])
            if problem is not None:
                diags.error(doc.pos(("variables", name, "pattern")), "C015", f"{name}: bad pattern: {problem}")
                continue
        out[name] = KnownVar(name, tuple(e.get("values") or ()), e.get("case") == "insensitive",
                             pattern, e.get("split") or "", e.get("renamed"), e.get("why") or "")
    raise_if_errors(diags)
    return out


def _bad_value(var: KnownVar, value: str) -> str | None:
    if var.values:
        word = value.upper() if var.insensitive else value
        known = [v.upper() for v in var.values] if var.insensitive else list(var.values)
        if word not in known:
            return f"takes {'/'.join(var.values)}" + (" in any case" if var.insensitive else "")
    if var.pattern is not None:
        items = re.split(f"[{re.escape(var.split)}]+", value.strip()) if var.split else [value]
        bad = [i for i in items if not var.pattern.fullmatch(i)]
        if bad or not value.strip():
            return f"has item(s) {', '.join(repr(b) for b in bad) or repr(value)} of an unknown form"
    return None


def check_known(table: dict[str, KnownVar], env: Sequence[tuple[str, str, Position]], diags: Diagnostics) -> None:
    """Check every variable of ``env`` (name, value, where written) the table lists."""
    for name, value, pos in env:
        var = table.get(name)
        if var is None:
            continue
        if var.renamed:
            diags.warning(pos, "E103", f"'{name}' is the old name of '{var.renamed}' (its reader warns)",
                          f"did you mean '{var.renamed}'?")
        else:
            why = _bad_value(var, str(value))
            if why is not None:
                diags.error(pos, "E005", f"'{name}={value}': {name} {why}; {var.why}")
