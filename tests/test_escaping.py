"""Text that reaches a terminal, a CI log, JSON or SARIF carries no control character (issue 22 item 6).

The class: anything a repository, ``output/``, a probed interpreter or a host can put into
text gen prints (a key path, a value, a file name, a symlink's target, a journal line). A
newline in an S008 key path started a fake ``::error`` line in CI; ESC and OSC 8 sequences
reached the terminal. Diagnostics are escaped when they are made (``errors.Diagnostic``),
every other line when it is printed (``cli/output.Output``), and text quoted from outside
sits behind a gutter, so no line of it can begin a CI command.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main
from generator.cli.output import Output
from generator.errors import Diagnostic, Position, printable, printable_lines, quoted
from generator.live.results import Status, CheckResult

ROOT = Path(__file__).resolve().parents[1]

# ESC colors, OSC 8 hyperlink, CSI cursor-up via C1, CR overwrite, bidi override, zero-width,
# line separator, NEL, a lone surrogate (a file name that is not UTF-8), DEL, BEL.
HOSTILE = ("a\n::error file=hosts/x.yaml,line=1::forged\x1b[31mred\x1b]8;;https://evil.test\x1b\\link"
           "\x1b]8;;\x1b\\\x9b1A\rover\u202eevil\u200b\u2028\x85\udcff\x7f\x07")


def _clean(text: str) -> None:
    """No control character but newline and tab, and no line that a CI runner reads as a command."""
    bad = [ch for ch in text if not ch.isprintable() and ch not in "\n\t"]
    assert not bad, bad
    for line in text.splitlines():
        assert not line.lstrip().startswith(("::", "##[", "##vso[")), line


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"GEN_RENDER_CACHE": "off"})


def test_printable_escapes_every_unprintable_character_and_keeps_the_rest() -> None:
    out = printable(HOSTILE)
    _clean(out)
    assert "\n" not in out and "\\n::error" in out and "\\x1b[31m" in out and "\\u202e" in out
    assert "\\udcff" in out and "\\x85" in out and "\\r" in out
    assert printable(out) == out  # idempotent: an escape is printable
    assert printable("é → ok 'x'") == "é → ok 'x'"
    assert printable_lines("a\tb\nc\x1bd") == "a\tb\nc\\x1bd"
    assert quoted("x\n::error::y") == "  | x\n  | ::error::y"


def test_a_diagnostic_is_escaped_in_every_field_whoever_made_it() -> None:
    d = Diagnostic(Position("hosts/" + HOSTILE, 1, 2), "S008", "key " + HOSTILE, hint="fix " + HOSTILE)
    for text in (str(d), d.pos.path, d.message, d.hint or ""):
        _clean(text)
        assert "\n" not in text
    assert Diagnostic(Position(d.pos.path, 1, 2), d.code, d.message, hint=d.hint) == d  # stable through the cache


HOST_KEY = '  "k\\n::error file=hosts/llm-two.yaml,line=1::forged\\e]8;;https://evil.test\\e\\\\x\\e[2J": 1\n'


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_an_s008_key_path_cannot_forge_a_ci_line_or_reach_the_terminal(repo_copy: Path, fmt: str) -> None:
    """The issue's finding: a newline in a key (and so in the key path of its nested values)."""
    host = repo_copy / "hosts" / "llm-two.yaml"
    text = host.read_text()
    host.write_text(text.replace("storage:\n", "storage:\n" + HOST_KEY.replace("1\n", "{x: \"v\\e[31m\"}\n"), 1))
    result = _gen("check", "--root", str(repo_copy), "--format", fmt)
    assert result.exit_code == 1
    _clean(result.stderr)
    _clean(result.stdout)
    if fmt == "text":
        assert "error[S008]" in result.stderr and "\\n::error" in result.stderr
        return
    doc = json.loads(result.stdout)
    messages = ([d["message"] for d in doc["diagnostics"]] if fmt == "json"
                else [r["message"]["text"] for r in doc["runs"][0]["results"]])
    assert any("\\n::error" in m for m in messages)
    for m in messages:
        _clean(m)


def _no_controls(text: str) -> None:
    assert not [ch for ch in text if not ch.isprintable() and ch not in "\n\t"]


def test_every_output_channel_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    """Text with lines of its own (say, data, detail) keeps them, with every control escaped;
    an error's further lines go behind the gutter. Outside text is quoted() by its caller."""
    out = Output("check", verbosity=1)
    out.say(HOSTILE)
    out.data(HOSTILE)
    out.detail(HOSTILE)
    captured = capsys.readouterr()
    _no_controls(captured.out)
    _no_controls(captured.err)
    out.error_line("gen: " + HOSTILE)
    out.fail("gen: " + HOSTILE)
    captured = capsys.readouterr()
    _clean(captured.err)
    assert "\n  | ::error file=" in captured.err  # the rest of an error sits behind the gutter
    assert out.errors == ["gen: a\n  | ::error file=hosts/x.yaml,line=1::forged\\x1b[31mred\\x1b]8;;https://evil.test"
                          "\\x1b\\link\\x1b]8;;\\x1b\\\\x9b1A\\rover\\u202eevil\\u200b\\u2028\\x85\\udcff\\x7f\\x07"]


