"""Nothing from the repository is ever a template to Ansible (issue 22, item 1).

Structural: every string field of every schema gets a Jinja payload of the kind that ran
on the controller (``{{ lookup(dict(pipe=1)|first, dict(id=1)|first) }}``, a ``{% %}``
statement, a ``{# #}`` comment). A field whose own check refuses the payload cannot carry
it into ``ansible/``; every other field carries it at once through ``gen render`` and
``gen ansible``. Then ansible-core's own inventory loader, VariableManager and Templar
render every variable of the generated inventory, and every play's name, hosts and vars
of the generated playbook, and each must come out as itself.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible.vars.manager import VariableManager
from click.testing import CliRunner
from ruamel.yaml import YAML

from generator.cli.main import main
from generator.emit.ansible.yamltext import GenJinja, dump, key, scalar
from generator.errors import Diagnostics
from generator.load import schema as schemas
from generator.load.manifests import load_text
from generator.load.schema import validate

PAYLOADS = {
    "lookup": "{{ lookup(dict(pipe=1)|first, dict(id=1)|first) }}",
    "statement": "{% for x in [1] %}{{ x }}{% endfor %}",
    "comment": "{# gone #}kept",
}
PATH_RULES = ("abs_path", "unit_path")
# Fields a dict of strings holds (args, env): one entry of a name the field accepts.
DICT_KEYS = {"args": "--chat-template", "env": "GEN_TEST_PAYLOAD"}
Field = tuple[str, tuple[Any, ...], dict[str, Any]]  # kind, path (0: first item, "*": a dict entry), rules


def _types(rules: dict[str, Any]) -> list[str]:
    kind = rules.get("type")
    return kind if isinstance(kind, list) else [kind]


def string_fields(node: dict[str, Any], kind: str, path: tuple[Any, ...] = ()) -> Iterator[Field]:
    """Every string leaf of a cerberus schema: its path and its rules."""
    for name, rules in node.items():
        here, inner = path + (name,), rules.get("schema")
        if "dict" in _types(rules) and isinstance(inner, dict) and "type" not in inner:
            yield from string_fields(inner, kind, here)
        elif "list" in _types(rules) and isinstance(inner, dict) and inner.get("type") == "dict":
            yield from string_fields(inner["schema"], kind, here + (0,))
        elif "list" in _types(rules) and isinstance(inner, dict) and "string" in _types(inner):
            yield kind, here + (0,), inner
        elif "dict" in _types(rules) and "valuesrules" in rules:
            yield kind, here + ("*",), rules["valuesrules"]
        elif "string" in _types(rules):
            yield kind, here, rules


SCHEMAS = {"model": schemas.MODEL_SCHEMA, "host": schemas.HOST_SCHEMA, "rollout": schemas.ROLLOUT_SCHEMA}
FIELDS = [f for kind, schema in SCHEMAS.items() for f in string_fields(schema, kind)]


def payload_for(field: Field, number: int, payload: str, original: Any) -> str:
    """The payload in the shape the field takes, numbered: below the original path for a path field."""
    text = f"{payload}-f{number}"
    if field[2].get("check_with") not in PATH_RULES:
        return text
    return f"{original}/{text}" if isinstance(original, str) and original.startswith("/") else f"/opt/{text}/x"


def current(doc: Any, field: Field) -> Any:
    """The value at FIELD's path in DOC now (None when absent)."""
    node = doc
    for step in field[1]:
        if step == "*":
            return None
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def place(doc: Any, field: Field, value: str) -> bool:
    """Write VALUE at FIELD's path in DOC; False when DOC has no such place.

    A dict field (args, env), a list of strings (shared_with) or a list of mappings (ack)
    the document lacks is created when the mapping that would hold it exists.
    """
    *steps, last = field[1]
    node = doc
    for i, step in enumerate(steps):
        if isinstance(step, int):
            if not isinstance(node, list) or len(node) <= step:
                return False
            node = node[step]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, dict) and i == len(steps) - 1 and last in ("*", 0):
            node[step] = {} if last == "*" else [None]
            node = node[step]
        elif isinstance(node, dict) and steps[i + 1:] == [0] and isinstance(last, str) and last != "*":
            node[step] = [{}]  # a list of mappings the document lacks (ack:): one entry, created
            node = node[step]
        else:
            return False
    if last == "*" and isinstance(node, dict):
        node[DICT_KEYS[steps[-1]]] = value
    elif last == 0 and isinstance(node, list) and node and (node[0] is None or isinstance(node[0], str)):
        node[0] = value
    elif isinstance(last, str) and last != "*" and isinstance(node, dict):
        node[last] = value
    else:
        return False
    return True


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.preserve_quotes = True  # "00000000:01:00.0" in a flow mapping stays a string
    return yaml


