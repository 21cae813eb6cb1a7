"""``gen import``'s comments cannot become YAML: whatever a command says, its manifest loads as the keys gen wrote.

A note quotes the command (the program word dropped, a flag as written, a file name):
a line break in it once ended the comment and added keys such as ``trust_remote_code:
true`` (issue 22 item 6). Every character YAML reads as a break (LF, CR, and YAML 1.1's
NEL, LS, PS) or refuses, and every control or invisible one, is written as an escape;
the proof is loading the printed manifest back with gen's own loader.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from import_render import manifest_data

from generator.importer.build import import_command
from generator.importer.yaml_text import comment
from generator.sglang.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
CATALOG = load_catalog(ROOT, "0.5.9")
BREAKS = ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1b[31m", "\x00", "\u202e", "\ufeff"]


def imported(program: str) -> str:
    result = import_command(f"{shlex.quote(program)} -m sglang.launch_server --model-path /shared/models/x",
                            "<command>", CATALOG)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    return result.manifest


def test_a_line_break_in_the_program_word_stays_in_its_comment() -> None:
    for brk in BREAKS:
        text = imported(f"/opt/venv/bin/python{brk}trust_remote_code: true{brk}args: {{--api-key: x}}")
        data = manifest_data(text)
        assert "trust_remote_code" not in data and "args" not in data, (brk, text)
        assert data["weights"]["path"] == "/shared/models/x"
        for line in text.splitlines():
            assert line.startswith(("#", " ", "name:", "weights:")) or not line, (brk, line)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda t: t.strip() and "\x00" not in t))
def test_any_program_word_keeps_the_manifest_as_written(word: str) -> None:
    text = imported("/opt/" + word + "/python")
    data = manifest_data(text)
    assert set(data) == {"name", "weights"}, text
    # every line the importer wrote is either a comment, blank, or a key it emits
    assert all(ln.lstrip().startswith("#") or not ln.strip() or ":" in ln for ln in text.splitlines())


def test_the_comment_escape_is_one_printable_line() -> None:
    for brk in BREAKS:
        out = comment(f"a{brk}b")
        assert out.isprintable() and out.startswith("# a") and out.endswith("b"), repr(out)
    assert comment("plain ascii stays") == "# plain ascii stays"
    assert comment("é ü stay", "  ") == "  # é ü stay"


def test_a_file_name_with_a_newline_stays_in_the_header() -> None:
    result = import_command("python -m sglang.launch_server --model-path /shared/models/x",
                            "old\ntrust_remote_code: true.service", CATALOG)
    assert result.manifest is not None
    assert "trust_remote_code" not in manifest_data(result.manifest)
