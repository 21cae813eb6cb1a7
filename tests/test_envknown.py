"""The reviewed table of non-SGLang variables (catalogs/env-known.yaml, generator/sglang/envknown.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import Diagnostics, Position
from generator.sglang import envknown
from generator.sglang.datafiles import DataFileError

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "catalogs" / envknown.FILE_NAME


def _codes(env: dict[str, str]) -> list[str]:
    diags = Diagnostics()
    where = Position("models/x.yaml", 1, 1)
    envknown.check_known(envknown.load_table(TABLE), [(k, v, where) for k, v in env.items()], diags)
    return [d.code for d in diags.items]


def test_table_path_is_beside_the_sglang_folder() -> None:
    assert envknown.table_path(ROOT / "catalogs" / "sglang" / "0.5.9.json") == TABLE


def test_every_entry_says_one_thing_and_has_a_source() -> None:
    table = envknown.load_table(TABLE)
    assert 5 <= len(table) <= 20  # small and reviewed
    for var in table.values():
        kinds = [bool(var.renamed), bool(var.values or var.pattern)]
        assert kinds.count(True) == 1, var.name
        assert var.name.startswith(envknown.PREFIXES)


@pytest.mark.parametrize(("env", "codes"), [
    ({"NCCL_P2P_DISABLE": "1"}, []),
    ({"NCCL_P2P_DISABLE": "true"}, ["E005"]),
    ({"NCCL_DEBUG": "info"}, []),
    ({"NCCL_DEBUG": "verbose"}, ["E005"]),
    ({"HF_HUB_OFFLINE": "On"}, []),
    ({"TORCH_CUDA_ARCH_LIST": "8.0 9.0a;10.0+PTX"}, []),
    ({"TORCH_CUDA_ARCH_LIST": "Ampere+Tegra;Hopper"}, []),
    ({"TORCH_CUDA_ARCH_LIST": "sm_90"}, ["E005"]),
    ({"TORCH_CUDA_ARCH_LIST": ""}, ["E005"]),
    ({"CUDA_VISIBLE_DEVICES": "0"}, []),  # gen's own: E004 from the rendered unit (test_owned_env.py)
    ({"NCCL_BLOCKING_WAIT": "1"}, ["E103"]),
    # not in the table: passes, whatever the value
    ({"NCCL_SOCKET_NTHREADS": "many", "CUDA_LAUNCH_BLOCKING": "yes", "HF_TOKEN_PATH": "/x"}, []),
])
def test_check_known(env: dict[str, str], codes: list[str]) -> None:
    assert _codes(env) == codes


def test_a_broken_table_is_an_input_problem(tmp_path: Path) -> None:
    bad = tmp_path / envknown.FILE_NAME
    bad.write_text("variables:\n  NCCL_X:\n    pattern: '('\n    source: here\n  nccl_lower:\n    source: x\n",
                   encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        envknown.load_table(bad)
    codes = sorted(d.code for d in info.value.diagnostics)
    assert codes and all(c.startswith(("S", "C015")) for c in codes), codes


def test_a_bad_pattern_is_c015(tmp_path: Path) -> None:
    bad = tmp_path / envknown.FILE_NAME
    bad.write_text("variables:\n  NCCL_X:\n    pattern: '('\n    source: here\n", encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        envknown.load_table(bad)
    assert [d.code for d in info.value.diagnostics] == ["C015"]
    assert info.value.diagnostics[0].pos.line == 3


# ----- a pattern is data from the repository: bounded, matched without backtracking (issue 22 item 7) -----

def _table_with(tmp_path: Path, pattern: str) -> Path:
    text = TABLE.read_text()
    start = text.index("    pattern: '")
    end = text.index("\n", start)
    quoted = pattern.replace("'", "''")
    path = tmp_path / "catalogs" / envknown.FILE_NAME
    path.parent.mkdir(parents=True)
    path.write_text(text[:start] + f"    pattern: '{quoted}'" + text[end:])
    return path


@pytest.mark.parametrize("pattern", [r"^(a+)+$", r"^(a|a)*$", r"^(a*)*b$", r"^(\d+\.?)+$", "^" + "a*" * 40 + "b$"])
def test_a_nested_quantifier_takes_linear_time(tmp_path: Path, pattern: str) -> None:
    """Python's re doubled its time per character on (a+)+$; RE2 does not backtrack."""
    import time

    table = envknown.load_table(_table_with(tmp_path, pattern))
    diags = Diagnostics()
    start = time.process_time()
    envknown.check_known(table, [("TORCH_CUDA_ARCH_LIST", "a" * 50_000 + "!", Position("m.yaml", 1, 1))], diags)
    assert time.process_time() - start < 1.0  # Python's re: beyond the age of the universe
    assert [d.code for d in diags.items] == ["E005"]


@pytest.mark.parametrize("pattern, words", [
    (r"^(a)\1$", "without backtracking"),            # a backreference
    (r"^(?=a)a$", "without backtracking"),          # lookaround
    ("((((a{100}){100}){100}){100})", "without backtracking"),  # a program too large
    ("a" * 1025, "at most 1024"),
])
def test_a_pattern_re2_cannot_bound_is_c015_at_its_line(tmp_path: Path, pattern: str, words: str) -> None:
    table = _table_with(tmp_path, pattern)
    line = table.read_text()[: table.read_text().index("    pattern: '")].count("\n") + 1
    with pytest.raises(DataFileError) as exc:
        envknown.load_table(table)
    assert "error[C015]" in str(exc.value) and words in str(exc.value)
    assert f":{line}:" in str(exc.value)
