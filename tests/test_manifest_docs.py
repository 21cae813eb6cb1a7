"""docs/manifests.md is generated (a golden copy) and names every key, type, default and flag."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from generator.cli.main import main
from generator.cli.manifest_docs import DOCS_FILE, manifest_docs
from generator.load.schema_docs import DOCS

ROOT = Path(__file__).resolve().parent.parent


def test_committed_docs_equal_a_fresh_generation() -> None:
    assert (ROOT / DOCS_FILE).read_text(encoding="utf-8") == manifest_docs(ROOT), "run `gen schema --write`"


def test_docs_have_a_section_per_key_with_facts() -> None:
    text = manifest_docs(ROOT)
    assert text.count("\n### `") == len(DOCS)
    for key in ("args", "env", "context_length", "services[].enabled", "weights.quantization"):
        assert f"### `{key}`" in text, key
    block = text.split("### `parallel.tp`", 1)[1].split("###", 1)[0]
    assert "- type: integer" in block and "- default: 1 (renders nothing)" in block
    assert "`--tensor-parallel-size` (0.5.9); `--tp-size` (0.5.23), dest `tp_size`" in block
    assert "- example: `tp: 4`" in block
    block = text.split("### `dtype`", 1)[1].split("###", 1)[0]
    assert "SGLang 0.5.9 accepts `auto`" in block


def test_gen_check_fails_on_stale_docs(repo_copy: Path) -> None:
    (repo_copy / "docs").mkdir()
    (repo_copy / DOCS_FILE).write_text("# old\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    assert "docs/manifests.md: error[D001]: docs/manifests.md is not current" in result.stderr
    assert "schemas/model.schema.json: error[D001]: schemas/model.schema.json is missing" in result.stderr