def test_a_symlink_target_under_output_is_shown_escaped(repo_copy: Path) -> None:
    """The target is whatever a pull request wrote: a newline in it forged a line of its own."""
    os.symlink("/x\n::error file=hosts/llm-two.yaml::forged\x1b[2J", repo_copy / "output" / "llm-two" / "evil")
    os.symlink("/y\x1b]8;;https://evil.test\x07", repo_copy / "output" / "llm-two" / "etc" / "sglang" / "qwen.env.x")
    (repo_copy / "output" / "llm-two" / "etc" / "sglang" / "qwen.env").unlink()
    os.symlink("/z\n::warning::w", repo_copy / "output" / "llm-two" / "etc" / "sglang" / "qwen.env")
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 3, result.output
    _clean(result.stderr)
    assert "symlink (-> /z\\n::warning::w)" in result.stderr


def test_a_file_of_output_with_control_characters_is_diffed_escaped(repo_copy: Path) -> None:
    unit = repo_copy / "output" / "llm-two" / "etc" / "systemd" / "system" / "sglang-qwen.service"
    unit.write_text(unit.read_text().replace("[Unit]\n", "[Unit]\n\x1b]8;;https://evil.test\x1b\\click\x1b[0m\r\n", 1))
    result = _gen("diff", "--root", str(repo_copy))
    assert result.exit_code == 1
    _clean(result.stdout)
    assert "-\\x1b]8;;https://evil.test\\x1b\\click\\x1b[0m\\r" in result.stdout


def test_a_hosts_evidence_is_quoted_behind_the_gutter() -> None:
    res = CheckResult(Status.FAIL, "h", "qwen", "service", "failed", "ok\n::error::forged\x1b[2J\n##vso[task.x]")
    text = res.render()
    _clean(text)
    assert text.splitlines()[1:] == ["    | ok", "    | ::error::forged\\x1b[2J", "    | ##vso[task.x]"]


def test_a_sarif_location_is_a_uri() -> None:
    from generator.cli.sarif import sarif_log

    log = sarif_log([Diagnostic(Position("hosts/a b#c%2e.yaml", 1, 1), "R003", "x")])
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "hosts/a%20b%23c%252e.yaml"


def test_a_checks_detail_is_one_escaped_line() -> None:
    res = CheckResult(Status.FAIL, "h", "qwen", "version", "sglang 0.5.9\n::error::forged\x1b[2J")
    _clean(res.line())
    assert res.line() == "FAIL h qwen version: sglang 0.5.9\\n::error::forged\\x1b[2J"


# A line break of each kind YAML reads as one, then a key the manifest must never gain.
_BREAKS = ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("brk", _BREAKS, ids=["lf", "cr", "crlf", "nel", "ls", "ps"])
@pytest.mark.parametrize("where", ["program", "file-name"])
def test_gen_import_comments_stay_one_line_whatever_the_words_hold(tmp_path: Path, brk: str, where: str) -> None:
    """A note quotes the command (the dropped program word, the file the command came from):
    a line break in it ended the YAML comment, and the rest became keys of the manifest
    (``trust_remote_code: true``) with no finding."""
    from ruamel.yaml import YAML

    payload = f"{brk}trust_remote_code: true{brk}#"
    program = f"/opt/venv{payload}/bin/python3" if where == "program" else "python3"
    command = f"{program} -m sglang.launch_server --model-path /shared/models/x\n"
    if where == "program":
        result = _gen("import", "--sglang", "0.5.9", "--size-gb", "1", "--root", str(ROOT), "--",
                      program, "-m", "sglang.launch_server", "--model-path", "/shared/models/x")
    else:
        source = tmp_path / f"old{payload}.sh"
        source.write_text(command)
        result = _gen("import", "--sglang", "0.5.9", "--size-gb", "1", "--root", str(ROOT), "--file", str(source))
    assert result.exit_code == 0, result.output
    _clean(result.stdout)
    doc = YAML(typ="safe").load(result.stdout)
    assert doc == {"name": "x", "weights": {"path": "/shared/models/x", "size_gb": 1.0}}, result.stdout
    escaped = printable(payload)
    assert any(line.startswith("# ") and escaped in line for line in result.stdout.splitlines()), result.stdout


def test_a_line_a_ci_runner_reads_as_a_command_is_escaped_in_every_multi_line_output(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Text with lines of its own keeps them; a line of it that GitHub or Azure would read as a
    command (after trimming blanks) cannot start one, whichever value brought the line break."""
    out = Output("show")
    for text in ("ok\n  ::error file=x::forged\n##vso[task.setvariable]x\n\t##[group]g\n:: keep: 1", "::warning::w"):
        out.say(text)
        out.data(text)
    captured = capsys.readouterr().out
    _clean(captured)
    assert "  \\x3a:error file=x::forged\n\\x23#vso[task.setvariable]x\n\t\\x23#[group]g\n" in captured
    assert printable_lines("a: b\n# a comment\nkeep :: this") == "a: b\n# a comment\nkeep :: this"


def test_a_catalogs_text_with_a_line_break_cannot_forge_a_ci_line(tmp_path: Path) -> None:
    """A catalog JSON is repository data (a pull request can re-stamp its digest): its deprecation
    message printed by `gen sglang diff` held a line break and then a workflow command."""
    import shutil

    from generator.load.captured import captured_json

    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "catalogs", repo / "catalogs")
    path = repo / "catalogs" / "sglang" / "0.5.23.json"
    doc = json.loads(path.read_text())
    for action in doc["actions"]:
        if action.get("deprecated"):
            action["deprecated"]["message"] = "Deprecated.\n::error file=hosts/llm-two.yaml::forged\n##vso[task.x]y"
    path.write_text(captured_json(doc))
    result = _gen("sglang", "diff", "0.5.9", "0.5.23", "--root", str(repo))
    assert result.exit_code == 0, result.output
    _clean(result.stdout)
    assert "\\x3a:error file=hosts/llm-two.yaml::forged" in result.stdout
