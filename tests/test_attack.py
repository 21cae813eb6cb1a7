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


@pytest.mark.parametrize("payload", [
    "{{ 1/0 }}", "{{ 1 % 0 }}", '{{ "%(a)s" % {} }}', "{{ [1, 2]|slice(0)|list }}", '{{ "abc"|truncate(-1) }}',
    '{{ dict(a=1)|dictsort(by="x") }}', "{{ range(10**9)|list|length }}", "{{ (1e308 * 1e308)|int }}",
])
def test_whatever_a_template_raises_is_that_templates_error(repo_copy: Path, payload: str) -> None:
    """A template is the repository's code: ZeroDivisionError, KeyError, OverflowError, jinja's
    FilterArgumentError, an AssertionError of a filter, a NameError of a folded constant ended
    the run as gen's internal error (exit 4). Each is the template's error at its line (exit 3)."""
    tpl = repo_copy / "templates" / "sglang.env.j2"
    line = len(tpl.read_text().splitlines()) + 1
    tpl.write_text(tpl.read_text() + payload + "\n")
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith(f"gen: templates/sglang.env.j2:{line}: "), result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("name", [
    "DB_PASS", "MYSQL_PWD", "SECRET_KEY", "APIKEY", "OpenAiApiKey", "SSH_PRIVATE_KEY", "HF_AUTH",
    "GOOGLE_APPLICATION_CREDENTIALS_JSON", "GITHUB_ACCESS_TOKEN", "JWT_SIGNING_KEY", "hf_hub_token",
    "SGLANG_S3_SECRET_ACCESS_KEY", "MY_PASSPHRASE_FILE",
])
def test_secret_variable_names_in_other_spellings_are_refused(repo_copy: Path, name: str) -> None:
    """K002 by the name's words, not one regex shape: the value must not reach output/."""
    host = repo_copy / "hosts" / "llm-two.yaml"
    host.write_text(host.read_text().replace("    listen: 127.0.0.1\n", f"    listen: 127.0.0.1\n    env: {{{name}: SEKRIT}}\n", 1))
    result = _gen("render", "--all", "--root", str(repo_copy))
    assert result.exit_code == 1 and "error[K002]" in result.stderr, result.stderr
    assert not [p for p in (repo_copy / "output").rglob("*") if p.is_file() and b"SEKRIT" in p.read_bytes()]


@pytest.mark.parametrize("name", ["NCCL_DEBUG", "SGLANG_MAX_NEW_TOKENS_LIMIT", "TOKENIZERS_PARALLELISM",
                                  "SGLANG_USE_AITER_FP8_PER_TOKEN", "SGLANG_ROUTING_KEY_POLICY_DEBUG_LOG",
                                  "SGLANG_S3_ACCESS_KEY_ID", "HF_HOME"])
def test_tuning_variables_that_merely_mention_tokens_or_keys_pass(name: str) -> None:
    from generator.emit.secrets import is_secret_env_name
    assert not is_secret_env_name(name)


@pytest.mark.parametrize("entry", [
    "args: {--api-key: [SEKRIT, SEKRIT2]}",          # F005 used to print the values
    "args: {--api-key: {k: SEKRIT}}",
    'env: {HF_TOKEN: "SEKRIT\\u0085"}',               # S008 used to print the value
    'env: {INNOCENT_NAME: "SEKRIT\\u202e"}',
    'args: {--chat-template: "SEKRIT\\u0000"}',
])
def test_no_diagnostic_quotes_a_secret_bearing_value(repo_copy: Path, entry: str) -> None:
    """Diagnostics land in CI logs: a value in args:/env: or of a secret flag is never quoted."""
    host = repo_copy / "hosts" / "llm-two.yaml"
    host.write_text(host.read_text().replace("    listen: 127.0.0.1\n", f"    listen: 127.0.0.1\n    {entry}\n", 1))
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1, result.stderr
    assert "SEKRIT" not in result.output + result.stderr, result.stderr


@pytest.mark.parametrize("plant", ["fifo", "symlink"])
@pytest.mark.parametrize("name", ["0.5.9.json"])  # the env and history catalogs share read_data_text
def test_a_catalog_file_that_is_not_a_regular_file_is_refused_not_followed(
        repo_copy: Path, plant: str, name: str) -> None:
    """catalogs/ is repo content: a FIFO hung `gen check`, a symlink read any file of the runner."""
    import os
    import subprocess
    import sys
    target = repo_copy / "catalogs" / "sglang" / name
    target.unlink()
    if plant == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(Path(__file__).resolve().parent.parent / "catalogs" / "sglang" / name)
    proc = subprocess.run([sys.executable, "-m", "generator", "check", "--root", str(repo_copy)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode not in (0, 4) and "error[Y009]" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
