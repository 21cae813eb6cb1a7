"""Tests for generator/sglang/datafiles.py, rules/load.py and tables.py: the data files under
catalogs/ are input, so a broken entry is a positioned diagnostic with a code and exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.sglang.datafiles import DataFileError
from generator.sglang.rules import load_rules
from generator.sglang.tables import load_flag_tables

ROOT = Path(__file__).resolve().parent.parent
RULES = (ROOT / "catalogs" / "rules.yaml").read_text(encoding="utf-8")


def _line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def _check(repo: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, [ln for ln in result.stderr.splitlines() if ": error[" in ln]


def test_rules_entry_errors_are_positioned(repo_copy: Path) -> None:
    bad = (RULES.replace("code: X002", "code: X102")
           .replace("id: nnodes-divides\n", "id: nnodes-divdes\n")
           .replace('versions: ">=0.5.15"', 'versions: "0.5.15+"', 1))
    (repo_copy / "catalogs" / "rules.yaml").write_text(bad, encoding="utf-8")
    code, errors = _check(repo_copy)
    assert code == 1
    f = "catalogs/rules.yaml"
    x102 = _line_of(bad, "code: X102")
    x102_again = _line_of(bad[bad.index("code: X102") + 10:], "code: X102") + bad[:bad.index("code: X102") + 10].count("\n")
    assert errors == sorted(errors, key=lambda e: int(e.split(":")[1])), errors
    assert f"{f}:{_line_of(bad, 'rules:')}:1: error[C011]: predicate 'nnodes-divides' has no rule in {f}: add its entry or remove it" in errors
    assert f"{f}:{x102}:11: error[C013]: rule 'spec-steps-all-or-none': code X102 does not fit severity error (X0xx or X2xx)" in errors
    assert f"{f}:{_line_of(bad, '0.5.15+')}:15: error[C014]: bad version range '0.5.15+': write \"all\" or comma-joined bounds like \">=0.5.15,<0.5.23\"" in errors
    assert any(e.startswith(f"{f}:{x102_again}:11: error[C012]: code X102 is used by 'spec-steps-all-or-none' and ") for e in errors)
    assert f"{f}:{_line_of(bad, 'nnodes-divdes')}:9: error[C010]: rule 'nnodes-divdes' has no predicate in generator/sglang/rules/predicates/ (did you mean 'nnodes-divides'?)" in errors
    assert len(errors) == 5, errors


def test_rules_schema_errors_come_first(repo_copy: Path) -> None:
    """A rule that breaks the schema is reported as such; the rest waits for a valid file."""
    bad = RULES.replace("    evidence: read\n", "    evidense: read\n", 1)
    (repo_copy / "catalogs" / "rules.yaml").write_text(bad, encoding="utf-8")
    code, errors = _check(repo_copy)
    evid = _line_of(bad, "evidense: read")
    assert code == 1
    assert len(errors) == 2, errors
    assert errors[1].startswith(f"catalogs/rules.yaml:{evid}:5: error[S001]: unknown key 'rules[")
    assert errors[1].endswith(".evidense' (did you mean 'evidence'?)")
    assert "error[S003]: required key 'rules[" in errors[0] and errors[0].endswith(".evidence' is missing")


def test_bad_version_range_in_params(tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text(RULES.replace('"<=0.5.4": [flashinfer]', '"=<0.5.4": [flashinfer]'), encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_rules(bad)
    (diag,) = info.value.diagnostics
    assert diag.code == "C014" and "'=<0.5.4'" in diag.message
    assert diag.pos.line == _line_of(bad.read_text(), '"=<0.5.4"')


def test_malformed_rules_yaml_is_worded(tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text("rules:\n  - id: [unclosed\n", encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_rules(bad)
    assert [(d.code, d.pos.line, d.pos.col) for d in info.value.diagnostics] == [("Y026", 2, 9)]
    assert info.value.diagnostics[0].pos.line >= 2


def test_foreign_table_entry_errors(tmp_path: Path) -> None:
    folder = tmp_path / "catalogs"
    (folder / "sglang").mkdir(parents=True)
    (folder / "foreign-flags.yaml").write_text(
        "--ok:\n  server: vLLM\n  dest: tp_size\n"
        "--no-server:\n  dest: tp_size\n"
        "tp:\n  server: TGI\n"
        "--typo:\n  server: vLLM\n  dset: tp_size\n", encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_flag_tables(folder / "sglang" / "0.5.9.json")
    got = [str(d) for d in info.value.diagnostics]
    assert got == [
        "catalogs/foreign-flags.yaml:4:1: error[S003]: required key '--no-server.server' is missing",
        "catalogs/foreign-flags.yaml:6:1: error[S009]: key 'tp' is not a flag ('-x' or '--name')",
        "catalogs/foreign-flags.yaml:10:3: error[S001]: unknown key '--typo.dset' (did you mean 'dest'?)",
    ]


def test_committed_tables_load_clean() -> None:
    assert len(load_rules(ROOT / "catalogs" / "rules.yaml")) >= 30
    tables = load_flag_tables(ROOT / "catalogs" / "sglang" / "0.5.9.json")
    assert tables.foreign and tables.renames and tables.dest_groups


def test_choice_synonyms_point_at_real_choices() -> None:
    """Every synonym's target is a choice of that setting in a committed pin, and no synonym
    is itself a choice there (it would never be looked up)."""
    from generator.sglang.catalog import known_pins, load_catalog

    tables = load_flag_tables(ROOT / "catalogs" / "sglang" / "0.5.9.json")
    assert tables.synonyms["attention_backend"]["flash_attn"] == "fa3"
    catalogs = [load_catalog(ROOT, p) for p in known_pins(ROOT)]
    for dest, words in tables.synonyms.items():
        for word, choice in words.items():
            choices = [set(a.choices or ()) for c in catalogs if (a := c.by_dest(dest)) is not None]
            assert any(choice in cs for cs in choices), (dest, word, choice)
            assert not any(word in cs for cs in choices), (dest, word)


def test_bad_choice_suggests_by_meaning_first() -> None:
    from generator.errors import Diagnostics, Position
    from generator.sglang.catalog import load_catalog
    from generator.sglang.flags import Arg, check_args

    diags = Diagnostics()
    check_args(load_catalog(ROOT, "0.5.23"), [Arg("--attention-backend", "flash_attn", Position("m.yaml", 1, 1))], diags)
    (d,) = diags.items
    assert d.code == "F003" and d.hint is not None and d.hint.startswith("did you mean 'fa3'")


BAD_DATA = Path(__file__).parent / "fixtures" / "bad-data"


@pytest.mark.parametrize("case", sorted(p.name for p in BAD_DATA.iterdir() if p.is_dir()))
def test_bad_data_file_fixtures(case: str, repo_copy: Path) -> None:
    """Like tests/fixtures/bad/ (``# expect:`` lines), for broken files under catalogs/.

    They live apart because a broken data file stops the run with DataFileError before
    any host is rendered (the CLI reports it, exit 1), instead of adding diagnostics to
    each host as the cases under bad/ do (tests/test_pipeline_fleet.py compares those).
    """
    import shutil

    expected: list[str] = []
    for src in sorted((BAD_DATA / case).rglob("*")):
        if src.is_file():
            dest = repo_copy / src.relative_to(BAD_DATA / case)
            shutil.copyfile(src, dest)
            expected += [ln.split("# expect: ", 1)[1] for ln in src.read_text().splitlines() if "# expect: " in ln]
    assert expected
    for args in (["check"], ["render", "--all"]):
        result = CliRunner().invoke(main, [*args, "--root", str(repo_copy)])
        printed = [ln for ln in result.stderr.splitlines() if ": error[" in ln or ": warning[" in ln]
        assert printed == expected, result.stderr
        assert result.exit_code == 1
        assert "Traceback" not in result.output + result.stderr


def test_tables_follow_edits_in_one_process(tmp_path: Path) -> None:
    """The tables are cached by file stamps: an edit, a removal or a folder in a table's
    place is seen by the next call, and a catalogs/ without the foreign table falls back to
    the project's tables (tables_dir)."""
    import os

    from generator.sglang.tables import tables_dir

    folder = tmp_path / "catalogs"
    (folder / "sglang").mkdir(parents=True)
    catalog = folder / "sglang" / "0.5.9.json"
    foreign = folder / "foreign-flags.yaml"
    foreign.write_text("--tp:\n  server: vLLM\n  dest: tp_size\n", encoding="utf-8")
    assert set(load_flag_tables(catalog).foreign) == {"--tp"}
    foreign.write_text("--tp:\n  server: vLLM\n  dest: tp_size\n--pp:\n  server: vLLM\n  dest: pp_size\n",
                       encoding="utf-8")
    os.utime(foreign, ns=(1, 2_000_000_000))  # a stamp the first write cannot have had
    assert set(load_flag_tables(catalog).foreign) == {"--tp", "--pp"}
    assert load_flag_tables(catalog).renames == {}  # no renames.yaml here
    (folder / "renames.yaml").mkdir()  # not a file: as absent
    assert load_flag_tables(catalog).renames == {}
    foreign.unlink()
    assert tables_dir(catalog) == ROOT / "catalogs"
    assert load_flag_tables(catalog) == load_flag_tables(ROOT / "catalogs" / "sglang" / "0.5.9.json")
