"""The editor schemas complete what the committed SGLang pins accept (generator/cli/schema_pins.py):
parser names, speculative algorithms, every flag choice a manifest key sets, and the flags of
``args:``; still never stricter than ``gen check``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from generator.cli.main import main
from generator.cli.schema_pins import committed_catalogs, schema_file_text
from generator.load.schema_docs import DOCS
from generator.sglang.catalog import known_pins

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "qwen3.5-122b-a10b.yaml"


def _schema(kind: str) -> dict[str, Any]:
    return json.loads((ROOT / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def _model_doc(**changes: Any) -> dict[str, Any]:
    from ruamel.yaml import YAML

    doc = YAML(typ="safe", pure=True).load(MODEL.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        node = doc
        *parents, last = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return doc


def _errors(kind: str, doc: dict[str, Any]) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(_schema(kind)).iter_errors(doc)]


def test_the_example_repository_commits_two_pins() -> None:
    assert known_pins(ROOT) == ["0.5.9", "0.5.23"]  # what the texts below name


@pytest.mark.parametrize("key,dest", [("reasoning", "reasoning_parser"), ("tool_call", "tool_call_parser")])
def test_parsers_list_every_choice_of_every_pin_with_its_pins(key: str, dest: str) -> None:
    options = _schema("model")["properties"]["parsers"]["properties"][key]["anyOf"]
    listed = {o["const"]: o["description"] for o in options}
    by_pin = {c.pin: set(c.by_dest(dest).choices or ()) for c in committed_catalogs(ROOT)}
    assert set(listed) == by_pin["0.5.9"] | by_pin["0.5.23"]
    both = next(iter(by_pin["0.5.9"] & by_pin["0.5.23"]))
    assert listed[both] == "accepted by SGLang 0.5.9, 0.5.23 (every committed pin)"
    newer = sorted(by_pin["0.5.23"] - by_pin["0.5.9"])
    assert newer and all(listed[v] == "accepted by SGLang 0.5.23" for v in newer)
    assert not any("type" in o for o in options)  # a closed list on every pin


def test_speculative_algorithms_of_both_pins_and_the_open_registry_of_0_5_23() -> None:
    options = _schema("model")["properties"]["speculative"]["properties"]["algorithm"]["anyOf"]
    listed = {o["const"]: o["description"] for o in options if "const" in o}
    assert listed["EAGLE3"] == "accepted by SGLang 0.5.9, 0.5.23 (every committed pin)"
    assert listed["DFLASH"] == "accepted by SGLang 0.5.23"  # from its help: "Builtins: EAGLE, ..."
    assert [o for o in options if "const" not in o] == [
        {"type": "string", "description": "SGLang 0.5.23: also any name registered with SGLang (its help says so)"}]


def test_a_parser_no_pin_accepts_is_refused_by_the_schema_and_by_gen_check() -> None:
    assert _errors("model", _model_doc()) == []
    assert _errors("model", _model_doc(parsers__tool_call="qwen25")) == []  # a value SGLang renames (X160)
    assert _errors("model", _model_doc(parsers__tool_call="qwen3-coder")) != []  # gen check: F003


def test_every_value_any_pin_accepts_validates() -> None:
    """Never stricter than gen check: each choice of each flag a manifest key sets, on each pin."""
    catalogs = committed_catalogs(ROOT)
    checked = 0
    for path, doc in DOCS.items():
        if not path.startswith("model.") or not doc.flag or path.count(".") > 2:
            continue
        *parents, last = path.split(".")[1:]
        for catalog in catalogs:
            action = catalog.by_dest(doc.flag)
            for value in (action.choices or ()) if action is not None else ():
                if isinstance(value, str):
                    key = "__".join([*parents, last])
                    assert _errors("model", _model_doc(**{key: value})) == [], (path, catalog.pin, value)
                    checked += 1
    assert checked > 60


@pytest.mark.parametrize("kind", ["model", "host"])
def test_args_complete_the_flags_of_the_pins_but_not_those_a_key_sets_or_secrets(kind: str) -> None:
    schema = _schema(kind)
    args = schema["properties"]["args"] if kind == "model" else \
        schema["properties"]["services"]["items"]["properties"]["args"]
    flags = args["properties"]
    assert flags["--chunked-prefill-size"]["$ref"] == "#/$defs/arg_value"
    assert flags["--chunked-prefill-size"]["description"].endswith("(SGLang 0.5.9, 0.5.23 (every committed pin))")
    assert "chunked prefill" in flags["--chunked-prefill-size"]["description"].lower()
    assert "--model-path" not in flags and "--tool-call-parser" not in flags and "--port" not in flags  # keys
    assert "--api-key" not in flags  # a secret (K001): secret_args
    assert len(flags) > 400
    assert args["additionalProperties"]  # a flag of a pin not committed is still gen check's to judge


def test_a_repository_without_catalogs_gets_the_plain_schema(tmp_path: Path) -> None:
    text = schema_file_text("model", tmp_path)
    assert "anyOf" not in text and "$defs" not in text


def test_gen_schema_prints_the_completions_of_the_root(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schema", "model", "--root", str(ROOT)])
    assert result.exit_code == 0 and result.stdout == (ROOT / "schemas" / "model.schema.json").read_text()
    plain = CliRunner().invoke(main, ["schema", "model", "--root", str(tmp_path)])
    assert plain.exit_code == 0 and "anyOf" not in plain.stdout and "accepted by" not in plain.stdout


def test_an_edited_catalog_leaves_the_schemas_to_wait_for_its_recapture(tmp_path: Path) -> None:
    """gen check reports the edit (C016) alone, not the schemas built from the edited text too."""
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(ROOT / "catalogs", root / "catalogs")
    path = root / "catalogs" / "sglang" / "0.5.9.json"
    path.write_text(path.read_text().replace('"The tensor parallelism size."', '"The tensor parallelism size!"', 1))
    assert committed_catalogs(root) is None and schema_file_text("model", root) is None
    result = CliRunner().invoke(main, ["schema", "model", "--root", str(root)])
    assert result.exit_code == 1 and "edited after its capture" in result.stderr
