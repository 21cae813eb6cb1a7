"""Tests for generator/sglang/flaghistory.py and its use by the flag check: flags SGLang
removed before the committed pins get SGLang's own successor, not a spelling neighbour."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import Diagnostics, Position
from generator.sglang.catalog import known_pins, load_catalog
from generator.sglang.flaghistory import history_path, load_history, past_flag, source_of
from generator.sglang.flags import Arg, check_args

ROOT = Path(__file__).resolve().parent.parent
HISTORY = history_path(ROOT / "catalogs" / "sglang" / "0.5.9.json")


def test_history_marks_probe_and_ast_releases() -> None:
    history = load_history(HISTORY)
    assert history is not None
    assert len(history.versions) >= 34
    assert source_of(history, "0.5.9") == "probe" and source_of(history, "0.5.23") == "probe"
    assert source_of(history, "0.4.6.post5") == "ast"
    assert {pin for pin in known_pins(ROOT)} <= {v for v, s in history.versions if s == "probe"}


@pytest.mark.parametrize(("flag", "last", "gone", "successor"), [
    ("--enable-ep-moe", "0.5.3.post3", "0.5.4.post3", "--ep-size"),
    ("--enable-deepep-moe", "0.5.3.post3", "0.5.4.post3", "--moe-a2a-backend deepep"),
    ("--enable-flashmla", "0.4.6.post5", "0.4.7.post1", "--attention-backend flashmla"),
])
def test_issue_examples(flag: str, last: str, gone: str, successor: str) -> None:
    history = load_history(HISTORY)
    assert history is not None
    past = past_flag(history, flag)
    assert past is not None
    assert (past.last, past.gone_from, past.successor) == (last, gone, successor)


@pytest.mark.parametrize(("pin", "flag", "message", "hint"), [
    ("0.5.9", "--enable-ep-moe",
     "'--enable-ep-moe' was removed in SGLang 0.5.4.post3 (it exists in SGLang 0.4.0.post2..0.5.3.post3); "
     "SGLang said: use --ep-size", "did you mean '--expert-parallel-size'?"),
    ("0.5.23", "--enable-deepep-moe",
     "'--enable-deepep-moe' was removed in SGLang 0.5.4.post3 (it exists in SGLang 0.4.4.post4..0.5.3.post3); "
     "SGLang said: use --moe-a2a-backend deepep", "did you mean '--moe-a2a-backend deepep'?"),
    ("0.5.9", "--enable-flashmla",
     "'--enable-flashmla' was removed in SGLang 0.4.7.post1 (it exists in SGLang 0.4.4.post4..0.4.6.post5); "
     "SGLang said: use --attention-backend flashmla", "did you mean '--attention-backend flashmla'?"),
])
def test_removed_flag_gets_sglangs_successor(pin: str, flag: str, message: str, hint: str) -> None:
    catalog = load_catalog(ROOT, pin)
    others = [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]
    diags = Diagnostics()
    assert check_args(catalog, [Arg(flag, True, Position("m.yaml", 1, 1))], diags, others) == ()
    (d,) = diags.items
    assert (d.code, d.message, d.hint) == ("F007", message, hint)


def test_never_existing_flag_is_still_f001() -> None:
    diags = Diagnostics()
    check_args(load_catalog(ROOT, "0.5.9"), [Arg("--enable-nonsense-xyz", True, Position("m.yaml", 1, 1))], diags)
    assert [d.code for d in diags.items] == ["F001"]


def test_gen_sglang_diff_between_history_releases() -> None:
    from click.testing import CliRunner

    from generator.cli.main import main

    result = CliRunner().invoke(main, ["sglang", "diff", "0.4.6", "0.4.7", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.startswith("SGLang 0.4.6.post5 -> 0.4.7.post1 (from the flag history: 0.4.6.post5 read by ast")
    assert "approximate in types and choices" in first
    assert "  - --enable-flashmla  (SGLang said: use --attention-backend flashmla)" in result.output
    unknown = CliRunner().invoke(main, ["sglang", "diff", "0.3.0", "0.5.9", "--root", str(ROOT)])
    assert unknown.exit_code == 2 and "no SGLang flag catalog for pin '0.3.0'" in unknown.output


def test_gen_sglang_diff_names_a_renamed_flag_in_its_own_section() -> None:
    """A flag whose option string moved to a new name (0.5.16 renamed the gRPC sidecar's port)."""
    from click.testing import CliRunner

    from generator.cli.main import main

    result = CliRunner().invoke(main, ["sglang", "diff", "0.5.15.post1", "0.5.16", "--root", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert "; 25 added, 2 removed, 1 renamed, 12 changed" in result.output.splitlines()[0]
    assert "\nRenamed (1):\n  ~ --grpc-http-sidecar-port -> --smg-http-sidecar-port\n\nAdded (25):\n" in result.output
