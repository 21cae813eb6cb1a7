"""The real SGLang parser as the oracle for what gen renders and what gen refuses (marker ``sglang``).

* Every rendered ExecStart (output/, the examples rendered for 0.5.23, and a repo whose
  free-form args exercise lists, JSON, floats, dash values, switches and characters
  systemd must escape) is read back with the real systemd (``systemd --test``), and the
  words after the program are parsed by the real SGLang parser of the unit's pin with
  ``allow_abbrev=False``: every word must be accepted and every flag must parse to the
  value gen meant.
* Every line of tests/fixtures/wrong-commands.yaml is refused by SGLang's own parser
  (as SGLang builds it: ``allow_abbrev`` on) with exit status 2 and the message named there.

Importing SGLang takes 5-10 s, so each version evaluates all cases of a test in one script
(``ORACLE`` below, the cases on stdin), run in the session's SGLang process of that pin
(tests/sglang_worker.py: SGLang imported once per pin for every oracle test).
"""

from __future__ import annotations

import shutil

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from repo_builder import host_yaml, write_repo
from ruamel.yaml import YAML
import sglang_worker
from systemd_unquote import exec_time_dollars, systemd_load

from generator.sglang.catalog import Action, load_catalog
from generator.pipeline.fleet import run

pytestmark = pytest.mark.sglang

ROOT = Path(__file__).resolve().parent.parent
WRONG = ROOT / "tests" / "fixtures" / "wrong-commands.yaml"

# Runs inside the SGLang venv: reads cases as JSON on stdin, prints one JSON line of results.
ORACLE = r'''
import argparse, contextlib, io, json, sys
with contextlib.redirect_stdout(sys.stderr):  # SGLang may print while importing
    from sglang.srt.server_args import ServerArgs
results = []
for case in json.load(sys.stdin):
    parser = argparse.ArgumentParser(allow_abbrev=case["allow_abbrev"])
    ServerArgs.add_cli_args(parser)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = parser.parse_args(case["argv"])
    except SystemExit as exc:
        results.append({"exit": exc.code, "stderr": err.getvalue(), "values": None})
        continue
    values = {d: getattr(ns, d, "<missing>") for d in case["dests"]}
    results.append({"exit": None, "stderr": err.getvalue(), "values": values})
print("ORACLE-RESULTS " + json.dumps(results, default=repr))
'''


