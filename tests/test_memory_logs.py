"""The memory mirror against real SGLang startup logs (tests/data/memory_logs.json).

Each case is a log users posted, with its source: the model, GPU, flags and what SGLang
printed ("Load weight end. avail mem", "KV Cache is allocated. #tokens"). Two predictions
per pin:

* given: the free memory the log printed before and after the weights load replaces gen's
  assumption, which tests the formula itself (target: within 2% of the logged tokens);
* static: only the GPU's memory.total, the checkpoint's bytes and config.json, as gen check
  sees a service before deploy (target: within 5%, and the median too).

``python tests/test_memory_logs.py`` prints the table of the report.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.plan.memory import Checkpoint, Flags, Measured, budget, size_memory  # noqa: E402
from generator.sglang.pipeline import load_pipeline  # noqa: E402

DATA = Path(__file__).parent / "data"
LOGS = json.loads((DATA / "memory_logs.json").read_text())["cases"]
CONFIGS = json.loads((DATA / "memory_configs.json").read_text())
PINS = ("0.5.9", "0.5.23")
GIVEN_TOLERANCE = 0.02
STATIC_TOLERANCE = 0.05


def _measured(log: dict[str, Any]) -> Measured:
    got = log["logged"]
    after = got.get("load_weight_end_avail_gib")
    before = got.get("load_weight_begin_avail_gib")
    if before is None and after is not None and "weight_mem_gib" in got:
        before = after + got["weight_mem_gib"]  # "mem usage" is before minus after, on that rank
    return Measured(before, after)


def config(log: dict[str, Any]) -> dict[str, Any]:
    """The config.json a logged start served: its model's published one, with the keys the log's
    checkpoint changed (``config_overrides``: a published model cut to fewer layers, say)."""
    return {**CONFIGS[log["model"]], **log.get("config_overrides", {})}


def layer_split(log: dict[str, Any], pin: str) -> bool | None:
    """Whether the pin splits the log's architecture across pipeline stages, from the pin's
    captured catalogs/sglang/<pin>.pipeline.json, as gen check reads it."""
    pipeline = load_pipeline(ROOT / "catalogs" / "sglang" / f"{pin}.json")
    assert pipeline is not None, pin
    return pipeline.splits_layers(config(log)["architectures"][0])


def predict(log: dict[str, Any], pin: str, mode: str) -> int:
    """The max_total_num_tokens gen predicts for one logged start (``mode``: given or static)."""
    checkpoint = Checkpoint(config(log), log["weight_bytes"] or 0)
    measured = _measured(log) if mode == "given" else Measured()
    plan = size_memory(pin, checkpoint, log["gpu_memory_mib"], Flags(**log["flags"]), measured,
                       nvlink=log.get("nvlink", False), layer_split=layer_split(log, pin))
    return plan.max_total_num_tokens


def _given_cases() -> list[tuple[str, str]]:
    return [(log["id"], pin) for log in LOGS for pin in PINS
            if "max_total_num_tokens" in log["logged"] and _measured(log).free_before_load_gib is not None
            and (log["weight_bytes"] or _measured(log).free_after_load_gib is not None)]


def _static_cases() -> list[tuple[str, str]]:
    return [(log["id"], pin) for log in LOGS for pin in PINS
            if "max_total_num_tokens" in log["logged"] and log["weight_bytes"] and "why_no_static" not in log]


def _log(case_id: str) -> dict[str, Any]:
    return next(log for log in LOGS if log["id"] == case_id)


def error(predicted: int, logged: int) -> float:
    """Relative error of a prediction against the logged token count."""
    return (predicted - logged) / logged


@pytest.mark.parametrize(("case_id", "pin"), _given_cases())
def test_tokens_from_the_logged_free_memory(case_id: str, pin: str) -> None:
    log = _log(case_id)
    logged = log["logged"]["max_total_num_tokens"]
    assert abs(error(predict(log, pin, "given"), logged)) <= GIVEN_TOLERANCE


@pytest.mark.parametrize(("case_id", "pin"), _static_cases())
def test_tokens_fully_static(case_id: str, pin: str) -> None:
    log = _log(case_id)
    logged = log["logged"]["max_total_num_tokens"]
    assert abs(error(predict(log, pin, "static"), logged)) <= STATIC_TOLERANCE


@pytest.mark.parametrize("pin", PINS)
def test_static_median_error_within_target(pin: str) -> None:
    errors = [abs(error(predict(_log(c), pin, "static"), _log(c)["logged"]["max_total_num_tokens"]))
              for c, p in _static_cases() if p == pin]
    assert errors and statistics.median(errors) <= STATIC_TOLERANCE


def test_the_bytes_per_token_are_the_logged_k_and_v_sizes() -> None:
    """K + V size (MLA: "KV size") / #tokens is the cell size SGLang sized with (the pool is
    exactly tokens x cell), on 0.5.9 unless the log's build sizes as another pin does (``cell_pin``)."""
    checked = 0
    for log in LOGS:
        got = log["logged"]
        if "k_size_gib" not in got and "kv_size_gib" not in got:
            continue
        pin = log.get("cell_pin", "0.5.9")
        cell = size_memory(pin, Checkpoint(config(log), log["weight_bytes"] or 0), log["gpu_memory_mib"],
                           Flags(**log["flags"]), _measured(log), layer_split=layer_split(log, pin)).cell_bytes
        size = got["kv_size_gib"] if "kv_size_gib" in got else got["k_size_gib"] + got["v_size_gib"]
        logged_cell = size * 2**30 / got["max_total_num_tokens"]
        assert cell == pytest.approx(logged_cell, rel=0.002), log["id"]
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("pin", PINS)
def test_a_logged_refusal_is_refused_with_sglangs_minimum(pin: str) -> None:
    for log in LOGS:
        got = log["logged"]
        if not got.get("refused"):
            continue
        fit = budget(pin, 0.0, log["gpu_memory_mib"], Flags(**log["flags"]), measured=_measured(log))
        assert fit.rest_gib <= 0, log["id"]
        assert fit.min_fraction == pytest.approx(got["minimum_fraction"], abs=0.0005), log["id"]