def _dump(doc: Any) -> str:
    import io

    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


def schema_accepts(text: str, kind: str) -> bool:
    """The document's own schema checks accept TEXT (gen's load: types, paths, names, patterns)."""
    diags = Diagnostics()
    doc = load_text(text, f"{kind}.yaml", diags)
    return doc is not None and validate(doc, SCHEMAS[kind], diags) and not diags.has_errors


def _gen(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _files(repo: Path, kind: str) -> list[Path]:
    if kind == "rollout":
        return [repo / "rollout.yaml"]
    return sorted((repo / ("models" if kind == "model" else "hosts")).glob("*.yaml"))


def carry(repo: Path, payload: str) -> dict[str, str]:
    """Put PAYLOAD into every field whose own check takes it; render and write ansible/.

    Returns field label -> the value carried. A field a later check refuses (a dtype SGLang
    does not know, say) gets its original value back, and the rest are tried again.
    """
    originals = {p: p.read_text() for kind in SCHEMAS for p in _files(repo, kind)}
    candidates: list[tuple[Path, str, Field, str]] = []
    for number, field in enumerate(FIELDS):
        kind, path, _ = field
        label = f"{kind}:{'.'.join(map(str, path))}"
        for file in _files(repo, kind):
            doc = _yaml().load(originals[file])
            value = payload_for(field, number, payload, current(doc, field))
            if place(doc, field, value) and schema_accepts(_dump(doc), kind):
                candidates.append((file, label, field, value))
    refused: set[tuple[Path, str]] = set()
    for _ in range(len(candidates) + 1):
        texts = dict(originals)
        active = [c for c in candidates if (c[0], c[1]) not in refused]
        for file, _, field, value in active:
            doc = _yaml().load(texts[file])
            place(doc, field, value)
            texts[file] = _dump(doc)
        for file, text in texts.items():
            file.write_text(text)
        rendered = _gen("render", "--all", "--root", str(repo))
        if rendered.exit_code == 0:
            written = _gen("ansible", "--root", str(repo))
            assert written.exit_code == 0, written.stderr
            return {label: value for _, label, _, value in active}
        # Each payload a later check refused (at the line it stands on, or named in the
        # message: a model root refused at the model's path) goes back out.
        errors = [ln for ln in rendered.stderr.splitlines() if ": error[" in ln]
        lines = {tuple(ln.split(":")[:2]) for ln in errors}
        before = len(refused)
        for file, label, _, value in active:
            rel = str(file.relative_to(repo))
            if any((rel, str(i + 1)) in lines for i, ln in enumerate(texts[file].splitlines()) if value in ln) \
                    or any(value in ln for ln in errors):
                refused.add((file, label))
        assert len(refused) > before, rendered.stderr
    raise AssertionError("payloads never settled")


def _templated_to_itself(templar: Templar, value: Any) -> bool:
    return templar.template(value) == value


@pytest.fixture
def repo(repo_copy: Path) -> Path:
    """The example repo, rendered."""
    assert _gen("render", "--all", "--root", str(repo_copy)).exit_code == 0
    return repo_copy


@pytest.fixture(autouse=True)
def _private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_RENDER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ANSIBLE_HOME", str(tmp_path / "ansible-home"))
    monkeypatch.setenv("ANSIBLE_LOCAL_TEMP", str(tmp_path / "ansible-home" / "tmp"))


def _inventory_vars(inventory: Path) -> dict[str, dict[str, Any]]:
    """host -> the variables the inventory gives it, as ansible-core loads them."""
    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[str(inventory)])
    variables = VariableManager(loader=loader, inventory=manager)
    out = {}
    for host in manager.get_hosts():
        merged = variables.get_vars(host=host, include_hostvars=False)
        own = set(host.get_vars()) | {k for g in host.get_groups() for k in g.get_vars()}
        out[host.name] = {name: merged[name] for name in own if not name.startswith("inventory_")} \
            | {"__all__": merged}
    return out


