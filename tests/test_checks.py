"""Unit tests for generator.load.checks and the bounds of load/schema.py: paths, addresses,
CPU lists, a min and max on every number, and validation cost linear in the errors."""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

from generator.errors import Diagnostics
from generator.load.checks import MAX_CPU, cpu_list_problem, ip_problem, path_problem
from generator.load.manifests import load_text
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, ROLLOUT_SCHEMA, validate


@pytest.mark.parametrize(("path", "fix"), [
    ("/shared/models/../../data/X", "/data/X"), ("/a/./b", "/a/b"), ("//a", "/a"), ("/a//b", "/a/b"),
    ("/a/b/", "/a/b"), ("/a/.", "/a"), ("/..", "/"), ("/a/b/..", "/a"),
])
def test_paths_that_are_not_normalized_are_refused_with_the_fix(path: str, fix: str) -> None:
    problem = path_problem(path)
    assert problem is not None and repr(fix) in problem
    assert ("'..'" in problem) == (".." in path.split("/"))


@pytest.mark.parametrize("path", ["/", "/a", "/shared/models/Qwen3.5-122B", "/a/..b/c", "/a/b..", "/.hidden/x"])
def test_normalized_paths_pass(path: str) -> None:
    assert path_problem(path) is None


@pytest.mark.parametrize("value", ["10.1.2.300", "localhost", "127.0.0.1:80", "[::1]", " 127.0.0.1", "1.2.3", "::g"])
def test_listen_must_be_an_ip_address(value: str) -> None:
    assert ip_problem(value) is not None


@pytest.mark.parametrize("value", ["127.0.0.1", "0.0.0.0", "::", "::1", "fe80::1", "192.168.1.5"])
def test_ip_addresses_pass(value: str) -> None:
    assert ip_problem(value) is None


@pytest.mark.parametrize(("cpus", "problem"), [
    ("31-0", "has the reversed range '31-0': write '0-31'"),
    ("0-3,9-8", "has the reversed range '9-8': write '8-9'"),
    (f"0-{MAX_CPU + 1}", f"names CPU {MAX_CPU + 1}; Linux numbers CPUs 0 to {MAX_CPU}"),
    ("99999999999999999999", f"names CPU 99999999999999999999; Linux numbers CPUs 0 to {MAX_CPU}"),
])
def test_cpu_lists_systemd_would_drop_are_refused(cpus: str, problem: str) -> None:
    assert cpu_list_problem(cpus) == problem


def test_good_cpu_lists_pass() -> None:
    assert cpu_list_problem("0-31,64-95") is None and cpu_list_problem(f"{MAX_CPU}") is None


def _numeric_rules(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for key, rule in schema.items():
        if not isinstance(rule, dict):
            continue
        where = f"{path}.{key}" if path else key
        types = rule.get("type")
        types = types if isinstance(types, list) else [types]
        if {"integer", "number", "float"} & set(types):
            yield where, rule
        for sub in ("schema", "valuesrules"):
            inner = rule.get(sub)
            if isinstance(inner, dict) and "type" in inner:
                yield from _numeric_rules({"[]": inner}, where)
            elif isinstance(inner, dict):
                yield from _numeric_rules(inner, where)


# Free-form values (flags and variables for SGLang) take any number; they are bounded by the
# whole-document walk instead: finite, within 64 bits (test_values.py).
FREE_FORM = {"args.[]", "args.[].[]", "env.[]", "services.[].args.[]", "services.[].args.[].[]", "services.[].env.[]"}


def test_every_number_in_the_schemas_has_a_min_and_a_max() -> None:
    found = dict(_numeric_rules(MODEL_SCHEMA)) | {f"host.{k}": v for k, v in _numeric_rules(HOST_SCHEMA)} \
        | {f"rollout.{k}": v for k, v in _numeric_rules(ROLLOUT_SCHEMA)}
    assert len(found) > 20
    unbounded = sorted(k for k, rule in found.items()
                       if not ("min" in rule and "max" in rule) and k.removeprefix("host.") not in FREE_FORM)
    assert unbounded == []


def test_validation_cost_is_linear_in_the_errors() -> None:
    """cerberus re-sorted its error list per error: 4,000 errors took 31 s; now well under 2 s."""
    text = ("name: h\naddress: h.lan\ngpus: [{index: 0, pci_bus_id: '00000000:01:00.0', memory_gb: 1, numa_node: 0}]\n"
            "numa: [{node: 0, cpus: '0'}]\nstorage: {model_root: /m}\nsglang: {pin: 0.5.9, python: /usr/bin/python3}\n"
            "vm_passthrough: [{vm: v, gpus: [" + ", ".join(["x"] * 2400) + "]}]\n")
    diags = Diagnostics()
    doc = load_text(text, "h.yaml", diags)
    started = time.monotonic()
    assert not validate(doc, HOST_SCHEMA, diags)
    assert time.monotonic() - started < 2
    assert len(diags.items) == 2400


@pytest.mark.parametrize("extra", ["parallel: {tp: true}", "context_length: false", "weights: {path: /m, size_gb: true}",
                                   "multinode: {hosts: [a, b], port: true}"])
def test_true_and_false_are_not_numbers(extra: str) -> None:
    """cerberus took ``tp: true`` for the integer 1 (bool is an int in Python)."""
    text = "name: m\n" + ("" if "weights" in extra else "weights: {path: /m, size_gb: 1}\n") + extra + "\n"
    diags = Diagnostics()
    doc = load_text(text, "m.yaml", diags)
    assert not validate(doc, MODEL_SCHEMA, diags)
    assert [d.code for d in diags.items] == ["S002"] and "got boolean" in diags.items[0].message
