"""What changed in SGLang's environment variables between two pins (``gen sglang diff``).

Compares the env catalogs (``<pin>.env.json``): SGLANG_/SGL_ variables added, removed
(with SGLang's deprecation text when it has one), and changed in type or default.
"""

from __future__ import annotations

from typing import Any

from generator.sglang.envcheck import PREFIXES, EnvCatalog
from generator.sglang.flaghistory import changed_section


def _shown(value: Any) -> str:
    if isinstance(value, dict) and "expr" in value:
        return str(value["expr"])
    return "null" if value is None else str(value)


def format_env_diff(a: EnvCatalog, b: EnvCatalog) -> str:
    """A text block like the flag diff's: a summary line, then added, removed, changed."""
    names_a = {n for n in a.variables if n.startswith(PREFIXES)}
    names_b = {n for n in b.variables if n.startswith(PREFIXES)}
    added, removed = sorted(names_b - names_a), sorted(names_a - names_b)
    changed: list[tuple[str, list[str]]] = []
    for name in sorted(names_a & names_b):
        va, vb = a.variables[name], b.variables[name]
        notes = []
        if va.type != vb.type:
            notes.append(f"type {va.type} -> {vb.type}")
        if va.registry and vb.registry and va.default != vb.default:
            notes.append(f"default {_shown(va.default)} -> {_shown(vb.default)}")
        if va.registry != vb.registry:
            notes.append("now in the typed registry" if vb.registry else "now read ad hoc")
        if notes:
            changed.append((name, notes))
    lines = [f"SGLang {a.pin} -> {b.pin} environment: {len(names_a)} -> {len(names_b)} "
             f"SGLANG_/SGL_ variables; {len(added)} added, {len(removed)} removed, "
             f"{len(changed)} changed", ""]
    if removed:
        lines.append(f"Removed ({len(removed)}):")
        for name in removed:
            dep = b.deprecated.get(name)
            said = f"  (SGLang {b.pin}: {dep['message']})" if dep and dep.get("message") else ""
            lines.append(f"  - {name}{said}")
        lines.append("")
    if added:
        lines.append(f"Added ({len(added)}):")
        lines += [f"  + {name} ({b.variables[name].type})" for name in added]
        lines.append("")
    lines += changed_section(changed)
    return "\n".join(lines)
