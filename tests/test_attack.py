"""Attacks on the issue-10 fixes that the first round's tests did not cover (the class, not the example).

Each test plants one thing a pull request controls (a template, a flag spelling, a variable
name) in a copy of the example repo and checks gen refuses it without side effects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("payload", [
    '{{ cycler.__init__.__globals__.os.system("touch MARK") }}',
    '{{ self.__init__.__globals__.__builtins__.open("MARK", "w").write("x") }}',
    '{{ lipsum.__globals__["os"].popen("touch MARK").read() }}',
])
def test_a_template_from_the_pull_request_cannot_run_code(repo_copy: Path, payload: str) -> None:
    """templates/ is repo content: `gen check` in CI must not run what a PR writes there."""
    mark = repo_copy / "pwned"
    tpl = repo_copy / "templates" / "hardening.j2"
    tpl.write_text(tpl.read_text() + payload.replace("MARK", str(mark)) + "\n")
    result = _gen("check", "--root", str(repo_copy))
    assert not mark.exists()
    assert result.exit_code != 0
    assert "unsafe" in result.stderr and "Traceback" not in result.output + result.stderr
