"""docs/rules.md is generated (a golden copy): every rule with code, pins, texts, condition, coverage, evidence."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from generator.cli.generated import RULES_DOCS_FILE
from generator.cli.main import main
from generator.cli.rules_docs import rules_docs
from generator.sglang.rules import load_rules

ROOT = Path(__file__).resolve().parent.parent


def test_committed_rules_docs_equal_a_fresh_generation() -> None:
    assert (ROOT / RULES_DOCS_FILE).read_text(encoding="utf-8") == rules_docs(ROOT), "run `gen schema --write`"


def test_every_rule_has_its_section_with_facts() -> None:
    text = rules_docs(ROOT)
    rules = load_rules(ROOT / "catalogs" / "rules.yaml")
    sections = re.findall(r"\n## ([A-Z]\d{3}) `", text)
    assert sorted(sections) == sorted(r.code for r in rules)  # X, G and M rules alike
    block = text.split("## X027 `chunked-prefill-page`", 1)[1].split("\n## ", 1)[0]
    assert "- versions: `>=0.5.9`; pins: 0.5.9, 0.5.23" in block and "- evidence: run" in block
    assert "predicate `_chunked_prefill_page` in `generator/sglang/rules/predicates/validation.py`" in block
    assert "chunked_prefill_size % self.page_size == 0" in block  # a check coverage/<pin>.yaml gives it
    block = text.split("## X099 `tokenizer-batching`", 1)[1].split("\n## ", 1)[0]
    assert "declarative: `when:`" in block and "{flag.enable_tokenizer_batch_encode}" in block


def test_gen_check_fails_on_stale_rules_docs(repo_copy: Path) -> None:
    (repo_copy / "docs").mkdir(exist_ok=True)
    (repo_copy / RULES_DOCS_FILE).write_text("# old\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    assert "docs/rules.md: error[D001]: docs/rules.md is not current" in result.stderr
    (repo_copy / RULES_DOCS_FILE).write_text(rules_docs(repo_copy), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert "docs/rules.md" not in result.stderr
