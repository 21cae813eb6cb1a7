"""JSON from outside gen never crashes it (generator/load/json_text.py, catalog shapes).

Found by the fresh attack of this round: Python's decoder raises RecursionError, not a
JSONDecodeError, past about 1,000 levels of nesting, so 3,000 ``[`` in a manifest's
``--cuda-graph-config`` (or an env value SGLang decodes as JSON, or a catalog JSON) ended
``gen check`` with an internal error (exit 4); a catalog whose ``sglang`` was a number did too.
Each is now a finding or an error naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli.main import main
from generator.load import json_text

DEEP = "[" * 3000 + "]" * 3000


def _gen(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _pin(repo: Path, pin: str) -> Path:
    host = repo / "hosts" / "llm-two.yaml"
    text = host.read_text()
    assert 'pin: "0.5.9"' in text
    host.write_text(text.replace('pin: "0.5.9"', f'pin: "{pin}"'))
    return repo / "models" / "qwen3.5-122b-a10b.yaml"


def test_nesting_too_deep_is_a_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="nested deeper"):
        json_text.loads(DEEP)
    with pytest.raises(ValueError):
        json_text.loads(DEEP.encode())
    assert json_text.loads("[[1]]") == [[1]]


def test_a_flag_value_nested_too_deep_is_a_finding(repo_copy: Path) -> None:
    model = _pin(repo_copy, "0.5.23")
    text = model.read_text()
    assert text.endswith("args:\n  --attention-backend: triton\n")  # the example's own args: (G015)
    model.write_text(text + f'  --cuda-graph-config: "{DEEP}"\n')
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code == 1, result.output
    assert "error[F004]" in result.stderr and "nested deeper" in result.stderr, result.stderr


def test_an_env_value_sglang_decodes_nested_too_deep_is_no_crash(repo_copy: Path) -> None:
    model = _pin(repo_copy, "0.5.23")
    model.write_text(model.read_text() + f'env:\n  SGLANG_HUMMING_INPUT_QUANT_CONFIG: "{DEEP}"\n')
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code in (0, 1), result.output
    assert "internal error" not in result.output


@pytest.mark.parametrize("doc", [
    '{"format": 1, "actions": [], "sglang": 3}',
    '{"format": 1, "actions": [], "sglang": {}, "parser": 7}',
    '{"format": 1, "actions": 5, "sglang": {}}',
    '{"format": 1, "actions": ["x"], "sglang": {}}',
    '{"format": 1, "actions": [{"option_strings": "--tp", "canonical": "--tp", "dest": "tp", "kind": "store"}], "sglang": {}}',
    '{"format": 1, "actions": [{"option_strings": ["--tp"], "canonical": "--x", "dest": "tp", "kind": "store"}], "sglang": {}}',
    '{"format": 1, "actions": [{"option_strings": ["--tp"], "canonical": "--tp", "dest": 1, "kind": "store"}], "sglang": {}}',
    '{"format": 1, "actions": [{"option_strings": ["--tp"], "canonical": "--tp", "dest": "tp", "kind": "store", '
    '"nargs": "many"}], "sglang": {}}',
    '{"format": 1, "actions": [{"option_strings": ["--tp"], "canonical": "--tp", "dest": "tp", "kind": "store", '
    '"choices": "abc"}], "sglang": {}}',
    '{"format": 1, "a": ' + DEEP + "}",
])
def test_a_catalog_of_the_wrong_shape_is_an_error_naming_it(repo_copy: Path, doc: str) -> None:
    (repo_copy / "catalogs" / "sglang" / "0.5.9.json").write_text(doc)
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code in (1, 3), result.output
    assert "internal error" not in result.output
    assert "catalogs/sglang/0.5.9.json: " in result.stderr and "malformed SGLang catalog" in result.stderr \
        or "cannot read SGLang catalog" in result.stderr, result.stderr


@pytest.mark.parametrize("doc", [
    "x", "[]", '{"registry": {"fields": [{"name": 1, "type": "int", "class": "EnvInt"}]}, "adhoc": {"vars": []}}',
    '{"registry": {"fields": []}, "adhoc": {"vars": 5}}', '{"registry": 3}', "[" * 3000,
])
def test_an_env_catalog_of_the_wrong_shape_is_an_error_naming_it(repo_copy: Path, doc: str) -> None:
    model = repo_copy / "models" / "qwen3.5-122b-a10b.yaml"
    model.write_text(model.read_text() + 'env:\n  SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD: "8"\n')
    (repo_copy / "catalogs" / "sglang" / "0.5.9.env.json").write_text(doc)
    result = _gen("check", "--root", str(repo_copy))
    assert result.exit_code in (1, 3), result.output
    assert "internal error" not in result.output
    assert "0.5.9.env.json: malformed env catalog" in result.stderr, result.stderr


@pytest.mark.parametrize("doc", ["x", "{}", '{"flags": {"--a": {"spans": 5, "deprecated": []}}, "versions": []}',
                                 '{"flags": {"--a": {"spans": [{"from": 1, "to": "0.4.0"}], "deprecated": []}}, '
                                 '"versions": []}'])
def test_a_flag_history_of_the_wrong_shape_is_an_error_naming_it(repo_copy: Path, doc: str) -> None:
    (repo_copy / "catalogs" / "sglang" / "history.json").write_text(doc)
    result = _gen("check", "--root", str(repo_copy), "--sglang", "0.4.0")
    assert result.exit_code in (1, 3), result.output
    assert "internal error" not in result.output
    assert "history.json: malformed flag history" in result.stderr, result.stderr