def oracle(pin: str, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evaluate ``cases`` (argv, allow_abbrev, dests) with the real SGLang ``pin`` in one process."""
    proc = sglang_worker.run(pin, ORACLE, json.dumps(cases), "test_sglang_oracle.ORACLE")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("ORACLE-RESULTS ")]
    results: list[dict[str, Any]] = json.loads(line.removeprefix("ORACLE-RESULTS "))
    assert len(results) == len(cases)
    return results


def expected_value(action: Action, words: tuple[str, ...]) -> Any:
    """What argparse stores for one rendered flag group (as JSON after the oracle's round trip)."""
    if action.nargs == 0:
        return words[0] != action.negative if action.kind == "boolean_optional" else True
    values = [words[0].split("=", 1)[1]] if len(words) == 1 else list(words[1:])
    kind = action.type or "str"
    known = {"int": int, "float": float, "str": str, "callable:json.loads": json.loads,
             # 0.5.23 context length: "32768" or "32k"; gen writes plain integers.
             "callable:sglang.srt.utils.common.human_readable_int": int}
    assert kind in known, f"add how {kind} converts {action.canonical} to the oracle test"
    convert = known[kind]
    typed = [convert(v) for v in values]
    return typed[0] if action.nargs in (None, "?") else typed


# ----- rendered units -----

EXTRA_MODEL = """\
name: extra
weights: {path: /shared/models/extra, size_gb: 20}
served_model_name: "extra model $HOME %h 'q' \\"dq\\""
dtype: bfloat16
context_length: 32768
trust_remote_code: true
parallel: {tp: 2}
memory: {mem_fraction_static: 0.8}
args:
  --cuda-graph-bs: [1, 2, 4, 8]
  --json-model-override-args: '{"rope_scaling": {"type": "yarn", "factor": 2.0}}'
  --schedule-conservativeness: 0.3
  --chat-template: "-dash-first.jinja"
  --enable-metrics: true
  --log-level: warning
  --random-seed: 1234
"""


def _units(root: Path) -> list[tuple[str, str, str, Any]]:
    """(pin, unit name, unit text) for every unit a fresh render of ``root`` produces."""
    result = run(root, None)
    assert result.ok, "\n".join(map(str, result.diagnostics))
    out = []
    for render in result.renders:
        for f in render.tree.files:
            if f.relpath.endswith(".service"):
                out.append((render.catalog.pin, Path(f.relpath).name, f.text, render))
    return out


def _groups(render: Any, unit: str) -> tuple[Any, ...]:
    [svc] = [s for s in render.services if Path(s.unit_path).name == unit]
    return svc.argv.groups


def test_rendered_exec_start_is_accepted_by_the_real_parser(repo_copy: Path, tmp_path: Path) -> None:
    # The committed output/ must be what a render gives: then these units ARE output/.
    committed = {(p.parts[-5], p.name): p.read_text()
                 for p in (ROOT / "output").glob("*/etc/systemd/system/*.service")}
    units = _units(ROOT)
    assert {(u[3].host.name, u[1]): u[2] for u in units} == committed
    examples = len(units)
    # The examples moved to 0.5.23 (the pin's canonical spellings differ: --tp-size).
    for host in (repo_copy / "hosts").glob("*.yaml"):
        host.write_text(host.read_text().replace('pin: "0.5.9"', 'pin: "0.5.23"'))
    units += _units(repo_copy)
    for pin in ("0.5.9", "0.5.23"):
        extra = write_repo(tmp_path / f"extra-{pin}", {"h": host_yaml(
            "h", pin=pin, services="  - {name: extra, model: extra, port: 31000, gpus: [0, 1]}\n")},
            {"extra": EXTRA_MODEL if pin == "0.5.9" else EXTRA_MODEL.replace(
                "--cuda-graph-bs:", "--cuda-graph-bs-decode:")})
        shutil.copytree(ROOT / "templates", extra / "templates")  # templates/: regular files only (Y009)
        (extra / "catalogs").symlink_to(ROOT / "catalogs")
        units += _units(extra)
    assert {u[0] for u in units} == {"0.5.9", "0.5.23"} and len(units) == 2 * examples + 2
    by_pin: dict[str, list[tuple[list[str], dict[str, Any]]]] = {}
    for pin, name, text, render in units:
        # DefaultDependencies=no: "systemd --test" needs no sysinit.target to load the unit.
        loadable = text.replace("[Unit]\n", "[Unit]\nDefaultDependencies=no\n", 1)
        [argv] = systemd_load(name, loadable).commands["ExecStart"]
        argv = [exec_time_dollars(w) for w in argv]
        assert argv[1:3] == ["-m", "sglang.launch_server"], argv
        catalog = load_catalog(ROOT, pin)
        groups = _groups(render, name)
        assert argv[3:] == [w for g in groups for w in g.words]
        expected = {g.action.dest: expected_value(g.action, g.words) for g in groups}
        # A JSON-valued flag is checked as the JSON gen meant, not as text.
        by_pin.setdefault(pin, []).append((argv[3:], expected))
        assert catalog.pin == pin
    for pin, items in by_pin.items():
        cases = [{"argv": a, "allow_abbrev": False, "dests": sorted(e)} for a, e in items]
        for (argv, expected), result in zip(items, oracle(pin, cases)):
            assert result["exit"] is None, f"SGLang {pin} refused {shlex.join(argv)}:\n{result['stderr']}"
            assert result["values"] == expected, (pin, argv)
    # The tricky values really reached SGLang as written.
    extra9 = next(e for a, e in by_pin["0.5.9"] if "--cuda-graph-bs" in a)
    assert extra9["served_model_name"] == "extra model $HOME %h 'q' \"dq\""
    assert json.loads(extra9["json_model_override_args"]) == {
        "rope_scaling": {"type": "yarn", "factor": 2.0}}
    assert extra9["chat_template"] == "-dash-first.jinja"
    assert extra9["cuda_graph_bs"] == [1, 2, 4, 8]


# ----- wrong command lines -----


def test_wrong_commands_are_refused_by_the_real_parser() -> None:
    cases = YAML(typ="safe", pure=True).load(WRONG.read_text())
    by_pin: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        words = shlex.split(case["command"])
        first_flag = next(i for i, w in enumerate(words) if w.startswith("-") and w != "-m")
        by_pin.setdefault(case["pin"], []).append({**case, "argv": words[first_flag:]})
    assert set(by_pin) == {"0.5.9", "0.5.23"}
    for pin, items in by_pin.items():
        # SGLang's own parser: a plain ArgumentParser(), so abbreviations are on.
        results = oracle(pin, [{"argv": c["argv"], "allow_abbrev": True, "dests": []} for c in items])
        for case, result in zip(items, results):
            assert result["exit"] == 2, f"SGLang {pin} accepted: {case['command']}"
            assert case["sglang_says"] in result["stderr"], (case["why"], result["stderr"])
