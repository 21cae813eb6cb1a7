"""YAML mistakes in plain words (generator/load/yaml_errors.py, and the schema's wording of
what YAML read from a mistake): each case is the exact line an operator reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from generator import codes
from generator.cli.main import main
from generator.errors import Diagnostics
from generator.load import libyaml, yaml_errors
from generator.load.manifests import load_text
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, check_strings, validate

ROOT = Path(__file__).resolve().parent.parent
SAYS = "; the YAML parser says "

# (text, the one diagnostic, its position and code first). Variants of each class.
CASES = [
    # Y020: a tab, wherever it sits in the indentation
    ('name: x\nweights:\n\tpath: /a\n',
     'f.yaml:3:1: error[Y020]: a tab in the indentation: YAML indents with spaces only; the YAML parser '
     'says "found character that cannot start any token" (replace the tab with spaces)'),
    ('name: x\nweights:\n  path: /a\n\tsize_gb: 3\n',
     'f.yaml:4:1: error[Y020]: a tab in the indentation: YAML indents with spaces only; the YAML parser '
     'says "found a tab character that violates indentation" (replace the tab with spaces; line 3 is '
     'indented 2 spaces)'),
    ('name: x\nweights:\n  \tpath: /a\n',
     'f.yaml:3:3: error[Y020]: a tab in the indentation: YAML indents with spaces only; the YAML parser '
     'says "found character that cannot start any token" (replace the tab with spaces)'),
    ('gpus:\n\t- 0\n',
     'f.yaml:2:1: error[Y020]: a tab in the indentation: YAML indents with spaces only; the YAML parser '
     'says "found character that cannot start any token" (replace the tab with spaces)'),
    # Y021: a one-space dedent in a mapping, in a list, deep down; a line indented past a value
    ('name: x\nweights:\n  path: /a\n size_gb: 3\n',
     "f.yaml:4:2: error[Y021]: 'size_gb' is indented 1 space: a one-space dedent; above it, 'path' (line "
     '3) starts at 2 spaces, \'weights\' (line 2) at 0; the YAML parser says "did not find expected key" '
     "(indent it 2 spaces, like 'path' (line 3), to stay under 'weights'; or 0 spaces to be a key beside "
     "'weights' (line 2))"),
    ('gpus:\n  - 0\n - 1\n',
     "f.yaml:3:2: error[Y021]: '- 1' is indented 1 space: a one-space dedent; above it, the '-' of line 2 "
     'starts at 2 spaces, \'gpus\' (line 1) at 0; the YAML parser says "did not find expected key" (indent '
     "it 2 spaces, like the '-' of line 2, to stay under 'gpus')"),
    ('a:\n  b:\n    c: 1\n   d: 2\n',
     "f.yaml:4:4: error[Y021]: 'd' is indented 3 spaces: a one-space dedent; above it, 'c' (line 3) "
     'starts at 4 spaces, \'b\' (line 2) at 2, \'a\' (line 1) at 0; the YAML parser says "did not find '
     'expected key" (indent it 4 spaces, like \'c\' (line 3), to stay under \'b\'; or 2 spaces to be a key '
     "beside 'b' (line 2))"),
    ('services:\n  - name: a\n   port: 3\n',
     "f.yaml:3:4: error[Y021]: 'port' is indented 3 spaces: a one-space dedent; above it, 'name' (line 2) "
     'starts at 4 spaces, the \'-\' of line 2 at 2, \'services\' (line 1) at 0; the YAML parser says "did not '
     'find expected \'-\' indicator" (indent it 4 spaces, like \'name\' (line 2), to stay in the item of line '
     "2; or 0 spaces to be a key beside 'services' (line 1))"),
    ('name: x\nweights:\n  path: /a\n   size_gb: 3\n',
     "f.yaml:4:4: error[Y021]: 'size_gb' is indented 3 spaces, more than line 3 ('path', 2 spaces), which "
     'already has a value: YAML reads this line as the rest of that value; the YAML parser says "mapping '
     'values are not allowed in this context" (indent it 2 spaces, like line 3)'),
    # Y021: a list item at the wrong level, both ways round
    ('name: x\nservices:\n  - name: a\n  port: 3\n',
     "f.yaml:4:3: error[Y021]: 'port' starts at the column of the list's '-' (line 3): it is neither a "
     'new item nor a key of the item above; the YAML parser says "did not find expected \'-\' indicator" '
     "(indent it 4 spaces to belong to the item above, or write '- ' before it for a new item)"),
    ('weights:\n  path: /a\n  - 3\n',
     "f.yaml:3:3: error[Y021]: a list item among the keys of a mapping ('path' (line 2) is a key); the "
     'YAML parser says "did not find expected key" (remove the \'- \', or put the list under a key of its '
     'own)'),
    # Y022: quotes, closed on a later line where the error is, or never
    ('name: "x\nweights:\n  path: /a\n',
     'f.yaml:1:7: error[Y022]: the double quote opened here is not closed on its line, so YAML reads the '
     'lines below as part of this value; the YAML parser says "found unexpected end of stream" (close it '
     'with " at the end of the value)'),
    ("name: 'x\nweights:\n  path: /a\n",
     'f.yaml:1:7: error[Y022]: the single quote opened here is not closed on its line, so YAML reads the '
     'lines below as part of this value; the YAML parser says "found unexpected end of stream" (close it '
     "with ' at the end of the value)"),
    ('name: "x\nweights: "a"\n  path: /a\n',
     'f.yaml:1:7: error[Y022]: the double quote opened here is not closed on its line, so YAML reads the '
     'lines below as part of this value; the YAML parser says "did not find expected key" (close it with '
     '" at the end of the value)'),
    # a quote meant to run over two lines, and a later dedent: the dedent is named
    ('name: "x\n  y"\nweights:\n  path: /a\n size: 1\n',
     "f.yaml:5:2: error[Y021]: 'size' is indented 1 space: a one-space dedent; above it, 'path' (line 4) "
     'starts at 2 spaces, \'weights\' (line 3) at 0; the YAML parser says "did not find expected key" '
     "(indent it 2 spaces, like 'path' (line 4), to stay under 'weights'; or 0 spaces to be a key beside "
     "'weights' (line 3))"),
    # Y023: no space after a colon, on the line of the error or above it
    ('name:x\nweights:\n  path: /a\n',
     "f.yaml:1:5: error[Y023]: no space after the colon of 'name:x': YAML reads it as one word, not a key "
     'and its value; the YAML parser says "mapping values are not allowed in this context" (write \'name: '
     "x')"),
    ('name: x\nweights:\n  path:/a\n  size_gb: 3\n',
     "f.yaml:3:7: error[Y023]: no space after the colon of 'path:/a': YAML reads it as one word, not a "
     'key and its value; the YAML parser says "mapping values are not allowed in this context" (write '
     "'path: /a')"),
    # Y024, Y025
    ('name: x\ndesc: a: b\n',
     "f.yaml:2:8: error[Y024]: a second ': ' on one line: a value that holds a colon and a space must be "
     'quoted; the YAML parser says "mapping values are not allowed in this context" (write \'desc: "a: b"\')'),
    ('name: @x\n',
     "f.yaml:1:7: error[Y025]: a value that starts with '@' must be quoted: YAML reads '@' as reserved; "
     'the YAML parser says "found character that cannot start any token" (write \'name: "@x"\')'),
    ('name: `x`\n',
     'f.yaml:1:7: error[Y025]: a value that starts with a backtick must be quoted: YAML reads a backtick '
     'as reserved; the YAML parser says "found character that cannot start any token" (write \'name: '
     '"`x`"\')'),
    # Y026: not closed, or no comma
    ('name: x\nparsers: {tool_call: glm\nweights: 3\n',
     "f.yaml:2:10: error[Y026]: the '{' opened here is not closed: the mapping runs on into line 3; the "
     'YAML parser says "did not find expected \',\' or \'}\'" (close it with \'}\' after its last item)'),
    ('gpus: {a: 1 b: 2}\n',
     "f.yaml:1:14: error[Y026]: expected ',' or '}' here: the items of a '{...}' mapping are separated by "
     'commas; the YAML parser says "did not find expected \',\' or \'}\'" (put \', \' between the items, or '
     'quote a value that holds spaces or colons)'),
    # Y027: no colon; or a list item without its dash
    ('name: x\nweights\n  path: /a\n',
     'f.yaml:2:1: error[Y027]: \'weights\' is a key without its \':\'; the YAML parser says "could not find '
     'expected \':\'" (write \'weights:\')'),
    ('a:\n  - b\n  c\n',
     "f.yaml:3:3: error[Y027]: 'c' follows the list items above it but has no '- ', and as a key it has "
     'no \':\'; the YAML parser says "could not find expected \':\'" (write \'- c\' for a list item, or \'c:\' '
     'for a key)'),
    # Y028
    ('name: "x" y\n',
     'f.yaml:1:11: error[Y028]: unexpected \'y\' after a complete value; the YAML parser says "did not find '
     'expected key" (quote the whole value, or remove the extra text)'),
    ('gpus: [0, 1]]\n',
     'f.yaml:1:13: error[Y028]: unexpected \']\' after a complete value; the YAML parser says "did not find '
     'expected key" (quote the whole value, or remove the extra text)'),
    # what is no known mistake keeps the parser's words
    ('a: "\\q"\n',
     'f.yaml:1:5: error[Y001]: malformed YAML: found unknown escape character'),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[1].split(": ")[1] + ":" + c[0][:20] for c in CASES])
def test_each_yaml_mistake_is_worded_where_it_is(text: str, expected: str) -> None:
    diags = Diagnostics()
    assert load_text(text, "f.yaml", diags) is None
    assert [str(d) for d in diags.items] == [expected]


def _pure_error(text: str) -> MarkedYAMLError:
    with pytest.raises(MarkedYAMLError) as info:
        YAML(typ="safe", pure=True).compose(text)
    return info.value


@pytest.mark.parametrize(("text", "expected"), [c for c in CASES if "Y001" not in c[1]])
def test_the_pure_python_parser_gets_the_same_code_and_place(text: str, expected: str) -> None:
    """ruamel without libyaml words its errors differently; the diagnosis reads the text, so
    the code and the position do not depend on which parser ran."""
    found = yaml_errors.explain(text, _pure_error(text))
    place = expected.split(": error[")[0]
    assert (f"f.yaml:{found.line}:{found.col}", found.code) == (place, expected.split("[")[1][:4])


def test_without_a_known_mistake_the_parser_words_stay() -> None:
    """A diagnosis that finds nothing (or reads the text wrongly) reports Y001 with the parser's text."""
    found = yaml_errors.explain("a: b\n", _pure_error('a: "\\q"\n'))
    assert found.code == "Y001" and found.message.startswith("malformed YAML: ")


