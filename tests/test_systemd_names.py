"""The one name check (generator.systemd.name_problem) against the real systemd.

Every name gen accepts for a model, host or service must give a unit ``sglang-<name>.service``
that ``systemd-analyze verify`` (systemd 252, as on the hosts) loads; the names of issue 10
item 8 must be refused, by gen and (for ':') by systemd itself.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from generator import systemd
from generator.errors import Diagnostics
from generator.load.manifests import load_text
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, validate

ALPHABET = "abcXYZ019_.-:@\\ %$/~+=é"


def _candidates(count: int) -> list[str]:
    """Names built from an alphabet with every character systemd treats specially."""
    rng = random.Random(20261201)
    names = ["a", "qwen3.5-122b-a10b", "x_", "A.b-c", "a" * systemd.NAME_MAX, "a" * (systemd.NAME_MAX + 1)]
    names += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12))) for _ in range(count)]
    # and as many from the characters gen allows, so that many reach systemd
    names += ["".join(rng.choice(ALPHABET[:13]) for _ in range(rng.randint(1, 12))) for _ in range(count)]
    return names


def _verify(tmp: Path, name: str) -> subprocess.CompletedProcess[str]:
    unit = tmp / f"sglang-{name}.service"
    unit.write_text("[Service]\nExecStart=/bin/true\n")
    try:
        return subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True,
                              text=True, timeout=60)
    finally:
        unit.unlink()


def test_every_accepted_name_gives_a_unit_systemd_loads(tmp_path: Path) -> None:
    candidates = _candidates(150)
    accepted = list(dict.fromkeys(n for n in candidates if systemd.name_problem(n) is None))
    assert 40 <= len(accepted) < len(candidates) - 100, accepted  # the generator reaches both sides
    units = []
    for name in accepted:
        units.append(tmp_path / f"sglang-{name}.service")
        units[-1].write_text("[Service]\nExecStart=/bin/true\n")
    # One run for all of them (verify stops at the first unit it cannot load; then name it).
    together = subprocess.run(["systemd-analyze", "verify", "--man=no", *map(str, units)],
                              capture_output=True, text=True, timeout=120)
    for unit in units:
        unit.unlink()
    if together.returncode != 0:
        results = {n: _verify(tmp_path, n) for n in accepted}
        assert {n: r.stderr for n, r in results.items() if r.returncode != 0} == {}, together.stderr


def test_names_from_the_issue_are_refused_and_a_colon_is_refused_by_systemd_too(tmp_path: Path) -> None:
    for name in ("a:b", ".", "x.", "..", "a..b", "-x", "x-", "x@y", "a b", "a/b", "", "a" * (systemd.NAME_MAX + 1)):
        assert systemd.name_problem(name) is not None, name
        with pytest.raises(ValueError):
            systemd.check_name(name)
    assert _verify(tmp_path, "a:b").returncode != 0  # "Couldn't process aliases"


@pytest.mark.parametrize(("schema", "text"), [
    (MODEL_SCHEMA, "name: 'x.'\nweights: {path: /m, size_gb: 1}\n"),
    (HOST_SCHEMA, "name: h\naddress: h.lan\ngpus: [{index: 0, pci_bus_id: '00000000:01:00.0', memory_gb: 1, "
                  "numa_node: 0}]\nnuma: [{node: 0, cpus: '0'}]\nstorage: {model_root: /m}\n"
                  "sglang: {pin: 0.5.9, python: /usr/bin/python3}\nservices: [{name: 'a:b', model: m, port: 1}]\n"),
    (HOST_SCHEMA, "name: '.'\naddress: h.lan\ngpus: [{index: 0, pci_bus_id: '00000000:01:00.0', memory_gb: 1, "
                  "numa_node: 0}]\nnuma: [{node: 0, cpus: '0'}]\nstorage: {model_root: /m}\n"
                  "sglang: {pin: 0.5.9, python: /usr/bin/python3}\n"),
])
def test_the_schema_uses_the_same_check_for_models_hosts_and_services(schema: dict, text: str) -> None:
    diags = Diagnostics()
    doc = load_text(text, "f.yaml", diags)
    assert not validate(doc, schema, diags)
    assert [d.code for d in diags.items] == ["S007"]
    assert "is not a valid name: use [A-Za-z0-9_.-]" in diags.items[0].message


def test_names_the_importer_derives_pass_the_same_check() -> None:
    from generator.importer.build import _slug

    for text in ["Qwen/Qwen3..5", "/x/.hidden.", "a:b", "___", "x" * 300, "/models/Kimi-K2.5/", "é", ".."]:
        assert systemd.name_problem(_slug(text)) is None, (text, _slug(text))
