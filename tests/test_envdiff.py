"""Tests for generator/sglang/envdiff.py and the variables' part of `gen sglang diff`."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from generator.cli.main import main
from generator.sglang.envcheck import EnvCatalog, EnvVar, env_catalog_path, load_env_catalog
from generator.sglang.envdiff import format_env_diff

ROOT = Path(__file__).resolve().parent.parent


def _cat(pin: str, variables: dict[str, EnvVar], deprecated: dict | None = None) -> EnvCatalog:
    return EnvCatalog(pin, variables, deprecated or {}, {}, {}, True)


def test_added_removed_changed() -> None:
    a = _cat("1.0", {"SGLANG_A": EnvVar("SGLANG_A", "bool", ("EnvBool",), False, True),
                     "SGLANG_GONE": EnvVar("SGLANG_GONE", "str", ()),
                     "CUDA_X": EnvVar("CUDA_X", "str", ())})
    b = _cat("2.0", {"SGLANG_A": EnvVar("SGLANG_A", "int", ("EnvInt",), 4, True),
                     "SGLANG_NEW": EnvVar("SGLANG_NEW", "float", ("EnvFloat",), 1.0, True)},
             {"SGLANG_GONE": {"message": "use --x"}})
    assert format_env_diff(a, b).splitlines() == [
        "SGLang 1.0 -> 2.0 environment: 2 -> 2 SGLANG_/SGL_ variables; 1 added, 1 removed, 1 changed",
        "",
        "Removed (1):",
        "  - SGLANG_GONE  (SGLang 2.0: use --x)",
        "",
        "Added (1):",
        "  + SGLANG_NEW (float)",
        "",
        "Changed (1):",
        "  * SGLANG_A",
        "      type bool -> int",
        "      default False -> 4",
    ]


def test_gen_sglang_diff_covers_variables() -> None:
    result = CliRunner().invoke(main, ["sglang", "diff", "0.5.9", "0.5.23", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    a = load_env_catalog(env_catalog_path(ROOT / "catalogs/sglang/0.5.9.json", "0.5.9"), "0.5.9")
    assert a is not None
    assert "SGLang 0.5.9 -> 0.5.23 environment: " in result.output
    assert "  - SGLANG_CUTLASS_MOE" in result.output  # read by 0.5.9, by no code of 0.5.23
