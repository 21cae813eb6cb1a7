"""Rule coverage: every check SGLang's ServerArgs makes (catalogs/sglang/<pin>.checks.json,
inventoried by generator/sglang/checks_inventory.py) has an entry in the reviewed file
catalogs/coverage/<pin>.yaml: the gen rule that covers it, or a waiver with its reason."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from generator.errors import Diagnostics
from generator.load.manifests import load_file
from generator.sglang.catalog import version_key
from generator.sglang.rules import load_rules

ROOT = Path(__file__).resolve().parent.parent
PINS = ("0.5.9", "0.5.23")
# No "unreviewed" and no "gap": every entry is read, and a pure argument check needs its rule.
REASONS = {"gpu", "model-config", "runtime", "internal", "flag-check"}
RULES = {r.id: r for r in load_rules(ROOT / "catalogs" / "rules.yaml")}


def _inventory(pin: str) -> dict[str, Any]:
    return json.loads((ROOT / "catalogs" / "sglang" / f"{pin}.checks.json").read_text(encoding="utf-8"))


def _coverage(pin: str) -> dict[str, Any]:
    diags = Diagnostics()
    doc = load_file(ROOT / "catalogs" / "coverage" / f"{pin}.yaml", f"catalogs/coverage/{pin}.yaml", diags)
    assert doc is not None and not diags.items, [str(d) for d in diags.items]
    return doc.data["checks"]


def coverage_numbers(pin: str) -> dict[str, int]:
    """checks, covered, and waived by reason (the figures the README reports)."""
    entries = _coverage(pin).values()
    out = {"checks": len(_inventory(pin)["checks"]), "covered": sum("rule" in e for e in entries)}
    out.update(Counter(f"waived:{e['waive']}" for e in entries if "waive" in e))
    return out


@pytest.mark.parametrize("pin", PINS)
def test_every_check_is_covered_or_waived(pin: str) -> None:
    ids = [c["id"] for c in _inventory(pin)["checks"]]
    assert len(ids) == len(set(ids))
    entries = _coverage(pin)
    missing = [i for i in ids if i not in entries]
    assert not missing, f"checks without a rule or a waiver in catalogs/coverage/{pin}.yaml: {missing}"


@pytest.mark.parametrize("pin", PINS)
def test_no_stale_or_malformed_entries(pin: str) -> None:
    ids = {c["id"] for c in _inventory(pin)["checks"]}
    for check, entry in _coverage(pin).items():
        assert check in ids, f"stale entry (no such check in SGLang {pin}): {check}"
        assert isinstance(entry, dict) and (("rule" in entry) != ("waive" in entry)), (check, entry)
        if "rule" in entry:
            rule = RULES.get(entry["rule"])
            assert rule is not None, f"{check}: no rule '{entry['rule']}' in catalogs/rules.yaml"
            assert rule.versions.contains(version_key(pin)), f"{check}: rule {rule.id} does not apply to {pin}"
            assert set(entry) == {"rule"}, (check, entry)
        else:
            assert entry["waive"] in REASONS, (check, entry)
            assert isinstance(entry.get("why"), str) and entry["why"].strip(), (check, entry)


COLUMNS = ("checks", "covered", "gpu", "model-config", "runtime", "internal", "flag-check")


def coverage_table() -> str:
    """The figures table of catalogs/README.md ("Rule coverage"), computed from the files."""
    lines = ["| pin | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for pin in PINS:
        n = coverage_numbers(pin)
        cells = [n.get(c, n.get(f"waived:{c}", 0)) for c in COLUMNS]
        lines.append(f"| {pin} | " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def test_readme_table_is_current() -> None:
    readme = (ROOT / "catalogs" / "README.md").read_text(encoding="utf-8")
    assert coverage_table() in readme, "catalogs/README.md's coverage table is stale; it should read:\n" + coverage_table()


def test_numbers_add_up() -> None:
    for pin in PINS:
        n = coverage_numbers(pin)
        assert n["checks"] == n["covered"] + sum(v for k, v in n.items() if k.startswith("waived:"))


@pytest.mark.sglang
@pytest.mark.parametrize("pin", PINS)
def test_inventory_regenerated_equals_committed(pin: str, tmp_path: Path) -> None:
    from sglang_env import sglang_python

    py = sglang_python(pin)
    # Where the package is, without importing it (importing SGLang takes 5-10 s here).
    where = "import importlib.util; print(importlib.util.find_spec('sglang').submodule_search_locations[0])"
    site = subprocess.run([py, "-c", where], capture_output=True, text=True, check=True).stdout.strip()
    out = tmp_path / "checks.json"
    subprocess.run([sys.executable, str(ROOT / "generator" / "sglang" / "checks_inventory.py"),
                    f"{site}/srt/server_args.py", "--json", str(out)], check=True, capture_output=True)
    assert out.read_bytes() == (ROOT / "catalogs" / "sglang" / f"{pin}.checks.json").read_bytes()


@pytest.mark.parametrize("pin", PINS)
def test_waiver_quotes_its_condition(pin: str) -> None:
    """A waiver decided by a token of the condition (`the condition reads 'X'`) quotes a token
    that is in that condition, so the reason stays true when a check's text changes."""
    conditions = {c["id"]: c["condition"] for c in _inventory(pin)["checks"]}
    quoted = re.compile(r"the condition reads '([^']+)'")
    for check, entry in _coverage(pin).items():
        hit = quoted.search(entry.get("why", ""))
        if hit:
            assert hit.group(1) in conditions[check], (check, entry["why"])


def test_no_pin_keeps_unreviewed_entries() -> None:
    """`unreviewed` is not a waiver: the test above refuses it as a reason, and no file has it."""
    assert "unreviewed" not in REASONS
    for pin in PINS:
        assert "unreviewed" not in (ROOT / "catalogs" / "coverage" / f"{pin}.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("pin", PINS)
def test_no_check_is_left_as_a_gap(pin: str) -> None:
    """`gap` (what scripts/sglang-coverage/triage.py proposes for a pure argument check) is
    not a waiver: each such check needs the gen rule that covers it."""
    gaps = [c for c, e in _coverage(pin).items() if e.get("waive") == "gap"]
    assert not gaps, f"{len(gaps)} checks of SGLang {pin} have no rule yet: {gaps[:10]}"
