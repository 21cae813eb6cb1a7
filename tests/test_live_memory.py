"""gen verify's memory check on SGLang-shaped /get_server_info answers (no host: the comparison alone).

The prediction is the example host's (llm-two, qwen3.5-122b-a10b, sized without a snapshot:
fraction and weights per GPU); the answers have the shape of SGLang 0.5.9's ``server_info``
(server args, ``max_total_num_tokens``, ``internal_states[].memory_usage``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from generator.live.checks.memory import compare
from generator.live.plan import ServicePlan, host_plan
from generator.live.results import Status
from generator.pipeline.fleet import run_fleet


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def svc() -> ServicePlan:
    [render] = run_fleet(ROOT, ["llm-two"], detail=True).renders
    [service] = host_plan(render).services
    assert service.memory is not None
    return service


def _info(svc: ServicePlan, **over: object) -> dict[str, object]:
    want = svc.memory
    assert want is not None
    info: dict[str, object] = {"version": "0.5.9", "mem_fraction_static": want.mem_fraction_static,
                               "max_total_num_tokens": 123456, "internal_states": [
                                   {"memory_usage": {"weight": round(want.weights_gib, 2), "kvcache": 20.1,
                                                     "token_capacity": 123456, "graph": 1.2}}]}
    info.update(over)
    return info


def test_the_figures_of_a_healthy_start_pass(svc: ServicePlan) -> None:
    res = compare(svc, svc.memory, _info(svc), "llm-two")  # type: ignore[arg-type]
    assert res.status is Status.PASS
    assert res.detail == "within 5% of gen's prediction (SGLang 0.5.9's figures)"


def test_heavier_weights_name_the_snapshot(svc: ServicePlan) -> None:
    want = svc.memory
    assert want is not None
    info = _info(svc, internal_states=[{"memory_usage": {"weight": want.weights_gib * 1.08}}])
    res = compare(svc, want, info, "llm-two")
    assert res.status is Status.WARN and res.warned and not res.failed
    assert res.detail.startswith(f"weights {want.weights_gib * 1.08:.2f} GiB per GPU, gen charged "
                                 f"{want.weights_gib:.2f}: correct the weights' size (the checkpoint snapshot")


def test_a_weight_within_5_percent_passes(svc: ServicePlan) -> None:
    want = svc.memory
    assert want is not None
    info = _info(svc, internal_states=[{"memory_usage": {"weight": want.weights_gib * 1.04}}])
    assert compare(svc, want, info, "llm-two").status is Status.PASS


def test_another_fraction_names_the_fraction(svc: ServicePlan) -> None:
    res = compare(svc, svc.memory, _info(svc, mem_fraction_static=0.8), "llm-two")  # type: ignore[arg-type]
    assert res.status is Status.WARN
    assert res.detail.startswith("mem_fraction_static 0.8, gen resolved 0.85: correct memory.mem_fraction_static")


def test_fewer_tokens_than_predicted_name_the_free_memory_assumption(svc: ServicePlan) -> None:
    want = dataclasses.replace(svc.memory, max_total_num_tokens=1_000_000)  # type: ignore[type-var]
    res = compare(svc, want, _info(svc, max_total_num_tokens=900_000), "llm-two")
    assert res.status is Status.WARN
    assert res.detail.startswith("max_total_num_tokens 900,000, gen predicted 1,000,000 (+11.1%): correct the free "
                                 "memory before load gen assumed (94.49 GiB")
    close = compare(svc, want, _info(svc, max_total_num_tokens=960_000), "llm-two")
    assert close.status is Status.PASS


def test_a_stand_in_is_named_as_one(svc: ServicePlan) -> None:
    res = compare(svc, svc.memory, _info(svc, standin="gen's stand-in"), "llm-two")  # type: ignore[arg-type]
    assert res.detail == "within 5% of gen's prediction (the stand-in server's figures (not SGLang's))"


def test_a_server_without_figures_warns(svc: ServicePlan) -> None:
    res = compare(svc, svc.memory, {"version": "0.5.9"}, "llm-two")  # type: ignore[arg-type]
    assert res.status is Status.WARN
    assert "reported none of max_total_num_tokens" in res.detail
