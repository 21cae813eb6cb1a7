"""``--format json`` on every command that has it, ``--format sarif`` on check, and -q.

The JSON document is checked key by key (docs/json-output.md is its contract); the SARIF
log is validated against the real SARIF 2.1.0 JSON schema (tests/fixtures/sarif/).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main
from generator.cli.sarif import sarif_log
from generator.errors import Diagnostic, Position, Severity

FIXTURES = Path(__file__).parent / "fixtures"
SARIF_SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
DIAGNOSTIC_KEYS = ["file", "line", "column", "severity", "code", "message", "fix"]


def _gen(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def _explain(result: Result) -> str:
    return f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def _doc(result: Result, command: str) -> dict[str, Any]:
    """The one JSON document on stdout, with the keys every command's document has."""
    doc = json.loads(result.stdout)
    assert doc["format_version"] == 1
    assert doc["command"] == command
    assert doc["exit_code"] == result.exit_code, _explain(result)
    for d in doc["diagnostics"]:
        assert list(d) == DIAGNOSTIC_KEYS
    assert doc["summary"] == {"errors": sum(d["severity"] == "error" for d in doc["diagnostics"]),
                              "warnings": sum(d["severity"] != "error" for d in doc["diagnostics"])}
    return doc


def _overlay(case: str, repo: Path) -> None:
    src_root = FIXTURES / "bad" / case
    for src in sorted(src_root.rglob("*")):
        if src.is_file():
            dest = repo / src.relative_to(src_root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)


def test_check_json_on_the_example_repo(repo_root: Path) -> None:
    result = _gen("check", "--format", "json", "--root", str(repo_root))
    assert result.exit_code == 0, _explain(result)
    doc = _doc(result, "check")
    assert doc["diagnostics"] == [] and doc["current"] is True and doc["stale"] == []
    assert doc["hosts"] == sorted(p.stem for p in (repo_root / "hosts").glob("*.yaml"))
    assert result.stderr == ""


