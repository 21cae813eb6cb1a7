"""Bad-input fixtures that carry their own expected errors (podman quadlet style).

Each folder under ``tests/fixtures/bad/`` holds files laid over a copy of the example
repository. Every ``# expect: <diagnostic>`` comment in those files is one exact line
``gen check`` must print; together they are all it may print. Nothing may be written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "bad"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _overlay(case: str, repo: Path) -> list[str]:
    """Copy the case's files over the repo; return its expected diagnostics."""
    expected: list[str] = []
    for src in sorted((FIXTURES / case).rglob("*")):
        if src.is_file():
            dest = repo / src.relative_to(FIXTURES / case)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
            text = src.read_text(encoding="utf-8", errors="replace")
            expected += [ln.split("# expect: ", 1)[1] for ln in text.splitlines() if "# expect: " in ln]
    return expected


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_case_expects_something() -> None:
    assert CASES, "no fixtures found"
    for case in CASES:
        texts = [p.read_text(errors="replace") for p in (FIXTURES / case).rglob("*")
                 if p.suffix in (".yaml", ".yml")]
        assert any("# expect: " in t for t in texts), f"{case} carries no '# expect:' line"


@pytest.mark.parametrize("case", CASES)
def test_bad_input_reports_exactly_the_expected_errors(case: str, repo_copy: Path) -> None:
    expected = _overlay(case, repo_copy)
    before = _snapshot(repo_copy / "output")
    runner = CliRunner()
    for args in (["check"], ["render", "--all"]):
        result = runner.invoke(main, [*args, "--root", str(repo_copy)])
        lines = result.stderr.splitlines()
        printed = [ln for ln in lines if ": error[" in ln or ": warning[" in ln]
        assert printed == expected, result.stderr
        assert result.exit_code == 1, result.stderr
        assert "Traceback" not in result.output + result.stderr
    assert _snapshot(repo_copy / "output") == before, "a failed run wrote to output/"
