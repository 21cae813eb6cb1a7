"""The 18 GPU-capability startup failures of the field evidence, case by case (tests/data/gpu_field_evidence.json).

Each failure names the G rule that catches it before deploy, or says why none does. Where the
failure can be stated as gen sees a service (pin, argv, the GPU's compute capability and the
host torch), it is run through the rules the way tests/test_gpu_rules.py runs its table, and
the G codes found must be exactly ``caught_by``: a caught case fires its rule, an uncaught one
shows that gen is silent on it today.

``python tests/test_gpu_field_evidence.py`` prints the table and the count.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rule_tables.gpu_facts import GPUS
from test_gpu_rules import _codes  # the G rules on a GPU of GPUS, as check_rules makes them)

DATA = Path(__file__).parent / "data" / "gpu_field_evidence.json"
FAILURES: list[dict[str, Any]] = json.loads(DATA.read_text())["failures"]
# field-evidence.md's appendix (d), "GPU capability vs backend/quant — 18"
ISSUES = (748, 931, 989, 1058, 6006, 7715, 9140, 9707, 12178, 12360, 12419, 12887, 15342, 23985, 24633, 25723,
          28297, 35080)


def test_the_18_failures_are_all_there_once() -> None:
    assert sorted(f["issue"] for f in FAILURES) == sorted(ISSUES)
    for failure in FAILURES:
        assert failure["url"] == f"https://github.com/sgl-project/sglang/issues/{failure['issue']}"
        assert failure["why"] and failure["failure"]
        assert all(code.startswith("G") for code in failure["caught_by"])


@pytest.mark.parametrize("failure", [f for f in FAILURES if "case" in f], ids=lambda f: f"#{f['issue']}")
def test_each_case_gets_exactly_the_g_codes_named(failure: dict[str, Any]) -> None:
    case = failure["case"]
    assert case["gpu"] in GPUS
    found = [c for c in _codes(case["pin"], case["argv"], {}, case["gpu"]) if c.startswith("G")]
    assert found == failure["caught_by"]


def test_a_caught_failure_has_a_case_that_proves_it() -> None:
    assert all("case" in f for f in FAILURES if f["caught_by"])


def table() -> list[str]:
    """The report's table: each failure, the rule or why not, and the count."""
    rows = ["| issue | failure | caught by | why / how |", "|---|---|---|---|"]
    for f in sorted(FAILURES, key=lambda f: f["issue"]):
        rows.append(f"| [#{f['issue']}]({f['url']}) | {f['failure']} | {', '.join(f['caught_by']) or 'not caught'} | "
                    f"{f['why']} |")
    caught = sum(bool(f["caught_by"]) for f in FAILURES)
    rows += ["", f"caught before deploy: {caught} of {len(FAILURES)}"]
    return rows


if __name__ == "__main__":
    print("\n".join(table()))