def test_check_json_carries_every_diagnostic_with_position(repo_copy: Path) -> None:
    _overlay("wrong-types", repo_copy)
    result = _gen("check", "--format", "json", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    doc = _doc(result, "check")
    first = doc["diagnostics"][0]
    assert first == {"file": "models/qwen3.5-122b-a10b.yaml", "line": 13, "column": 12, "severity": "error",
                     "code": "S002", "message": "'weights.size_gb' must be a number, got str '234 GB'",
                     "fix": None}
    assert doc["summary"]["errors"] == 8
    assert (doc["hosts"], doc["stale"], doc["current"]) == ([], [], False)
    assert result.stderr == "", "json mode prints the document only"


def test_check_json_names_stale_output(repo_copy: Path) -> None:
    (repo_copy / "output/llm-two/etc/sglang/qwen.env").unlink()
    result = _gen("check", "--format", "json", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    doc = _doc(result, "check")
    assert doc["stale"] == [{"path": "output/llm-two/etc/sglang/qwen.env", "action": "created"}]
    assert doc["current"] is False
    assert [(d["code"], d["file"]) for d in doc["diagnostics"]] == [("O001", "output/llm-two/etc/sglang/qwen.env")]


def test_did_you_mean_becomes_fix(repo_copy: Path) -> None:
    _overlay("unknown-keys", repo_copy)
    doc = _doc(_gen("check", "--format", "json", "--root", str(repo_copy)), "check")
    fixes = [d["fix"] for d in doc["diagnostics"] if d["fix"]]
    assert fixes and all(f.startswith("did you mean") for f in fixes)


@pytest.mark.parametrize("case", ["wrong-types", "incident1-eagle3-vllm-flag", "gpu-conflicts"])
def test_check_sarif_is_valid_sarif_2_1_0(case: str, repo_copy: Path) -> None:
    _overlay(case, repo_copy)
    result = _gen("check", "--format", "sarif", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == sorted(set(rules)) and run["results"]
    json_doc = _doc(_gen("check", "--format", "json", "--root", str(repo_copy)), "check")
    assert len(run["results"]) == len(json_doc["diagnostics"])
    for res, diag in zip(run["results"], json_doc["diagnostics"]):
        assert rules[res["ruleIndex"]] == res["ruleId"] == diag["code"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == diag["file"]
        if diag["line"]:
            assert loc["region"] == {"startLine": diag["line"], "startColumn": diag["column"]}


def test_check_sarif_of_a_clean_repo_is_valid_and_empty(repo_root: Path) -> None:
    result = _gen("check", "--format", "sarif", "--root", str(repo_root))
    assert result.exit_code == 0, _explain(result)
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["runs"][0]["results"] == []


def test_check_sglang_pin_json(repo_root: Path) -> None:
    result = _gen("check", "--sglang", "0.5.23", "--format", "json", "--root", str(repo_root))
    doc = _doc(result, "check")
    assert doc["pin"] == "0.5.23" and doc["services"]
    assert {"host", "service", "current_pin", "breaks", "diagnostics", "renders_no_longer",
            "renders_instead"} <= set(doc["services"][0])


def test_render_json_lists_files_and_counts(repo_copy: Path) -> None:
    (repo_copy / "output/llm-two/etc/sglang/qwen.env").unlink()
    result = _gen("render", "--host", "llm-two", "--format", "json", "--root", str(repo_copy))
    assert result.exit_code == 0, _explain(result)
    doc = _doc(result, "render")
    assert doc["written"] is True and doc["hosts"] == ["llm-two"]
    assert {"path": "output/llm-two/etc/sglang/qwen.env", "action": "created"} in doc["files"]
    assert doc["counts"] == {"created": 1, "updated": 0, "unchanged": 3, "removed": 0}
    assert (repo_copy / "output/llm-two/etc/sglang/qwen.env").exists()


def test_render_json_with_errors_writes_nothing(repo_copy: Path) -> None:
    _overlay("wrong-types", repo_copy)
    result = _gen("render", "--all", "--format", "json", "--root", str(repo_copy))
    assert result.exit_code == 1
    doc = _doc(result, "render")
    assert doc["written"] is False and doc["summary"]["errors"] == 8 and doc["files"] == []


def test_diff_json_carries_each_files_unified_diff(repo_copy: Path) -> None:
    unit = repo_copy / "output/llm-two/etc/systemd/system/sglang-qwen.service"
    unit.write_text(unit.read_text().replace("--port 30000", "--port 1"))
    result = _gen("diff", "--format", "json", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    doc = _doc(result, "diff")
    [row] = doc["files"]
    assert row["path"] == "output/llm-two/etc/systemd/system/sglang-qwen.service"
    assert row["action"] == "updated"
    assert "-ExecStart" in row["diff"] or "--port 1" in row["diff"]
    assert "+" in row["diff"] and "--port 30000" in row["diff"]


def test_import_json_carries_the_manifest(repo_root: Path) -> None:
    result = _gen("import", "--sglang", "0.5.9", "--format", "json", "--root", str(repo_root), "--",
                  "python", "-m", "sglang.launch_server", "--model-path", "/models/x", "--tp", "2")
    doc = _doc(result, "import")
    assert doc["pin"] == "0.5.9"
    assert "path: /models/x" in doc["manifest"]


def test_import_json_with_errors_has_no_manifest(repo_root: Path) -> None:
    result = _gen("import", "--sglang", "0.5.9", "--format", "json", "--root", str(repo_root), "--",
                  "python", "-m", "sglang.launch_server", "--model-path", "/m", "--num-speculative-tokens", "3")
    assert result.exit_code == 1
    doc = _doc(result, "import")
    assert doc["manifest"] is None
    assert "F001" in [d["code"] for d in doc["diagnostics"]]


@pytest.mark.parametrize("command", [["verify", "--host", "llm-two"], ["status", "--host", "llm-two"],
                                     ["preflight", "--host", "llm-two"]])
def test_live_commands_json_report_bad_sources_without_ssh(command: list[str], repo_copy: Path) -> None:
    _overlay("wrong-types", repo_copy)
    result = _gen(*command, "--format", "json", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    doc = _doc(result, command[0])
    assert doc["summary"]["errors"] == 8


@pytest.mark.parametrize("command", ["status", "preflight"])
def test_live_commands_json_unknown_service_is_usage(command: str, repo_root: Path) -> None:
    result = _gen(command, "--host", "llm-two", "--service", "nope", "--format", "json", "--root", str(repo_root))
    assert result.exit_code == 2, _explain(result)
    doc = _doc(result, command)
    assert doc["errors"] and "no service 'nope'" in doc["errors"][0]


def _unreachable_repo(repo_copy: Path, tmp_path: Path) -> Path:
    """llm-two reached at a port on 127.0.0.1 nobody listens on (never the inventory's address)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = repo_copy / "hosts/llm-two.yaml"
    text = host.read_text().replace("address: llm-two.lan\nssh:\n  user: root\n",
                                    f"address: 127.0.0.1\nssh:\n  user: root\n  port: {port}\n")
    assert f"port: {port}" in text and "llm-two.lan" not in text
    host.write_text(text)
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  BatchMode yes\n  ConnectTimeout 5\n  StrictHostKeyChecking no\n"
                      "  UserKnownHostsFile /dev/null\n")
    return config


def test_verify_json_of_an_unreachable_host(repo_copy: Path, tmp_path: Path) -> None:
    config = _unreachable_repo(repo_copy, tmp_path)
    result = _gen("verify", "--host", "llm-two", "--format", "json", "--ssh-config", str(config),
                  "--root", str(repo_copy))
    doc = _doc(result, "verify")
    [row] = doc["hosts"]
    assert row["host"] == "llm-two" and row["verdict"] == "UNREACHABLE" and row["error"]
    assert row["checks"] == [] and result.exit_code == 3


@pytest.mark.parametrize("command", ["status", "preflight"])
def test_status_and_preflight_json_of_an_unreachable_host(command: str, repo_copy: Path, tmp_path: Path) -> None:
    config = _unreachable_repo(repo_copy, tmp_path)
    result = _gen(command, "--host", "llm-two", "--format", "json", "--ssh-config", str(config),
                  "--root", str(repo_copy))
    doc = _doc(result, command)
    assert result.exit_code == 3, _explain(result)
    assert doc["errors"] and "127.0.0.1" in doc["errors"][0]
    assert result.stderr == ""


def test_quiet_prints_errors_only(repo_copy: Path) -> None:
    result = _gen("render", "--host", "llm-two", "-q", "--root", str(repo_copy))
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == "", _explain(result)
    _overlay("wrong-types", repo_copy)
    result = _gen("check", "-q", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert sum(": error[" in ln for ln in result.stderr.splitlines()) == 8


def test_quiet_and_verbose_together_is_usage(repo_root: Path) -> None:
    result = _gen("check", "-q", "-v", "--root", str(repo_root))
    assert result.exit_code == 2


def test_every_command_takes_quiet_and_verbose(repo_root: Path) -> None:
    for command in (["render"], ["diff"], ["check"], ["import"], ["verify"], ["status"], ["preflight"],
                    ["show"], ["schema"], ["ansible"], ["sglang", "snapshot"], ["sglang", "diff"]):
        result = _gen(*command, "--help")
        assert result.exit_code == 0, _explain(result)
        assert "-q, --quiet" in result.stdout and "-v, --verbose" in result.stdout, command


def test_ansible_quiet_writes_but_prints_nothing(repo_copy: Path) -> None:
    result = _gen("ansible", "-q", "--root", str(repo_copy))
    assert result.exit_code == 0, _explain(result)
    assert result.stdout == "" and (repo_copy / "ansible" / "site.yml").is_file()


def test_sarif_level_follows_each_diagnostics_severity() -> None:
    """A warning is SARIF "warning" and an error "error": code scanning blocks a PR on errors only."""
    warning = Diagnostic(Position("models/m.yaml", 3, 5), "F101", "abbreviated", Severity.WARNING)
    error = Diagnostic(Position("models/m.yaml", 4, 1), "S005", "too big", Severity.ERROR)
    log = sarif_log([error, warning])
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    assert [(r["ruleId"], r["level"]) for r in log["runs"][0]["results"]] == [
        ("F101", "warning"), ("S005", "error")]


def test_sarif_of_a_run_stopped_by_an_error_is_no_clean_log(repo_copy: Path) -> None:
    """A catalog gen cannot read stops the run with an error that is no diagnostic: the SARIF
    log was an empty result list (a clean-looking upload) while gen exited 1."""
    catalog = repo_copy / "catalogs/sglang/0.5.9.json"
    catalog.unlink()
    catalog.symlink_to("/dev/zero")
    result = _gen("check", "--format", "sarif", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 1
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "catalogs/sglang/0.5.9.json" in note["message"]["text"]
    assert "error[Y009]" in note["message"]["text"]
    clean = sarif_log([], exit_code=0)["runs"][0]["invocations"]
    assert clean == [{"executionSuccessful": True, "exitCode": 0, "toolExecutionNotifications": []}]


def test_an_error_that_stops_the_run_names_files_as_diagnostics_do(repo_copy: Path) -> None:
    """A run-stopping error named the catalog by its absolute path (``gen: /ci/work/…/catalogs/…``)
    while every diagnostic names files relative to the repository."""
    catalog = repo_copy / "catalogs/sglang/0.5.9.json"
    catalog.unlink()
    catalog.mkdir()
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    assert result.stderr.startswith("gen: catalogs/sglang/0.5.9.json: error[Y009]: is a folder"), result.stderr
    assert str(repo_copy) not in result.stderr
