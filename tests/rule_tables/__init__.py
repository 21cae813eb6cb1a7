"""Unit-table rows for rules, one module per rule group (``ROWS``), joined into test_rules.TABLE.

Each row is ``(pin, argv words, environment, expected codes in order)``, checked by
tests/test_rules.py without SGLang: gen's flag check, then its rules. One module per group
keeps parallel work on different rule groups from editing the same list.
"""

from __future__ import annotations

import importlib
import pkgutil

Row = tuple[str, list[str], dict[str, str], list[str]]


def all_rows() -> list[Row]:
    """The rows of every module in this package, in module-name order."""
    out: list[Row] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        out.extend(getattr(importlib.import_module(f"{__name__}.{info.name}"), "ROWS", ()))
    return out
