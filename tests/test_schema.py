"""Unit tests for generator.load.schema: every cerberus error mapped to a position and a code."""

from __future__ import annotations

import pytest

from generator.errors import Diagnostics
from generator.load.manifests import load_text
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, check_strings, validate

MODEL_OK = """\
name: m
weights: {path: /shared/models/m, size_gb: 10}
"""


def _errors(text: str, schema: dict = MODEL_SCHEMA) -> list[str]:
    diags = Diagnostics()
    doc = load_text(text, "models/m.yaml", diags)
    assert doc is not None
    check_strings(doc, diags)
    validate(doc, schema, diags)
    return [str(d) for d in diags.sorted()]


def test_minimal_model_is_valid() -> None:
    assert _errors(MODEL_OK) == []


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("weigths: {}\n", "models/m.yaml:3:1: error[S001]: unknown key 'weigths' (did you mean 'weights'?)"),
        ("parallel: {tp: four}\n", "models/m.yaml:3:16: error[S002]: 'parallel.tp' must be an integer, got str 'four'"),
        ("parallel: {tp: 0}\n", "models/m.yaml:3:16: error[S005]: 'parallel.tp' must be at least 1, got 0"),
        ("parallel: {tensor_parallel: 4}\n",
         "models/m.yaml:3:12: error[S001]: unknown key 'parallel.tensor_parallel'"),
        ("speculative: {num_steps: 3}\n",
         "models/m.yaml:3:1: error[S003]: required key 'speculative.algorithm' is missing"),
        ("speculative: {algorithm: EAGLE3, draft_model_path: drafts/x}\n",
         "models/m.yaml:3:52: error[S006]: 'speculative.draft_model_path' must be an absolute path, got 'drafts/x'"),
        ("args: {num-speculative-tokens: 16}\n",
         "models/m.yaml:3:8: error[S009]: key 'num-speculative-tokens' at 'args' is not a flag: "
         "write SGLang flags in full, with the leading '--'"),
        ("args: {--x: null}\n", "models/m.yaml:3:13: error[S002]: 'args.--x' has no value: it is null (nothing "
         "after '--x:' and nothing indented below it, or null written) (write its value after '--x:', or remove "
         "the key)"),
        ("env: {FLAG: true}\n", "models/m.yaml:3:13: error[S002]: 'env.FLAG' must be a string or a number, "
         "not a boolean (quote it), got True"),
        ("env: {1X: a}\n", "models/m.yaml:3:7: error[S009]: key '1X' at 'env' is not a valid environment "
         "variable name ([A-Za-z_][A-Za-z0-9_]*)"),
        ("served_model_name: \"a\\nb\"\n", "models/m.yaml:3:20: error[S008]: 'served_model_name' contains the "
         "control or invisible character U+000A: 'a\\nb'"),
        ("description: \"nul\\0\"\n", "models/m.yaml:3:14: error[S008]: 'description' contains the "
         "control or invisible character U+0000: 'nul\\x00'"),
        ("weights: []\n", "models/m.yaml:3:1: error[Y002]: duplicate key 'weights' (first defined at line 2)"
         " (keep one of the two: gen never picks one for you)"),
    ],
)
def test_model_errors(extra: str, expected: str) -> None:
    assert _errors(MODEL_OK + extra) == [expected]


def test_bad_name_and_top_level_type() -> None:
    assert _errors("name: ../etc\nweights: {path: /m, size_gb: 1}\n") == [
        "models/m.yaml:1:7: error[S007]: 'name' is not a valid name: use [A-Za-z0-9_.-], starting "
        "with a letter or digit, not ending in '.' or '-', no '..', got '../etc'"
    ]
    assert _errors("- a\n- b\n") == ["models/m.yaml:1:1: error[S002]: expected a mapping at the top, got a list"]


def test_all_errors_of_a_file_are_reported_in_position_order() -> None:
    text = "name: m\nweights: {path: rel, size_gb: x}\nparallel: {tpp: 2}\n"
    assert _errors(text) == [
        "models/m.yaml:2:17: error[S006]: 'weights.path' must be an absolute path, got 'rel'",
        "models/m.yaml:2:31: error[S002]: 'weights.size_gb' must be a number, got str 'x'",
        "models/m.yaml:3:12: error[S001]: unknown key 'parallel.tpp' (did you mean 'tp'?)",
    ]


HOST_OK = """\
name: h
address: h.lan
gpus:
  - {index: 0, pci_bus_id: "00000000:01:00.0", memory_gb: 96, numa_node: 0}
numa:
  - {node: 0, cpus: "0-7"}
storage: {model_root: /models}
sglang: {pin: "0.5.9", python: /opt/sglang/bin/python}
"""