EXAMPLES = [ROOT / "models/qwen3.5-122b-a10b.yaml", ROOT / "hosts/llm-two.yaml", ROOT / "models/kimi-k2.5-eagle3.yaml"]
EDITS = ["\t", " ", "  ", '"', "'", "[", "{", "]", ":", ": ", "- ", "-", "#", "\n", "\n ", "@", "*", ""]


@settings(max_examples=examples(300))
@given(data=st.data(), which=st.sampled_from(EXAMPLES))
def test_a_mutated_manifest_is_diagnosed_without_an_exception(data: st.DataObject, which: Path) -> None:
    """Random one- and two-character edits of the examples: whatever the parser refuses, the
    diagnosis itself (unguarded) neither raises nor points outside the file."""
    text = which.read_text()
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 2))
        text = text[:at] + data.draw(st.sampled_from(EDITS)) + text[at + cut:]
    try:
        libyaml.compose(text)
    except MarkedYAMLError as exc:
        lines = text.split("\n")
        problem = (exc.problem_mark.line, exc.problem_mark.column) if exc.problem_mark else (0, 0)
        context = (exc.context_mark.line, exc.context_mark.column) if exc.context_mark else None
        found = yaml_errors._diagnose(lines, problem, context, str(exc.problem or "").lower(),
                                      str(exc.context or "").lower())
        if found is not None:
            line, col, code, message, _fix = found
            assert 0 <= line < len(lines) and 0 <= col <= len(lines[line]), (found, text)
            assert codes.lookup(code) is not None and message
    except Exception:  # noqa: BLE001 - other parser errors (a reader error) are not this module's
        pass


