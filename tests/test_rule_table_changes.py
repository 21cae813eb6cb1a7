"""gen check prints each rule that differs from the committed docs/rules.md (issue 22 item 9).

A pull request could turn off a rule in rules.yaml and nothing said so. The committed,
generated page is what reviewers read; when catalogs/rules.yaml differs from it, each rule's
change is a D002 line in CI's log (new, gone, its lines before and after), beside D001.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import generated
from generator.cli.generated import RULES_DOCS_FILE, check_generated, section_changes

PAGE = """# SGLang rules

| code | rule | severity |
|---|---|---|
| X025 | `enable-eplb` | error |

## X025 `enable-eplb-needs-ep`

- severity: error
- versions: `all`; pins: 0.5.9, 0.5.23
- enforced: args (SGLang's own argument validation)
- message: `--enable-eplb needs expert parallelism`

## X026 `hicache-radix`

- severity: error
- versions: `all`; pins: 0.5.9, 0.5.23
"""


def test_a_rule_turned_off_narrowed_or_reworded_is_named_with_its_change() -> None:
    changed = PAGE.replace("- enforced: args (SGLang's own argument validation)", "- enforced: none (gen's own)")
    changed = changed.replace("`all`; pins: 0.5.9, 0.5.23\n- enforced", "`>=0.5.23`; pins: 0.5.23\n- enforced")
    found = section_changes(RULES_DOCS_FILE, PAGE, changed)
    assert [(d.code, d.pos.line) for d in found] == [("D002", 7)]
    text = found[0].message
    assert text.startswith("X025 `enable-eplb-needs-ep` changed: ")
    assert 'was "enforced: args' in text and 'now "enforced: none (gen\'s own)"' in text
    assert 'was "versions: `all`; pins: 0.5.9, 0.5.23"' in text and 'now "versions: `>=0.5.23`; pins: 0.5.23"' in text


def test_a_rule_removed_or_added_is_named() -> None:
    without = PAGE[:PAGE.index("## X026")]
    assert [d.message for d in section_changes(RULES_DOCS_FILE, PAGE, without)] == [
        "X026 `hicache-radix` is gone from catalogs/rules.yaml (the committed docs/rules.md has it)"]
    assert [d.message for d in section_changes(RULES_DOCS_FILE, without, PAGE)] == [
        "X026 `hicache-radix` is new in catalogs/rules.yaml (not in the committed docs/rules.md)"]
    assert section_changes(RULES_DOCS_FILE, PAGE, PAGE) == []


def test_check_prints_them_beside_d001(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "schemas").mkdir()
    (tmp_path / "docs" / "rules.md").write_text(PAGE)
    turned_off = PAGE.replace("- enforced: args (SGLang's own argument validation)", "- enforced: none")
    monkeypatch.setattr(generated, "generated_files", lambda root: {RULES_DOCS_FILE: turned_off})
    found = check_generated(tmp_path)
    assert [d.code for d in found] == ["D001", "D002"] and "enforced: none" in found[1].message