def test_minimal_host_is_valid() -> None:
    assert _errors(HOST_OK, HOST_SCHEMA) == []


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("services:\n  - {name: q, model: m}\n",
         "models/m.yaml:10:5: error[S003]: required key 'services[0].port' is missing"),
        ("services:\n  - {name: 'a b', model: m, port: 1}\n",
         "models/m.yaml:10:12: error[S007]: 'services[0].name' is not a valid name: use "
         "[A-Za-z0-9_.-], starting with a letter or digit, not ending in '.' or '-', no '..', got 'a b'"),
        ("vm_passthrough: [{vm: v, gpus: []}]\n",
         "models/m.yaml:9:32: error[S005]: 'vm_passthrough[0].gpus' must have at least 1 item(s)"),
    ],
)
def test_host_errors(extra: str, expected: str) -> None:
    assert _errors(HOST_OK + extra, HOST_SCHEMA) == [expected]


def test_misspelt_required_key_reports_both_sides() -> None:
    assert _errors(HOST_OK + "services:\n  - {name: q, model: m, prot: 1}\n", HOST_SCHEMA) == [
        "models/m.yaml:10:5: error[S003]: required key 'services[0].port' is missing",
        "models/m.yaml:10:25: error[S001]: unknown key 'services[0].prot' (did you mean 'port'?)",
    ]


def test_host_value_patterns() -> None:
    text = HOST_OK.replace('"00000000:01:00.0"', "'1:0'").replace('"0-7"', "'0-7,a'").replace('"0.5.9"', "main")
    assert _errors(text, HOST_SCHEMA) == [
        "models/m.yaml:4:28: error[S009]: value '1:0' at 'gpus[0].pci_bus_id' is not a PCI bus id "
        "like '00000000:01:00.0' (as nvidia-smi prints it)",
        "models/m.yaml:6:21: error[S009]: value '0-7,a' at 'numa[0].cpus' is not a CPU list like '0-31,64-95'",
        "models/m.yaml:8:15: error[S009]: value 'main' at 'sglang.pin' is not an SGLang pin: "
        "a release like '0.5.9' or 'git-<40 hex digits>'",
    ]


@pytest.mark.parametrize("char", ["\ufdd0", "\ufdef", "\U0001fffe", "\U0010ffff"])  # YAML refuses U+FFFE itself
def test_unicode_noncharacters_are_refused(char: str) -> None:
    """systemd ignores a unit line holding a noncharacter (found by test_systemd's property)."""
    [value] = _errors(MODEL_OK + f'served_model_name: "a{char}b"\n')
    assert value.startswith("models/m.yaml:3:20: error[S008]: 'served_model_name' contains the ")
    assert f"U+{ord(char):04X}" in value
    keys = _errors(MODEL_OK + f'env: {{"A{char}": x}}\n')  # the env name pattern (S009) too
    assert any(k.startswith("models/m.yaml:3:7: error[S008]: key 'A") for k in keys), keys


# Both directions of each bound: a mutant moving the upper bound of a port (65535, the last
# TCP port) or accepting a one-host multinode is caught here, not only by the generated docs.
@pytest.mark.parametrize(("text", "schema", "key"), [
    (HOST_OK + "services:\n  - {name: q, model: m, port: @}\n", HOST_SCHEMA, "services[0].port"),
    (HOST_OK + "ssh: {port: @}\n", HOST_SCHEMA, "ssh.port"),
    (MODEL_OK + "multinode: {hosts: [a, b], port: @}\n", MODEL_SCHEMA, "multinode.port"),
], ids=["service", "ssh", "multinode"])
def test_port_bounds_are_1_and_65535(text: str, schema: dict, key: str) -> None:
    assert _errors(text.replace("@", "65535"), schema) == []
    assert _errors(text.replace("@", "1"), schema) == []
    [high] = _errors(text.replace("@", "65536"), schema)
    assert f"error[S005]: '{key}' must be at most 65535, got 65536" in high
    [low] = _errors(text.replace("@", "0"), schema)
    assert f"error[S005]: '{key}' must be at least 1, got 0" in low


def test_multinode_needs_two_hosts() -> None:
    assert _errors(MODEL_OK + "multinode: {hosts: [a, b], port: 5000}\n") == []
    assert _errors(MODEL_OK + "multinode: {hosts: [a], port: 5000}\n") == [
        "models/m.yaml:3:20: error[S005]: 'multinode.hosts' must have at least 2 item(s)"]