MODEL = "name: m\nweights: {path: /shared/models/m, size_gb: 10}\n"
HOST = """name: h
address: h.lan
gpus:
  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, numa_node: 0}
numa:
  - {node: 0, cpus: "0-3"}
storage: {model_root: /m}
sglang: {pin: "0.5.9", python: /p}
"""

SCHEMA_CASES = [
    # a key that lost its indentation: where it belongs
    (MODEL + "parsers:\ntool_call: glm\n", MODEL_SCHEMA, [
        "models/m.yaml:3:9: error[S002]: 'parsers' has no value: it is null (nothing after 'parsers:' and nothing "
        "indented below it, or null written) (write its value after 'parsers:', or remove the key)",
        "models/m.yaml:4:1: error[S001]: unknown key 'tool_call' ('tool_call' is a key of 'parsers' (line 3): "
        "indent it under 'parsers')"]),
    # weights.size_gb is optional in the schema (a model snapshot gives it; without one, M010)
    ("name: m\nweights:\n  path: /a\nsize_gb: 3\n", MODEL_SCHEMA, [
        "models/m.yaml:4:1: error[S001]: unknown key 'size_gb' ('size_gb' is a key of 'weights' (line 2): "
        "indent it under 'weights')"]),
    # a key of a section that is not written at all
    (MODEL + "tool_call: glm\n", MODEL_SCHEMA, [
        "models/m.yaml:3:1: error[S001]: unknown key 'tool_call' ('tool_call' is a key of 'parsers': write it "
        "under 'parsers:')"]),
    (HOST + "services:\n  - name: a\n    model: m\nport: 3\n", HOST_SCHEMA, [
        "hosts/h.yaml:10:5: error[S003]: required key 'services[0].port' is missing",
        "hosts/h.yaml:12:1: error[S001]: unknown key 'port' ('port' is a key of an item of 'services' (line 9): "
        "indent it into an item of 'services')"]),
    # a mapping or a list that YAML read as one word
    ("name: m\nweights:\n  path:/a\n", MODEL_SCHEMA, [
        "models/m.yaml:3:3: error[S002]: 'weights' must be a mapping, got str 'path:/a' (write 'path: /a': without "
        "a space after the colon YAML reads one word, not a key and its value)"]),
    (HOST + "services:\n  - name: a\n    model: m\n    port: 3\n    gpus:\n      -0\n      -1\n", HOST_SCHEMA, [
        "hosts/h.yaml:14:7: error[S002]: 'services[0].gpus' must be a list, got str '-0 -1' (write '- 0': a list "
        "item needs a space after its '-')"]),
    # a typo keeps its did-you-mean
    (MODEL + "parsers: {tool_cal: glm}\n", MODEL_SCHEMA, [
        "models/m.yaml:3:11: error[S001]: unknown key 'parsers.tool_cal' (did you mean 'tool_call'?)"]),
]


