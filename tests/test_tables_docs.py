"""gen check prints each entry of the curated tables that differs from the committed docs/tables.md (issue 22 item 9).

The finding's class: a pull request can change what gen owns, refuses or suggests through a
hand-written table (env-known.yaml, renames.yaml, foreign-flags.yaml, choice-synonyms.yaml)
and nothing said so; the captured catalogs have their digest (C016) and rules.yaml its page
(D002). Each case is a one-line edit of the committed table and carries the D003 it expects.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.cli.tables_docs import TABLES, TABLES_DOCS_FILE, tables_docs

ROOT = Path(__file__).resolve().parent.parent

# case -> (table, old text, new text, the heading of the changed section, the words of its D003)
CASES = {
    # (The owned variables such as CUDA_VISIBLE_DEVICES left env-known.yaml: E004 reads them
    # from the rendered unit, generator/emit/owned_env.py.)
    "accepted-word-added": (
        "env-known.yaml", '  NCCL_IB_DISABLE:\n    values: ["0", "1"]\n', '  NCCL_IB_DISABLE:\n    values: ["0", "1", "true"]\n',
        "env-known.yaml variables: NCCL_IB_DISABLE", 'changed: was "values: '),
    "variable-removed": (
        "env-known.yaml", "  NCCL_P2P_DISABLE:\n", "  NCCL_P2P_DISABLED:\n",
        "env-known.yaml variables: NCCL_P2P_DISABLE", "is gone from catalogs/env-known.yaml"),
    "rename-pointed-elsewhere": (
        "renames.yaml", "--nsa-prefill-backend: --dsa-prefill-backend", "--nsa-prefill-backend: --dsa-decode-backend",
        "renames.yaml options: --nsa-prefill-backend", 'now "to: "--dsa-decode-backend""'),
    "synonym-added": (
        "choice-synonyms.yaml", "  fp16: float16\n", "  fp16: float16\n  half: float32\n",
        "choice-synonyms.yaml: dtype", 'now "half: "float32""'),
    "foreign-flag-means-another-setting": (
        "foreign-flags.yaml", "--speculative-model:\n  server: vLLM\n  dest: speculative_draft_model_path\n",
        "--speculative-model:\n  server: vLLM\n  dest: model_path\n",
        "foreign-flags.yaml: --speculative-model", 'now "dest: "model_path""'),
}


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    for part in ("models", "hosts", "templates", "catalogs", "output", "docs", "schemas"):
        shutil.copytree(ROOT / part, repo / part)
    shutil.copy2(ROOT / "rollout.yaml", repo / "rollout.yaml")
    return repo


def test_the_committed_page_is_the_generated_one() -> None:
    assert (ROOT / TABLES_DOCS_FILE).read_text(encoding="utf-8") == tables_docs(ROOT)


def test_every_entry_of_every_table_has_its_section() -> None:
    page = tables_docs(ROOT) or ""
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert len(headings) == len(set(headings)) > 50
    for name in TABLES:
        assert any(h.startswith(f"## {name}") for h in headings), name


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_changed_table_entry_is_d003_at_its_section(case: str, tmp_path: Path) -> None:
    table, old, new, heading, words = CASES[case]
    repo = _repo(tmp_path)
    path = repo / "catalogs" / table
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    found = [line for line in result.stderr.splitlines() if "error[D003]" in line and f"D003]: {heading} " in line]
    committed = (ROOT / TABLES_DOCS_FILE).read_text(encoding="utf-8").splitlines()
    line = committed.index(f"## {heading}") + 1
    assert len(found) == 1 and found[0].startswith(f"{TABLES_DOCS_FILE}:{line}:1: error[D003]: "), result.stderr
    assert words in found[0], found[0]
    assert "error[D001]: docs/tables.md is not current" in result.stderr


def test_the_page_follows_the_tables_after_gen_schema_write(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    path = repo / "catalogs" / "choice-synonyms.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("  fp16: float16\n", "  fp16: float16\n  half: float16\n"))
    runner = CliRunner()
    assert runner.invoke(main, ["schema", "--write", "--root", str(repo)]).exit_code == 0
    result = runner.invoke(main, ["check", "--root", str(repo)])
    assert result.exit_code == 0, result.stderr
    assert '- half: "float16"' in (repo / TABLES_DOCS_FILE).read_text(encoding="utf-8")


def test_a_table_that_does_not_load_leaves_the_page_to_its_own_finding(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "catalogs" / "renames.yaml").write_text("options: [unclosed\n", encoding="utf-8")
    assert tables_docs(repo) is None
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert result.exit_code == 1 and "renames.yaml" in result.stderr and "Traceback" not in result.stderr
    assert "error[D003]" not in result.stderr


def test_a_key_cannot_forge_the_section_of_another_entry(tmp_path: Path) -> None:
    """A PR drops the entry checking NCCL_P2P_DISABLE and adds a synonym whose key spells that
    section: the key prints escaped, so the section is gone all the same (D003)."""
    repo = _repo(tmp_path)
    committed = (ROOT / TABLES_DOCS_FILE).read_text(encoding="utf-8")
    start = committed.index("## env-known.yaml variables: NCCL_P2P_DISABLE")
    forged = committed[start:committed.index("## ", start + 3)].rstrip("\n")
    known = repo / "catalogs" / "env-known.yaml"
    text = known.read_text(encoding="utf-8")
    i, j = text.index("  NCCL_P2P_DISABLE:"), text.index("  NCCL_IB_DISABLE:")
    known.write_text(text[:i] + text[j:], encoding="utf-8")
    synonyms = repo / "catalogs" / "choice-synonyms.yaml"
    key = "x\n\n" + forged + "\n- y"
    synonyms.write_text(synonyms.read_text(encoding="utf-8").replace(
        "  fp16: float16\n", f"  fp16: float16\n  {json.dumps(key)}: float16\n"), encoding="utf-8")
    page = tables_docs(repo) or ""
    assert "\n## env-known.yaml variables: NCCL_P2P_DISABLE\n" not in page
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert "error[D003]: env-known.yaml variables: NCCL_P2P_DISABLE is gone" in result.stderr, result.stderr
