"""CLI tests (click CliRunner) for render, diff and check: output and every exit code.

On failure each assertion prints the command's stderr (pip-tools style), so a red test
says what gen said.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli import main as cli_module
from generator.cli.main import main


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _explain(result: Result) -> str:
    return f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def test_help_documents_the_exit_codes() -> None:
    for args in ([], ["render"], ["diff"], ["check"]):
        result = _gen(*args, "--help")
        assert result.exit_code == 0, _explain(result)
        for line in ("0  success", "1  findings", "2  usage error", "3  environment failure", "4  internal error"):
            assert line in result.stdout, _explain(result)


def test_render_writes_and_reports_per_file(repo_copy: Path) -> None:
    (repo_copy / "output" / "llm-two" / "etc/sglang/qwen.env").unlink()
    unit = repo_copy / "output/llm-two/etc/systemd/system/sglang-qwen.service"
    unit.write_text(unit.read_text().replace("--port 30000", "--port 1"))
    result = _gen("render", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 0, _explain(result)
    assert result.stdout.splitlines() == [
        "created   output/llm-two/etc/sglang/qwen.env",
        "updated   output/llm-two/etc/systemd/system/sglang-qwen.service",
        "gen: 1 host(s): 1 created, 1 updated, 2 unchanged, 0 removed",
    ]
    assert "--port 30000" in unit.read_text()


def test_render_verbose_lists_unchanged_files_too(repo_copy: Path) -> None:
    result = _gen("render", "--host", "llm-two", "-v", "--root", str(repo_copy))
    assert result.exit_code == 0, _explain(result)
    assert result.stdout.splitlines() == [
        "unchanged output/llm-two/.gen-managed",
        "unchanged output/llm-two/etc/sglang/qwen.env",
        "unchanged output/llm-two/etc/systemd/system/sglang-qwen.service",
        "unchanged output/llm-two/usr/local/libexec/gen/sglang-wait-ready",
        "gen: 1 host(s): 0 created, 0 updated, 4 unchanged, 0 removed",
    ]


def test_render_removes_files_of_a_removed_service_but_nothing_else(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    text = host.read_text()
    host.write_text(text[: text.index("services:")])
    mine = repo_copy / "output/llm-two/etc/sglang/notes.txt"
    mine.write_text("operator's own file\n")
    # output/ is exactly what gen renders: the operator's file is O002, never touched, and
    # render writes nothing while it is there.
    blocked = _gen("render", "--all", "--root", str(repo_copy))
    assert blocked.exit_code == 1 and "output/llm-two/etc/sglang/notes.txt: error[O002]" in blocked.stderr
    assert (repo_copy / "output/llm-two/etc/sglang/qwen.env").exists()
    moved = mine.rename(repo_copy / "notes.txt")
    result = _gen("render", "--all", "--root", str(repo_copy))
    assert result.exit_code == 0, _explain(result)
    assert "removed   output/llm-two/etc/systemd/system/sglang-qwen.service" in result.stdout
    assert "removed   output/llm-two/etc/sglang/qwen.env" in result.stdout
    assert not (repo_copy / "output/llm-two/etc/systemd").exists()
    assert moved.read_text() == "operator's own file\n"


def test_removed_host_tree_is_removed_by_render_all(repo_copy: Path) -> None:
    (repo_copy / "hosts/llm-two-full.yaml").unlink()
    check = _gen("check", "--root", str(repo_copy))
    assert check.exit_code == 1, _explain(check)
    assert "gen: output/llm-two-full/etc/sglang/kimi.env would be removed" in check.stderr
    result = _gen("render", "--all", "--root", str(repo_copy))
    assert result.exit_code == 0, _explain(result)
    assert not (repo_copy / "output/llm-two-full").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["render"], "give --host NAME or --all"),
        (["render", "--host", "llm-two", "--all"], "give --host or --all, not both"),
        (["render", "--hots", "llm-two"], "No such option '--hots'. (Did you mean one of: '--host', '--jobs', '--root'?)"),
        (["render", "--host", "llm-tow"], "gen: no host 'llm-tow' in hosts/ (known: gpu-a, gpu-b, llm-two, llm-two-full); "
                                          "did you mean 'llm-two'?"),
        (["diff", "--host", "nope"], "gen: no host 'nope' in hosts/"),
        (["frobnicate"], "No such command 'frobnicate'"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str, repo_copy: Path) -> None:
    result = _gen(*args, "--root", str(repo_copy)) if args != ["frobnicate"] else _gen(*args)
    assert result.exit_code == 2, _explain(result)
    assert message in result.stderr, _explain(result)


def test_invalid_input_exits_1_and_writes_nothing(repo_copy: Path) -> None:
    model = repo_copy / "models/qwen3.5-122b-a10b.yaml"
    model.write_text(model.read_text().replace("  tp: 4", "  tp: 4\n  tpp: 2"))
    before = (repo_copy / "output/llm-two/etc/systemd/system/sglang-qwen.service").read_text()
    result = _gen("render", "--all", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    assert result.stderr.splitlines() == [
        "models/qwen3.5-122b-a10b.yaml:16:3: error[S001]: unknown key 'parallel.tpp' (did you mean 'tp'?)",
        "gen: 1 error(s), 0 warning(s)",
        "gen: nothing written",
    ]
    assert result.stdout == ""
    assert (repo_copy / "output/llm-two/etc/systemd/system/sglang-qwen.service").read_text() == before


def test_diff_and_check_on_a_current_tree_exit_0(repo_copy: Path) -> None:
    diff = _gen("diff", "--root", str(repo_copy))
    assert (diff.exit_code, diff.stdout) == (0, "No changes. output/ matches the sources: applying it restarts "
                                                "nothing.\n"), _explain(diff)
    check = _gen("check", "--root", str(repo_copy))
    assert check.exit_code == 0, _explain(check)
    assert check.stdout == "gen: 4 host(s) checked, output/ is current\n"


def test_diff_shows_one_changed_flag_as_one_changed_line_and_writes_nothing(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("port: 30000", "port: 30001"))
    before = {p: p.read_bytes() for p in (repo_copy / "output").rglob("*") if p.is_file()}
    result = _gen("diff", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    patch, plan = result.stdout.split("\nPlan: what applying output/ does on the hosts\n")
    changed = [ln for ln in patch.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changed == [
        "-  --port 30000 \\", "+  --port 30001 \\",
        "-ExecStartPost=/root/sglang-main/.venv/bin/python /usr/local/libexec/gen/sglang-wait-ready "
        "http://127.0.0.1:30000/health",
        "+ExecStartPost=/root/sglang-main/.venv/bin/python /usr/local/libexec/gen/sglang-wait-ready "
        "http://127.0.0.1:30001/health",
    ], result.stdout
    assert plan.splitlines()[2:] == [
        "llm-two:", "  ~ sglang-qwen.service  restart: unit: ExecStart (--port), ExecStartPost", "",
        "Hosts affected: 1: llm-two (1 to restart)", "Plan: 0 to add, 1 to restart, 0 to remove."]
    assert {p: p.read_bytes() for p in (repo_copy / "output").rglob("*") if p.is_file()} == before


def test_check_fails_on_stale_or_hand_edited_output(repo_copy: Path) -> None:
    env = repo_copy / "output/llm-two/etc/sglang/qwen.env"
    env.write_text(env.read_text() + "EXTRA=1\n")
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1, _explain(result)
    assert result.stderr.splitlines() == [
        "gen: output/llm-two/etc/sglang/qwen.env would be updated",
        "gen: output/ is not current; run `gen render --all`",
    ]


def test_unwritable_output_is_an_environment_failure_exit_3(repo_copy: Path) -> None:
    target = repo_copy / "output/llm-two/etc/sglang"
    for child in target.iterdir():
        child.unlink()
    target.rmdir()
    target.write_text("a file where a folder must be\n")  # mkdir/replace fail even as root
    (repo_copy / "output/llm-two/.gen-managed").write_text("# Generated by gen\n")
    result = _gen("render", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 3, _explain(result)
    assert result.stderr.startswith("gen: cannot write output/llm-two/etc/sglang/qwen.env"), _explain(result)
    assert "Traceback" not in result.stderr


def test_broken_template_is_an_environment_failure_naming_file_and_line(repo_copy: Path) -> None:
    template = repo_copy / "templates/sglang.env.j2"
    template.write_text(template.read_text() + "{{ no_such_variable }}\n")
    result = _gen("render", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 3, _explain(result)
    assert result.stderr == "gen: templates/sglang.env.j2:5: 'no_such_variable' is undefined\n", _explain(result)


def test_a_bug_is_one_line_exit_4_without_traceback(repo_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kw: object) -> None:
        raise ZeroDivisionError("simulated bug")

    monkeypatch.setattr(cli_module, "run_fleet", broken)
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 4, _explain(result)
    assert result.stderr == ("gen: internal error: ZeroDivisionError: simulated bug "
                             "(set GEN_DEBUG=1 for the traceback)\n")


def test_lazy_commands_load_by_name_and_stay_out_of_a_plain_check() -> None:
    import subprocess
    import sys

    from generator.cli.main import LAZY_COMMANDS

    for name in LAZY_COMMANDS:
        result = _gen(name, "--help")
        assert result.exit_code == 0, _explain(result)
        assert result.stdout.startswith(f"Usage: main {name} "), _explain(result)
    probe = ("import sys, generator.cli.main; "
             "print(sorted(m for m in sys.modules if m.startswith(('generator.cli.', 'testinfra', 'ansible'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    # output, complete (and the schema hook) are small: they import only click and ruamel.
    assert out.strip() == "['generator.cli.common', 'generator.cli.complete', 'generator.cli.generated', 'generator.cli.main', 'generator.cli.output']"