@pytest.mark.parametrize(("text", "schema", "expected"), SCHEMA_CASES)
def test_what_yaml_read_from_a_mistake_is_worded_by_the_schema(text: str, schema: dict, expected: list[str]) -> None:
    diags = Diagnostics()
    doc = load_text(text, "hosts/h.yaml" if schema is HOST_SCHEMA else "models/m.yaml", diags)
    assert doc is not None
    check_strings(doc, diags)
    validate(doc, schema, diags)
    assert [str(d) for d in diags.sorted()] == expected


def test_gen_check_prints_the_worded_error_an_operator_reads(repo_copy: Path) -> None:
    """Through the command line: the line on stderr, the count, exit 1, nothing written."""
    model = repo_copy / "models/qwen3.5-122b-a10b.yaml"
    model.write_text(model.read_text().replace("  num_steps: 3\n", " num_steps: 3\n"))
    result = CliRunner().invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1
    fix = "indent it 2 spaces, like 'algorithm' (line 19), to stay under 'speculative'; or 0 spaces to be a key " \
          "beside 'speculative' (line 16)"
    assert result.stderr.splitlines() == [
        "models/qwen3.5-122b-a10b.yaml:20:2: error[Y021]: 'num_steps' is indented 1 space: a one-space dedent; "
        "above it, 'algorithm' (line 19) starts at 2 spaces, 'speculative' (line 16) at 0" + SAYS
        + f'"did not find expected key" ({fix})',
        "gen: 1 error(s), 0 warning(s)"]
    doc = CliRunner().invoke(main, ["check", "--root", str(repo_copy), "--format", "json"])
    (diag,) = json.loads(doc.stdout)["diagnostics"]
    assert (diag["code"], diag["line"], diag["column"], diag["fix"]) == ("Y021", 20, 2, fix)
