"""gen check prints each rule that differs from the committed docs/rules.md (issue 22 item 9).

A pull request could turn off a rule in rules.yaml and nothing said so. The committed,
generated page is what reviewers read; when catalogs/rules.yaml differs from it, each rule's
change is a D002 line in CI's log (new, gone, its lines before and after), beside D001.
"""

from __future__ import annotations

import json
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


def test_a_hand_made_page_of_megabytes_is_one_short_line_per_rule() -> None:
    """The committed page is repository text: one section of 100,000 lines made a D002 of megabytes,
    compared line against line (10^10 steps)."""
    import time

    huge = PAGE.replace("- severity: error\n", "".join(f"- line {i}\n" for i in range(100_000)), 1)
    start = time.process_time()
    found = section_changes(RULES_DOCS_FILE, huge, PAGE)
    assert time.process_time() - start < 2.0
    assert [d.code for d in found] == ["D002"] and len(found[0].message) < 4000, len(found[0].message)
    assert found[0].message.endswith("; and 99989 more changed line(s)")


def test_check_prints_them_beside_d001(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "schemas").mkdir()
    (tmp_path / "docs" / "rules.md").write_text(PAGE)
    turned_off = PAGE.replace("- enforced: args (SGLang's own argument validation)", "- enforced: none")
    monkeypatch.setattr(generated, "generated_files", lambda root: {RULES_DOCS_FILE: turned_off})
    found = check_generated(tmp_path)
    assert [d.code for d in found] == ["D001", "D002"] and "enforced: none" in found[1].message


def test_gen_check_names_each_rule_changed_against_the_real_page(repo_copy: Path) -> None:
    """The committed docs/rules.md as gen writes it, then a pull request's rules.yaml: one rule
    turned off for every pin, one declarative rule removed. gen check names both (D002), at
    their sections of the committed page, beside D001."""
    from click.testing import CliRunner

    from generator.cli.main import main
    from generator.cli.rules_docs import rules_docs

    (repo_copy / "docs").mkdir(exist_ok=True)
    page = repo_copy / RULES_DOCS_FILE
    page.write_text(rules_docs(repo_copy), encoding="utf-8")
    rules = repo_copy / "catalogs" / "rules.yaml"
    text = rules.read_text(encoding="utf-8")
    start = text.index("  - id: eplb-needs-ep\n")
    text = text[:start] + text[start:].replace('versions: ">=0.4.10"', 'versions: "<0.1"', 1)
    start, end = text.index("  - id: tokenizer-batching\n"), text.index("  - id: mm-feature-transport\n")
    rules.write_text(text[:start] + text[end:], encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    lines = [x for x in result.stderr.splitlines() if "error[D002]" in x]
    committed = page.read_text(encoding="utf-8").splitlines()
    at = {name: committed.index(f"## {name}") + 1 for name in ("X025 `eplb-needs-ep`", "X099 `tokenizer-batching`")}
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith(f"docs/rules.md:{at['X025 `eplb-needs-ep`']}:1: error[D002]: X025 `eplb-needs-ep` changed: ")
    assert 'was "versions: `>=0.4.10`; pins: 0.5.9, 0.5.23"' in lines[0] and 'now "versions: `<0.1`; pins: none committed"' in lines[0]
    assert lines[1] == (f"docs/rules.md:{at['X099 `tokenizer-batching`']}:1: error[D002]: X099 `tokenizer-batching` "
                        "is gone from catalogs/rules.yaml (the committed docs/rules.md has it) (review it, then run `gen schema --write`)")
    assert "error[D001]: docs/rules.md is not current" in result.stderr


def test_a_text_cannot_forge_the_section_of_a_rule_it_turns_off(repo_copy: Path) -> None:
    """A pull request turns X099 off and puts the committed text of X099's section, after a line
    break, into another rule's fix: the page prints texts on one line (escaped), so the forged
    section is no section and D002 names X099's change."""
    from click.testing import CliRunner

    from generator.cli.main import main
    from generator.cli.rules_docs import rules_docs

    (repo_copy / "docs").mkdir(exist_ok=True)
    page = repo_copy / RULES_DOCS_FILE
    committed = rules_docs(repo_copy)
    page.write_text(committed, encoding="utf-8")
    start = committed.index("## X099 `tokenizer-batching`")
    forged = committed[start:committed.index("\n## ", start)].rstrip("\n")
    rules = repo_copy / "catalogs" / "rules.yaml"
    text = rules.read_text(encoding="utf-8")
    start = text.index("  - id: tokenizer-batching\n")
    text = text[:start] + text[start:].replace('versions: ">=0.5.9"', 'versions: "<0.1"', 1)
    old = '    fix: "keep one of {flag.enable_tokenizer_batch_encode} and {flag.enable_dynamic_batch_tokenizer}"'
    assert text.count(old) == 1
    fix = "keep one of {flag.enable_tokenizer_batch_encode} and {flag.enable_dynamic_batch_tokenizer}"
    forged_yaml = forged.replace("{", "{{").replace("}", "}}")
    text = text.replace(old, "    fix: " + json.dumps(fix + "`\n\n" + forged_yaml + "\n- x: `y"))
    rules.write_text(text, encoding="utf-8")
    generated = rules_docs(repo_copy)
    assert generated.count("\n## X099 `tokenizer-batching`\n") == 1
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    found = [x for x in result.stderr.splitlines() if "error[D002]: X099 `tokenizer-batching` changed" in x]
    assert found and 'now "versions: `<0.1`; pins: none committed"' in found[0], result.stderr
