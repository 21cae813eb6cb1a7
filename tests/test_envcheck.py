"""Tests for generator/sglang/envcheck.py: SGLang variables against the committed env catalogs."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import Diagnostics, Position
from generator.sglang.envcheck import EnvCatalog, bad_value, check_env, env_catalog_path, load_env_catalog

ROOT = Path(__file__).resolve().parent.parent
POS = Position("models/m.yaml", 3, 3)


def _cat(pin: str) -> EnvCatalog:
    cat = load_env_catalog(env_catalog_path(ROOT / "catalogs" / "sglang" / f"{pin}.json", pin), pin)
    assert cat is not None
    return cat


def _run(pin: str, name: str, value: str) -> list[str]:
    diags = Diagnostics()
    others = [_cat(p) for p in ("0.5.9", "0.5.23") if p != pin]
    check_env(_cat(pin), others, [(name, value, POS)], diags)
    return [f"{d.severity.value}[{d.code}]: {d.message}" for d in diags.items]


@pytest.mark.parametrize(("value", "ok"), [
    ("true", True), ("TRUE", True), ("1", True), ("yes", True), ("Y", True), ("n", True),
    ("0", True), ("no", True), ("maybe", False), ("on", False), (" true", False), ("", False),
])
def test_envbool_rule_is_sglangs(value: str, ok: bool) -> None:
    """EnvBool.parse: value.lower() in true/1/yes/y or false/0/no/n, no stripping."""
    assert (_run("0.5.9", "SGLANG_LOG_GC", value) == []) is ok


def test_helper_bool_accepts_only_true_1_false_0() -> None:
    """sglang/srt/utils/common.py:get_bool_env_var reads anything else as false."""
    cat = _cat("0.5.9")
    helper = [v for v in cat.variables.values()
              if v.rules == ("sglang/srt/utils/common.py:get_bool_env_var",)][0]
    assert bad_value(helper, "1", cat.parse_rules) is None
    assert bad_value(helper, "False", cat.parse_rules) is None
    why = bad_value(helper, "yes", cat.parse_rules)
    assert why == ("common.py:get_bool_env_var accepts true/1/false/0 in any case, "
                   "and reads anything else as false")


def test_int_and_float_use_pythons_converters() -> None:
    cat = _cat("0.5.23")
    ints = [v for v in cat.variables.values() if v.registry and v.type == "int"]
    floats = [v for v in cat.variables.values() if v.registry and v.type == "float"]
    assert bad_value(ints[0], "12", cat.parse_rules) is None
    assert "reads it with int()" in (bad_value(ints[0], "1.5", cat.parse_rules) or "")
    assert bad_value(floats[0], "1e-3", cat.parse_rules) is None
    assert "reads it with float()" in (bad_value(floats[0], "fast", cat.parse_rules) or "")


def test_unknown_with_did_you_mean() -> None:
    (msg,) = _run("0.5.9", "SGLANG_ENABLE_TORCH_COMPIL", "1")
    assert msg.startswith("error[E001]: unknown SGLang variable 'SGLANG_ENABLE_TORCH_COMPIL'")


def test_not_in_this_pin_names_the_other() -> None:
    newer = [n for n in _cat("0.5.23").variables if n.startswith("SGLANG_") and n not in _cat("0.5.9").variables]
    (msg,) = _run("0.5.9", newer[0], "1")
    assert msg.startswith("error[E003]") and "appears in SGLang 0.5.23" in msg


def test_deprecated_and_prefix_rule_warn() -> None:
    assert _run("0.5.9", "SGLANG_CUTEDSL_MOE_NVFP4_DISPATCH", "1") == [
        "warning[E101]: 'SGLANG_CUTEDSL_MOE_NVFP4_DISPATCH' is deprecated in SGLang 0.5.9; "
        "use SGLANG_MOE_NVFP4_DISPATCH"]
    (msg,) = _run("0.5.9", "SGL_ENABLE_JIT_DEEPGEMM", "1")
    assert msg.startswith("warning[E102]")


def test_alias_of_0_5_23_warns_and_checks_the_value() -> None:
    cat = _cat("0.5.23")
    alias, name = sorted(cat.aliases.items())[0]
    got = _run("0.5.23", alias, "1")
    assert got[0] == f"warning[E101]: '{alias}' is a deprecated alias of '{name}' in SGLang 0.5.23"


def test_other_variables_pass() -> None:
    for name in ("NCCL_DEBUG", "CUDA_LAUNCH_BLOCKING", "TORCH_CUDA_ARCH_LIST", "HF_TOKEN"):
        assert _run("0.5.9", name, "anything") == []


def test_catalogs_are_committed_for_every_pin() -> None:
    for pin in ("0.5.9", "0.5.23"):
        cat = _cat(pin)
        assert sum(v.registry for v in cat.variables.values()) > 200
