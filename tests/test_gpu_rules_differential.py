"""The GPU rules against both real SGLangs, on a stand-in GPU: every row of tests/rule_tables/gpu_facts.py.

gen decides each row with ``Settings.gpu`` made from the row's GPU (tests/test_gpu_rules.py's
way, as ``gen check`` does from an inventory). The real SGLang of the pin validates the same
argv with ``--device cuda`` while tests/sglang_platform.py, the stand-in GPU, answers its
device checks from the same facts (0.5.23: its own ``override_platform``; 0.5.9: its
capability probes patched), on CPU: no GPU, CUDA or nvidia-smi exists here. Both must agree
on every row, counting gen's flag check and the rules SGLang enforces in its argument
validation (``enforced: args``); and each such G rule, on each pin it holds for, must fire on
a row SGLang refuses and stay quiet on one it accepts. The coverage files name these rules
for SGLang's device checks, so this is their proof (test_rules_differential.py runs on CPU).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sglang_worker
from rule_tables.gpu_facts import GPU_ROWS, GPUS
from ruamel.yaml import YAML
from test_gpu_rules import _settings

from generator.errors import Diagnostics, Position, Severity
from generator.sglang.catalog import load_catalog
from generator.sglang.flags import Arg, check_args
from generator.sglang.rules import evaluate, load_rules, rules_path

ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "rules_differential_runner.py"
PINS = ("0.5.9", "0.5.23")
RULES = {r.id: r for r in load_rules(ROOT / "catalogs" / "rules.yaml")}

pytestmark = pytest.mark.sglang


def _flags(argv: list[str]) -> list[tuple[str, Any]]:
    """The row's words as a manifest's ``args:`` (option -> value, True for a bare switch)."""
    out: list[tuple[str, Any]] = []
    for word in argv:
        if word.startswith("--"):
            out.append((word, True))
        else:
            out[-1] = (out[-1][0], word)
    return out


def _gen(pin: str, argv: list[str], env: dict[str, str], gpu: str) -> tuple[list[str], list[str], tuple[str, ...]]:
    """gen's errors that count (flag check, ``enforced: args`` rules), every rule id that fired, the argv."""
    catalog = load_catalog(ROOT, pin)
    diags = Diagnostics()
    groups = check_args(catalog, [Arg(f, v, Position("gpu_facts")) for f, v in _flags(argv)], diags)
    words = tuple(w for g in groups for w in g.words)
    findings = evaluate(_settings(catalog, list(words), env, gpu), load_rules(rules_path(catalog)))
    errors = [d.code for d in diags.items if d.is_error]
    errors += [f.rule.code for f in findings if f.rule.severity is Severity.ERROR and f.rule.enforced == "args"]
    return errors, [f.rule.id for f in findings], words


def _platform(gpu: str) -> dict[str, Any]:
    spec = GPUS[gpu]
    major, minor = (int(x) for x in spec["compute_cap"].split("."))
    return {"capability": [major, minor], "cuda": spec["torch_cuda"], "memory_mib": spec["memory_mib"], "name": gpu}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, list[dict[str, Any]]]:
    """Per pin, each row with both sides' verdicts (one SGLang process per pin)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pin in PINS:
        # A host torch without CUDA cannot even be stood in for: its only rule (G006) is not SGLang's.
        rows = [r for r in GPU_ROWS if r[0] == pin and GPUS[r[3]]["torch_cuda"] is not None]
        cases = []
        for i, (_, argv, env, gpu, _expected) in enumerate(rows):
            errors, fired, words = _gen(pin, argv, env, gpu)
            cases.append({"id": f"{pin}#{i}", "argv": list(words), "env": env, "platform": _platform(gpu),
                          "gpu": gpu, "errors": errors, "fired": fired})
        payload = json.dumps([{k: c[k] for k in ("id", "argv", "env", "platform")} for c in cases])
        proc = sglang_worker.run(pin, RUNNER.read_text(encoding="utf-8"), payload, str(RUNNER), 600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        said = {r["id"]: r for r in json.loads(proc.stdout)}
        out[pin] = [{**c, "sglang": said[c["id"]]} for c in cases]
    return out


def test_gen_and_sglang_agree_on_every_gpu_row(outcomes: dict[str, list[dict[str, Any]]]) -> None:
    wrong = [f"{c['id']} {' '.join(c['argv'])} on {c['gpu']}: gen {c['errors'] or 'accepts'}; "
             f"SGLang {c['sglang']['error'] or 'accepts'}"
             for cases in outcomes.values() for c in cases if bool(c["errors"]) == c["sglang"]["ok"]]
    assert not wrong, "\n".join(wrong)


def test_each_gpu_rule_fires_where_sglang_refuses_and_is_quiet_where_it_accepts(
        outcomes: dict[str, list[dict[str, Any]]]) -> None:
    for pin, cases in outcomes.items():
        version = tuple(int(x) for x in pin.split("."))
        for rule in RULES.values():
            if not rule.code.startswith("G") or rule.enforced != "args" or not rule.versions.contains(version):
                continue
            assert any(rule.id in c["fired"] and not c["sglang"]["ok"] for c in cases), (pin, rule.id)
            assert any(rule.id not in c["fired"] and c["sglang"]["ok"] for c in cases), (pin, rule.id)


def test_the_stand_in_gpu_is_what_sglang_saw(outcomes: dict[str, list[dict[str, Any]]]) -> None:
    """A refusal names the GPU generation only because the stand-in answered: on CPU both pins refuse trtllm_mla
    whatever the GPU, so a Blackwell row SGLang accepts shows the facts reached its checks."""
    for pin, cases in outcomes.items():
        accepted = [c for c in cases if c["sglang"]["ok"] and "trtllm_mla" in c["argv"]]
        assert accepted and all(GPUS[c["gpu"]]["compute_cap"].startswith(("10.", "12.")) for c in accepted), pin


def test_the_coverage_files_name_only_proven_gpu_rules() -> None:
    """Each SGLang check the coverage files give a G rule is one this test proves (an args rule) or reads."""
    yaml = YAML(typ="safe")
    named = {e["rule"] for pin in PINS
             for e in (yaml.load((ROOT / "catalogs" / "coverage" / f"{pin}.yaml").read_text(encoding="utf-8"))
                       ["checks"] or {}).values() if "rule" in e and RULES[e["rule"]].code.startswith("G")}
    assert named and all(RULES[r].enforced == "args" for r in named), sorted(named)
