"""Reading catalogs/rules.yaml and checking it against the registered predicates."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from generator.errors import Severity
from generator.sglang.catalog import Catalog, tables_dir
from generator.sglang.rules.registry import PREDICATES
from generator.sglang.rules.spec import RuleSpec, RulesFormatError, VersionRange

RULES_FILE = "rules.yaml"
_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING}
_ENFORCED = ("args", "runtime", "none")


def rules_path(catalog: Catalog) -> Path:
    """catalogs/rules.yaml beside the catalog's flag tables."""
    return tables_dir(catalog.source_file) / RULES_FILE


def load_rules(path: Path) -> tuple[RuleSpec, ...]:
    """Read and check rules.yaml (cached on the file's mtime)."""
    return _load_rules_cached(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _load_rules_cached(path: Path, _mtime: int) -> tuple[RuleSpec, ...]:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}  # libyaml when installed
    out: list[RuleSpec] = []
    seen_codes: dict[str, str] = {}
    for item in data.get("rules") or []:
        try:
            spec = RuleSpec(
                id=item["id"], code=item["code"], versions=VersionRange.parse(item["versions"]),
                severity=_SEVERITIES[item["severity"]], enforced=item["enforced"],
                message=item["message"], fix=item["fix"], evidence=item["evidence"],
                params=item.get("params") or {},
            )
        except (KeyError, TypeError) as exc:
            raise RulesFormatError(f"{path}: malformed rule {item!r}: {exc!r}") from exc
        family = "X0" if spec.severity is Severity.ERROR else "X1"
        if not re.fullmatch(r"X\d{3}", spec.code) or not spec.code.startswith(family):
            raise RulesFormatError(f"{path}: rule {spec.id}: code {spec.code} does not fit "
                                   f"severity {spec.severity.value} ({family}xx)")
        if spec.code in seen_codes:
            raise RulesFormatError(f"{path}: code {spec.code} used by {seen_codes[spec.code]} and {spec.id}")
        if spec.enforced not in _ENFORCED:
            raise RulesFormatError(f"{path}: rule {spec.id}: enforced must be one of {_ENFORCED}")
        seen_codes[spec.code] = spec.id
        out.append(spec)
    ids = [r.id for r in out]
    missing = sorted(set(ids) - set(PREDICATES))
    extra = sorted(set(PREDICATES) - set(ids))
    if missing or extra or len(ids) != len(set(ids)):
        raise RulesFormatError(f"{path}: rules without a predicate {missing}, predicates without "
                               f"a rule {extra}, or an id twice")
    return tuple(out)