@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_every_variable_gen_writes_renders_to_itself(repo_copy: Path, payload: str) -> None:
    carried = carry(repo_copy, PAYLOADS[payload])
    inventory = repo_copy / "ansible" / "inventory.yml"
    text = inventory.read_text()
    # Not vacuous: the path check lets the payload through sglang.python (the case),
    # and it reaches the inventory as gen_python.
    assert "host:sglang.python" in carried, sorted(carried)
    assert json.dumps(carried["host:sglang.python"]) in text
    checked = 0
    for host, own in _inventory_vars(inventory).items():
        everything = own.pop("__all__")
        templar = Templar(loader=DataLoader(), variables=everything)
        for name, value in own.items():
            if name == "gen_output_dir":  # gen's own Jinja: the inventory's folder joined with data
                assert templar.template(value) == f"{inventory.parent}/{everything['gen_output_rel']}"
                continue
            assert _templated_to_itself(templar, value), (host, name, value)
            checked += 1
    assert checked > 20
    # As ansible-playbook loads a playbook: its strings are trusted templates unless tagged.
    plays = DataLoader().load_from_file(str(repo_copy / "ansible" / "site.yml"), trusted_as_template=True)
    templar = Templar(loader=DataLoader(), variables={})
    for play in plays:
        for part in ("name", "hosts"):
            assert _templated_to_itself(templar, play[part]), play[part]
        for name, value in (play.get("vars") or {}).items():
            assert _templated_to_itself(templar, value), (play["name"], name)


def test_every_schema_string_field_is_covered(repo_copy: Path) -> None:
    """Each string field either takes the payload somewhere in the example repo, or its check refuses it."""
    texts = {kind: [p.read_text() for p in _files(repo_copy, kind)] for kind in SCHEMAS}
    for number, field in enumerate(FIELDS):
        kind = field[0]
        homes = 0
        for text in texts[kind]:
            doc = _yaml().load(text)
            if place(doc, field, payload_for(field, number, PAYLOADS["lookup"], current(doc, field))):
                homes += 1
        assert homes, f"no example document has a place for {field[:2]}: extend the example repo"


def test_writer_tags_every_string_and_only_gen_jinja_is_left_plain() -> None:
    assert scalar("/opt/{{ x }}") == '!unsafe "/opt/{{ x }}"'
    assert scalar(GenJinja("{{ inventory_dir }}")) == '"{{ inventory_dir }}"'
    assert (scalar(3), scalar(True), scalar(None)) == ("3", "true", "null")
    with pytest.raises(TypeError):
        scalar(object())
    assert key("gpu-a") == "gpu-a" and key("yes") == '"yes"' and key("a b") == '"a b"'
    with pytest.raises(ValueError, match="template syntax"):
        key("{{ x }}")
    data = {"a": ["x", {"b": "y{% z %}", "c": []}, [1, 2]], "d": {}, "e": None, "f": "line\nbreak\u2028"}
    assert DataLoader().load(dump(data)) == data


@pytest.mark.parametrize("text", ["0644", "", "22", "yes", "y", "No", "1.5", "~", "null", "<<", "=", "1:20",
                                  "2001-12-14", ".inf", "0x1F", "gpu-a", "{{ x }}", "a: b", "- x", "#c", "'q'",
                                  '"dq"', "back\\slash", "tab\t", "\u00e9", "\u2028", "{%raw%}", "x #}"])
def test_every_string_reads_back_as_the_same_string_in_ansible(text: str) -> None:
    """ansible-core's loader gets back the very string, of type str, and its Templar leaves it alone."""
    loaded = DataLoader().load(dump({"k": text, "l": [text]}))
    assert loaded == {"k": text, "l": [text]} and isinstance(loaded["k"], str), loaded
    assert Templar(loader=DataLoader(), variables={}).template(loaded["k"]) == text


def test_script_tasks_quote_the_interpreter_for_the_remote_shell(repo: Path) -> None:
    """ansible's script module joins ``executable`` into a shell line: the path must be one word."""
    assert _gen("ansible", "--root", str(repo)).exit_code == 0
    tasks = DataLoader().load_from_file(str(repo / "ansible" / "rollout.yml"), trusted_as_template=True)
    python = "/opt/a b;touch /tmp/gen-pwned;/python"
    templar = Templar(loader=DataLoader(), variables={"gen_python": python})
    executables = [t["ansible.builtin.script"]["executable"] for t in tasks if "ansible.builtin.script" in t]
    assert executables
    for expression in executables:
        assert shlex.split(templar.template(expression)) == [python], expression
