"""`gen check --host` and `gen show --all` / repeated `--host`: one host or every host, through click."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from generator.cli.main import main


def _gen(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result


def test_check_host_checks_that_host_only(repo_copy: Path) -> None:
    """A stale tree and a broken model of another host do not fail the one asked about."""
    other = repo_copy / "output/gpu-a/etc/sglang/deepseek.env"
    other.write_text(other.read_text() + "EXTRA=1\n")
    (repo_copy / "schemas").mkdir()  # a stale schemas/ folder is a repository-wide finding
    result = _gen("check", "--host", "llm-two", "--root", str(repo_copy))
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    assert result.stdout == ("gen: 1 host(s) checked (llm-two), their output/ is current; the repository-wide "
                             "checks run without --host\n")
    assert _gen("check", "--root", str(repo_copy)).exit_code == 1  # without --host: the other tree is stale


def test_check_host_fails_on_its_own_stale_tree_and_says_how_to_fix_it(repo_copy: Path) -> None:
    env = repo_copy / "output/llm-two/etc/sglang/qwen.env"
    env.write_text(env.read_text() + "EXTRA=1\n")
    result = _gen("check", "--host", "llm-two", "--host", "gpu-a", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "gen: output/llm-two/etc/sglang/qwen.env would be updated",
        "gen: output/ of llm-two, gpu-a is not current; run `gen render --host llm-two --host gpu-a`"]
    doc = json.loads(_gen("check", "--host", "llm-two", "--format", "json", "--root", str(repo_copy)).stdout)
    assert (doc["scope"], doc["hosts"], doc["current"]) == (["llm-two"], ["llm-two"], False)
    assert [d["code"] for d in doc["diagnostics"]] == ["O001"]


def test_check_host_reports_the_hosts_own_findings(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("port: 30000", "port: 0"))
    result = _gen("check", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert "hosts/llm-two.yaml:37:11: error[S005]: 'services[0].port' must be at least 1, got 0" in result.stderr


def test_check_host_of_an_unknown_host_is_usage(repo_root: Path) -> None:
    result = _gen("check", "--host", "llm-too", "--root", str(repo_root))
    assert result.exit_code == 2 and "did you mean 'llm-two'?" in result.stderr


def test_check_host_and_sglang_together_is_usage(repo_root: Path) -> None:
    assert _gen("check", "--host", "llm-two", "--sglang", "0.5.23", "--root", str(repo_root)).exit_code == 2


def test_show_all_shows_every_host_in_name_order(repo_root: Path) -> None:
    result = _gen("show", "--all", "--root", str(repo_root))
    assert result.exit_code == 0, result.stderr
    heads = [ln for ln in result.stdout.splitlines() if ln.startswith("host ")]
    assert heads == ["host gpu-a (gpu-a.example.net), SGLang 0.5.9", "host gpu-b (gpu-b.example.net), SGLang 0.5.9",
                     "host llm-two (llm-two.lan), SGLang 0.5.9", "host llm-two-full (llm-two-full.lan), SGLang 0.5.9"]
    one = _gen("show", "--host", "llm-two", "--root", str(repo_root)).stdout
    assert one in result.stdout  # each block is the one --host prints
    doc = json.loads(_gen("show", "--all", "--format", "json", "--root", str(repo_root)).stdout)
    assert [h["host"] for h in doc["hosts"]] == ["gpu-a", "gpu-b", "llm-two", "llm-two-full"]
    assert "gpus" not in doc  # several hosts: under hosts only
    single = json.loads(_gen("show", "--host", "llm-two", "--format", "json", "--root", str(repo_root)).stdout)
    assert single["hosts"] == [{k: single[k] for k in single["hosts"][0]}]


def test_show_all_shows_the_hosts_that_render_and_reports_the_others(repo_copy: Path) -> None:
    host = repo_copy / "hosts/gpu-a.yaml"
    host.write_text(host.read_text().replace("port: 30000", "port: 0", 1))
    result = _gen("show", "--all", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert "error[S005]" in result.stderr
    assert [ln for ln in result.stdout.splitlines() if ln.startswith("host ")] == [
        "host llm-two (llm-two.lan), SGLang 0.5.9", "host llm-two-full (llm-two-full.lan), SGLang 0.5.9"]


def test_show_needs_host_or_all(repo_root: Path) -> None:
    assert _gen("show", "--root", str(repo_root)).exit_code == 2
    assert _gen("show", "--all", "--host", "llm-two", "--root", str(repo_root)).exit_code == 2