@pytest.mark.parametrize("pin", PINS)
def test_a_logged_request_table_oom_is_the_table_gen_sizes(pin: str) -> None:
    """sglang#5755: the allocation that failed is the request table gen sizes, and nothing is left for it."""
    cases = [log for log in LOGS if "oom_tried_gib" in log["logged"]]
    assert cases
    for log in cases:
        plan = size_memory(pin, Checkpoint(config(log), log["weight_bytes"]), log["gpu_memory_mib"],
                           Flags(**log["flags"]), nvlink=log.get("nvlink", False))
        assert plan.req_table_gib == pytest.approx(log["logged"]["oom_tried_gib"], rel=0.001), log["id"]
        assert plan.reserve_gib < 0, log["id"]  # the table does not fit what the weights and KV pool leave


def test_a_logged_late_draft_oom_starts_at_the_fraction_gen_names() -> None:
    """sglang#6875: on 0.5.9's order (the draft loads after the target's pool is sized) the
    reserve runs out at the fraction the report found, and P034's window ends there."""
    cases = [log for log in LOGS if "oom_from_fraction" in log["logged"]]
    assert cases
    for log in cases:
        checkpoint = Checkpoint(config(log), log["weight_bytes"], draft_config=CONFIGS[log["draft"]],
                                draft_weight_bytes=log["draft_weight_bytes"])
        logged = log["logged"]["oom_from_fraction"]

        def reserve(fraction: float) -> float:
            return size_memory("0.5.9", checkpoint, log["gpu_memory_mib"], Flags(**log["flags"],
                               mem_fraction_static=fraction), nvlink=log.get("nvlink", False)).reserve_gib

        assert reserve(logged - 0.01) > 0 > reserve(logged + 0.01), log["id"]


def table() -> list[str]:
    """The accuracy table of the report: per log and pin, predicted vs logged, and the summary."""
    rows = ["| log | pin | mode | predicted | logged | error |", "|---|---|---|---:|---:|---:|"]
    summary: dict[tuple[str, str], list[float]] = {}
    for log in LOGS:
        logged = log["logged"].get("max_total_num_tokens")
        if logged is None:
            continue
        for pin in PINS:
            for mode, cases in (("given", _given_cases()), ("static", _static_cases())):
                if (log["id"], pin) not in cases:
                    continue
                predicted = predict(log, pin, mode)
                e = error(predicted, logged)
                summary.setdefault((pin, mode), []).append(abs(e))
                rows.append(f"| [{log['id']}]({log['source']}) | {pin} | {mode} | {predicted:,} | {logged:,} | "
                            f"{e:+.2%} |")
    rows += ["", "| pin | mode | cases | median | worst |", "|---|---|---:|---:|---:|"]
    for (pin, mode), errors in sorted(summary.items()):
        rows.append(f"| {pin} | {mode} | {len(errors)} | {statistics.median(errors):.2%} | {max(errors):.2%} |")
    return rows


if __name__ == "__main__":
    print("\n".join(table()))
