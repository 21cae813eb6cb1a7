"""Fixes in manifest terms (generator/pipeline/manifest_terms.py): a flag a manifest key
wrote is named by the key in a rule's fix; a flag written under ``args:`` keeps its name."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from generator.cli.main import main
from generator.pipeline.manifest_terms import KEYS, in_manifest_terms
from generator.sglang.catalog import Action

MODEL = "models/qwen3.5-122b-a10b.yaml"


def _action(dest: str, option: str, kind: str = "store", type_: str | None = "int",
            choices: tuple[str, ...] | None = None) -> Action:
    return Action(option_strings=(option,), canonical=option, dest=dest, kind=kind, type=type_, choices=choices,
                  nargs=0 if kind == "store_true" else None, default=None)


TP = ("parallel.tp", _action("tp_size", "--tp-size"))
PARSER = ("parsers.tool_call", _action("tool_call_parser", "--tool-call-parser", type_="str", choices=("qwen", "glm")))
FLAGS = {"--tp-size": TP, "--tool-call-parser": PARSER}


def test_a_flag_and_its_value_become_the_key_and_its_value() -> None:
    assert in_manifest_terms("write --tool-call-parser qwen", FLAGS) == "write `parsers.tool_call: qwen`"
    assert in_manifest_terms("use --tp-size 4, or --page-size 1", FLAGS) == "use `parallel.tp: 4`, or --page-size 1"
    assert in_manifest_terms("(or --tp-size 2)", FLAGS) == "(or `parallel.tp: 2`)"


def test_a_flag_named_alone_becomes_the_key() -> None:
    assert in_manifest_terms("no larger than --tp-size (no scale-up)", FLAGS) == \
        "no larger than `parallel.tp` (no scale-up)"
    assert in_manifest_terms("remove --tool-call-parser", FLAGS) == "remove `parsers.tool_call`"
    assert in_manifest_terms("drop --tp-size or --ep-size", FLAGS) == "drop `parallel.tp` or --ep-size"


def test_what_it_cannot_read_stays_as_written() -> None:
    assert in_manifest_terms("write --tool-call-parser qwen3", FLAGS) == "write --tool-call-parser qwen3"  # no choice
    assert in_manifest_terms("set --tp-size-x 4 and --tp-sizes", FLAGS) == "set --tp-size-x 4 and --tp-sizes"
    assert in_manifest_terms("write --tp-size N", FLAGS) == "write --tp-size N"
    assert in_manifest_terms("nothing to do", {}) == "nothing to do"


def test_every_documented_key_with_a_flag_is_known() -> None:
    assert KEYS["tool_call_parser"] == ("model", ("parsers", "tool_call"))
    assert KEYS["tp_size"] == ("model", ("parallel", "tp"))
    assert KEYS["port"] == ("service", ("port",))
    assert KEYS["speculative_num_draft_tokens"] == ("model", ("speculative", "num_draft_tokens"))


def _check(repo: Path) -> list[str]:
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert "Traceback" not in result.output
    return [ln for ln in result.stderr.splitlines() if "[X160]" in ln]


def test_a_rule_fix_names_the_manifest_key_that_wrote_the_flag(repo_copy: Path) -> None:
    path = repo_copy / MODEL
    text = path.read_text()
    path.write_text(text.replace("tool_call: qwen3_coder", "tool_call: qwen25"))
    (line,) = _check(repo_copy)
    assert line.endswith("(write `parsers.tool_call: qwen`)"), line


def test_the_same_flag_under_args_keeps_its_flag_spelling(repo_copy: Path) -> None:
    path = repo_copy / MODEL
    text = path.read_text().replace("  tool_call: qwen3_coder\n", "")
    assert text.endswith("args:\n  --attention-backend: triton\n")  # the example's own args: (G015)
    path.write_text(text + "  --tool-call-parser: qwen25\n")
    (line,) = _check(repo_copy)
    assert line.endswith("(write --tool-call-parser qwen)"), line
