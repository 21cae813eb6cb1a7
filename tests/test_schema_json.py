"""The JSON Schemas (``gen schema``): generated from cerberus, valid draft 2020-12, committed current,
accepting every committed manifest and refusing the bad fixtures that are schema errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from generator.cli.main import main
from generator.cli.schema_pins import schema_file_text
from generator.load.schema_json import SCHEMA_FILES, json_schema

ROOT = Path(__file__).resolve().parent.parent
BAD = Path(__file__).parent / "fixtures" / "bad"
# The codes cerberus reports that the JSON Schema says too (_EXPECT below): S008 control
# characters, S010 systemd path syntax, S011 NaN/huge numbers and S012 addresses and CPU
# lists are gen's own checks; placement, flags and rules are not schema.


def _load(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def _validator(kind: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_file_text(kind, ROOT))  # as committed: with the pins' completions
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_committed_schema_is_current_and_valid_2020_12(kind: str) -> None:
    committed = (ROOT / SCHEMA_FILES[kind]).read_text(encoding="utf-8")
    assert committed == schema_file_text(kind, ROOT), "run `gen schema --write`"
    schema = json.loads(committed)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_gen_schema_prints_the_committed_file(kind: str) -> None:
    result = CliRunner().invoke(main, ["schema", kind])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (ROOT / SCHEMA_FILES[kind]).read_text(encoding="utf-8")


def _every_property(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            out.append((f"{path}.{key}", sub))
            out += _every_property(sub, f"{path}.{key}")
        if isinstance(node.get("items"), dict):
            out += _every_property(node["items"], path)
    return out


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_every_key_has_a_description(kind: str) -> None:
    props = _every_property(json_schema(kind))
    assert len(props) >= {"model": 30, "host": 30, "rollout": 4}[kind]
    assert [p for p, sub in props if not sub.get("description")] == []


@pytest.mark.parametrize("path", sorted((ROOT / "models").glob("*.yaml")) + sorted((ROOT / "hosts").glob("*.yaml"))
                         + [ROOT / "rollout.yaml"], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_manifests_validate(path: Path) -> None:
    kind = "rollout" if path.name == "rollout.yaml" else "model" if path.parent.name == "models" else "host"
    errors = [e.message for e in _validator(kind).iter_errors(_load(path))]
    assert errors == []


def _schema_error_fixtures() -> list[Path]:
    return sorted(p for p in BAD.rglob("*.yaml") if p.parent.name in ("models", "hosts") and _expected(p))


def test_there_are_schema_error_fixtures() -> None:
    assert len(_schema_error_fixtures()) >= 4


def _dotted(path: Any) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


_EXPECT = re.compile(r"# expect: ([^:]+):\d+:\d+: error\[(S00[1234567])\]: (?:unknown key |required key )?'([^']+)'")


def _expected(path: Path) -> list[tuple[str, str]]:
    """(code, dotted key) of the schema diagnostics expected in this very file."""
    rel = f"{path.parent.name}/{path.name}"
    return [(code, where) for file, code, where in _EXPECT.findall(path.read_text(errors="replace"))
            if file == rel]


@pytest.mark.parametrize("path", _schema_error_fixtures(), ids=lambda p: str(p.relative_to(BAD)))
def test_bad_fixtures_with_schema_errors_fail_the_json_schema(path: Path) -> None:
    """Every schema diagnostic gen expects in the file has a JSON Schema error at its key."""
    kind = "model" if path.parent.name == "models" else "host"
    errors = list(_validator(kind).iter_errors(_load(path)))
    assert errors, f"{path} passes the JSON Schema but gen reports schema errors"
    at: dict[str, str] = {}
    for e in errors:
        at[_dotted(e.absolute_path)] = at.get(_dotted(e.absolute_path), "") + e.message
    expected = _expected(path)
    for code, where in expected:
        parent, _, key = where.rpartition(".")
        found = where in at or (code in ("S001", "S003") and key in at.get(parent, ""))
        assert found, (code, where, at)


def test_a_mistyped_key_fails_where_cerberus_fails(tmp_path: Path) -> None:
    data = _load(ROOT / "models/qwen3.5-122b-a10b.yaml")
    data["parallel"]["tpp"] = 4
    data["weights"]["size_gb"] = "234 GB"
    messages = sorted(e.message for e in _validator("model").iter_errors(data))
    assert any("'tpp' was unexpected" in m for m in messages), messages
    assert any("'234 GB' is not of type 'number'" in m for m in messages), messages


def test_gen_check_fails_on_a_stale_schema(repo_copy: Path) -> None:
    for path in (*SCHEMA_FILES.values(), "docs/manifests.md", "docs/rules.md", "docs/tables.md"):
        (repo_copy / path).parent.mkdir(parents=True, exist_ok=True)
        (repo_copy / path).write_text((ROOT / path).read_text(encoding="utf-8"), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(main, ["check", "--root", str(repo_copy)]).exit_code == 0
    stale = repo_copy / SCHEMA_FILES["host"]
    stale.write_text(stale.read_text().replace("The ssh port.", "The port."), encoding="utf-8")
    result = runner.invoke(main, ["check", "--root", str(repo_copy)])
    assert result.exit_code == 1, result.stderr
    assert "schemas/host.schema.json: error[D001]: schemas/host.schema.json is not current " \
           "(run `gen schema --write`)" in result.stderr
    result = runner.invoke(main, ["schema", "--write", "--root", str(repo_copy)])
    assert result.exit_code == 0 and "wrote     schemas/host.schema.json" in result.stdout
    assert runner.invoke(main, ["check", "--root", str(repo_copy)]).exit_code == 0


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_defaults_and_examples_are_valid_values_of_their_keys(kind: str) -> None:
    props = _every_property(json_schema(kind))
    checked = 0
    for path, sub in props:
        for value in ([sub["default"]] if "default" in sub else []) + sub.get("examples", []):
            errors = [e.message for e in jsonschema.Draft202012Validator(sub).iter_errors(value)]
            assert errors == [], (path, value)
            checked += 1
    assert checked >= {"model": 30, "host": 30, "rollout": 7}[kind]


def test_readme_editor_mapping_names_the_committed_schemas() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Editor schema", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    mapping = json.loads(block)["yaml.schemas"]
    assert mapping == {"./schemas/model.schema.json": "models/*.yaml", "./schemas/host.schema.json": "hosts/*.yaml",
                       "./schemas/rollout.schema.json": "rollout.yaml"}
    for schema, glob in mapping.items():
        assert (ROOT / schema).is_file() and list(ROOT.glob(glob))


def test_every_cerberus_rule_has_a_translation() -> None:
    from generator.load import schema_json

    for kind in SCHEMA_FILES:
        json_schema(kind)
    assert schema_json.UNTRANSLATED == set()
    assert set(schema_json._CHECK_WITH) >= _check_with_names(), "teach _CHECK_WITH the new check_with rule"


def _check_with_names() -> set[str]:
    from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA

    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("check_with"), str):
                found.add(node["check_with"])
            for value in node.values():
                walk(value)

    walk(MODEL_SCHEMA)
    walk(HOST_SCHEMA)
    return found
