"""Acknowledged warnings: `ack:` in a model or a host file (generator/load/acks.py,
generator/pipeline/acks.py), through the command line as an operator meets them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner, Result

from generator.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"
SARIF_SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
MODEL = "models/qwen3.5-122b-a10b.yaml"
F101 = ("models/qwen3.5-122b-a10b.yaml:36:3: warning[F101]: '--chunked-prefill' is an abbreviation of "
        "'--chunked-prefill-size'; rendered as '--chunked-prefill-size' (abbreviations break when SGLang adds a "
        "flag with the same prefix) (did you mean '--chunked-prefill-size'?)")
REASON = "the short spelling is what our runbooks use (OPS-412)"


def _gen(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def _model(repo: Path, acks: str) -> None:
    """The example model with an abbreviated flag in its args: (warning F101 at line 36) and ``acks``."""
    path = repo / MODEL
    text = path.read_text()
    assert text.count("  --attention-backend: triton\n") == 1
    path.write_text(text.replace("  --attention-backend: triton\n", "  --attention-backend: triton\n  --chunked-prefill: 8192\n")
                    + acks)


def _render(repo: Path) -> None:
    assert _gen("render", "--all", "--root", str(repo)).exit_code == 0


def test_without_an_ack_the_warning_is_printed(repo_copy: Path) -> None:
    _model(repo_copy, "")
    _render(repo_copy)
    result = _gen("check", "--root", str(repo_copy))
    assert result.stderr.splitlines() == [F101, "gen: 0 error(s), 1 warning(s)"]


def test_an_acknowledged_warning_is_not_printed_and_says_so(repo_copy: Path) -> None:
    _model(repo_copy, f"ack:\n  - code: F101\n    reason: {REASON}\n")
    _render(repo_copy)
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "gen: 1 acknowledged warning(s) not shown (F101); -v or `gen show` lists them"]
    verbose = _gen("check", "-v", "--root", str(repo_copy)).stderr
    assert f"{F101} [acknowledged at models/qwen3.5-122b-a10b.yaml:38:11: {REASON}]" in verbose
    assert _gen("check", "-q", "--root", str(repo_copy)).stderr == ""


def test_json_and_sarif_carry_the_acknowledged_warning(repo_copy: Path) -> None:
    _model(repo_copy, f"ack:\n  - code: F101\n    reason: {REASON}\n")
    _render(repo_copy)
    doc = json.loads(_gen("check", "--format", "json", "--root", str(repo_copy)).stdout)
    assert doc["diagnostics"] == [] and doc["summary"] == {"errors": 0, "warnings": 0}
    (acked,) = doc["acknowledged"]
    assert (acked["code"], acked["line"], acked["reason"], acked["ack"]) == (
        "F101", 36, REASON, "models/qwen3.5-122b-a10b.yaml:38:11")
    log = json.loads(_gen("check", "--format", "sarif", "--root", str(repo_copy)).stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "F101"
    assert res["suppressions"] == [{"kind": "inSource", "status": "accepted", "justification": REASON}]


def test_gen_show_lists_the_acks_of_the_host_and_its_models(repo_copy: Path) -> None:
    _model(repo_copy, f"ack:\n  - code: F101\n    reason: {REASON}\n")
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("listen: 127.0.0.1", "listen: 0.0.0.0")
                    + "ack:\n  - {code: R010, reason: behind the site's authenticating proxy}\n")
    _render(repo_copy)
    result = _gen("show", "--host", "llm-two", "--root", str(repo_copy))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-3:] == [
        "acknowledged warnings:",
        "  R010 at hosts/llm-two.yaml:41 (1 warning(s)): behind the site's authenticating proxy",
        f"  F101 at models/qwen3.5-122b-a10b.yaml:38 (1 warning(s)): {REASON}"]
    doc = json.loads(_gen("show", "--host", "llm-two", "--format", "json", "--root", str(repo_copy)).stdout)
    assert [(a["code"], a["file"], a["matches"]) for a in doc["acks"]] == [
        ("R010", "hosts/llm-two.yaml", 1), ("F101", MODEL, 1)]


def test_an_ack_covers_its_own_file_only(repo_copy: Path) -> None:
    """The same warning in another file is still printed."""
    _model(repo_copy, f"ack:\n  - code: F101\n    reason: {REASON}\n")
    other = repo_copy / "models/kimi-k2.5-eagle3.yaml"
    other.write_text(other.read_text() + "args:\n  --chunked-prefill: 8192\n")
    _render(repo_copy)
    result = _gen("check", "--root", str(repo_copy))
    assert [ln.split(": ")[1] for ln in result.stderr.splitlines() if "warning[" in ln] == ["warning[F101]"]
    assert "models/kimi-k2.5-eagle3.yaml" in result.stderr


def test_acks_that_cannot_be_are_errors_and_a_stale_one_a_warning(repo_copy: Path) -> None:
    _model(repo_copy, "ack:\n"
           "  - {code: F101, reason: runbooks}\n"      # line 38: fine
           "  - {code: P007, reason: later}\n"         # an error
           "  - {code: X999, reason: typo}\n"          # no such rule
           "  - {code: Q001, reason: typo}\n"          # no such code
           "  - {code: S022, reason: quiet please}\n"  # an ack's own finding
           "  - {code: F101, reason: again}\n"         # twice
           "  - {code: F104, reason: was deprecated}\n")  # matches nothing any more
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "models/qwen3.5-122b-a10b.yaml:39:12: error[S020]: ack of 'P007': it is an error (a port already used by "
        "another service), and an error cannot be acknowledged (fix what it reports, then remove this entry)",
        "models/qwen3.5-122b-a10b.yaml:40:12: error[S021]: ack of 'X999': gen reports no such code (write a code as "
        "printed in brackets, e.g. warning[F104])",
        "models/qwen3.5-122b-a10b.yaml:41:12: error[S021]: ack of 'Q001': gen reports no such code (write a code as "
        "printed in brackets, e.g. warning[F104])",
        "models/qwen3.5-122b-a10b.yaml:42:12: error[S020]: ack of 'S022': a finding about acks cannot itself be "
        "acknowledged (fix or remove the ack it names)",
        "models/qwen3.5-122b-a10b.yaml:43:12: error[S023]: 'F101' is acknowledged twice in this file (first at "
        "line 38) (keep one entry, with both reasons)",
        "models/qwen3.5-122b-a10b.yaml:44:12: warning[S022]: ack of 'F104' matches no warning of this file "
        "(remove the entry: the warning it was for is gone)",
        "gen: 5 error(s), 1 warning(s)",
        "gen: 1 acknowledged warning(s) not shown (F101); -v or `gen show` lists them"]
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 1  # an error: nothing written


def test_a_stale_ack_is_only_judged_when_every_host_is_processed(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two-full.yaml"
    host.write_text(host.read_text() + "ack:\n  - {code: R010, reason: proxy}\n")
    assert "warning[S022]" in _gen("check", "--root", str(repo_copy)).stderr
    assert "S022" not in _gen("check", "--host", "llm-two", "--root", str(repo_copy)).stderr


def test_an_ack_needs_a_code_and_a_reason(repo_copy: Path) -> None:
    _model(repo_copy, "ack:\n  - {code: F101}\n  - {code: f101, reason: x}\n  - {code: F101, reason: ''}\n")
    lines = [ln for ln in _gen("check", "--root", str(repo_copy)).stderr.splitlines() if "error[" in ln]
    assert lines == [
        "models/qwen3.5-122b-a10b.yaml:38:5: error[S003]: required key 'ack[0].reason' is missing",
        "models/qwen3.5-122b-a10b.yaml:39:12: error[S009]: value 'f101' at 'ack[1].code' is not a diagnostic code "
        "like 'F104' (a letter and three digits)",
        "models/qwen3.5-122b-a10b.yaml:40:26: error[S005]: 'ack[2].reason' must not be empty"]


def test_an_ack_in_the_wrong_file_names_the_file_that_reports_the_warning(repo_copy: Path) -> None:
    """The warning is the model's; an ack of it in the host's file matches nothing and says where to write it."""
    _model(repo_copy, "")
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text() + "ack:\n  - {code: F101, reason: runbooks}\n")
    _render(repo_copy)
    lines = _gen("check", "--root", str(repo_copy)).stderr.splitlines()
    assert "hosts/llm-two.yaml:41:12: warning[S022]: ack of 'F101' matches no warning of this file ('F101' is " \
           "reported in models/qwen3.5-122b-a10b.yaml: move the entry there (an ack covers the warnings of its " \
           "own file))" in lines
    assert F101 in lines  # still printed: the ack is in another file


def test_an_ack_without_its_reason_is_shown_the_shape_to_write(repo_copy: Path) -> None:
    """`ack: [X160]`, `ack: {X160: why}` and `ack: X160`: each says how an entry is written."""
    shape = "(write each entry as a code and its reason: '- {code: X160, reason: \"why it is accepted\"}')"
    base = (repo_copy / MODEL).read_text()
    for text, error in [("ack: [X160]\n", "36:7: error[S002]: 'ack[0]' must be a mapping, got str 'X160'"),
                        ("ack:\n  X160: old clients\n", "37:3: error[S002]: 'ack' must be a list, got a mapping"),
                        ("ack: X160\n", "36:6: error[S002]: 'ack' must be a list, got str 'X160'")]:
        (repo_copy / MODEL).write_text(base + text)
        lines = _gen("check", "--root", str(repo_copy)).stderr.splitlines()
        assert f"{MODEL}:{error} {shape}" in lines, (text, lines)
