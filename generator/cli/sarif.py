"""SARIF 2.1.0 for ``gen check --format sarif``: CI code scanning shows findings on PR lines.

One run, tool ``gen``; one rule per diagnostic code that occurs (its family's meaning as
the short description); one result per diagnostic with its file and, when known, its
line and column (SARIF columns are 1-based, as gen's are). Paths are relative to the
repository root (``uriBaseId`` ``%SRCROOT%``), as GitHub's upload-sarif expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from generator import __version__
from generator.errors import Diagnostic, Severity

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

# The diagnostic code families (README: Diagnostics). Two-letter prefixes first.
FAMILIES: dict[str, str] = {
    "F1": "SGLang flag warning against the pinned catalog",
    "X1": "SGLang cross-flag rule (warning)",
    "Y": "YAML syntax",
    "S": "manifest or inventory schema",
    "R": "reference between manifests and inventories",
    "P": "GPU, NUMA, memory or port placement",
    "F": "SGLang flag against the pinned catalog",
    "X": "SGLang cross-flag rule for the pin",
    "C": "SGLang flag catalog",
    "I": "gen import",
    "O": "output/ is not current",
    "D": "generated schema or documentation is not current",
}

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def family(code: str) -> str:
    """The meaning of a code's family, e.g. 'manifest or inventory schema' for S002."""
    for prefix in sorted(FAMILIES, key=len, reverse=True):
        if code.startswith(prefix):
            return FAMILIES[prefix]
    return "gen diagnostic"


def _rule(code: str) -> dict[str, Any]:
    return {"id": code, "name": code,
            "shortDescription": {"text": f"{code}: {family(code)}"},
            "properties": {"family": family(code)}}


def _result(d: Diagnostic, rule_index: int) -> dict[str, Any]:
    # A URI reference, not a path: "#", "?", "%" or a blank in a file name would change what
    # it names (a fragment, a query, a decoded "%2e%2e" climbing out of %SRCROOT%).
    uri = quote(d.pos.path, safe="/")
    location: dict[str, Any] = {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}}
    if d.pos.line > 0:
        location["region"] = {"startLine": d.pos.line, "startColumn": max(d.pos.col, 1)}
    text = d.message + (f" ({d.hint})" if d.hint else "")
    return {"ruleId": d.code, "ruleIndex": rule_index, "level": _LEVEL[d.severity],
            "message": {"text": text}, "locations": [{"physicalLocation": location}]}


def _suppressed(d: Diagnostic, rule_index: int, reason: str) -> dict[str, Any]:
    """An acknowledged warning: a result with SARIF's in-source suppression and its reason."""
    found = _result(d, rule_index)
    found["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": reason}]
    return found


def sarif_log(diagnostics: list[Diagnostic],
              acknowledged: Sequence[tuple[Diagnostic, str, str]] = ()) -> dict[str, Any]:
    """A complete SARIF 2.1.0 log of ``diagnostics`` (sorted by position); ``acknowledged``
    warnings (diagnostic, reason, where the ack is) become suppressed results."""
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    quiet = sorted(acknowledged, key=lambda a: a[0].sort_key())
    codes = sorted({d.code for d in ordered} | {d.code for d, _, _ in quiet})
    index = {code: i for i, code in enumerate(codes)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {"name": "gen", "version": __version__, "semanticVersion": __version__,
                                "rules": [_rule(c) for c in codes]}},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the deployment repository (--root)"}}},
            "columnKind": "unicodeCodePoints",
            "results": [_result(d, index[d.code]) for d in ordered]
            + [_suppressed(d, index[d.code], reason) for d, reason, _ in quiet],
        }],
    }
