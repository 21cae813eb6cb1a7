#!/usr/bin/env python3
"""Benchmark: what the memory sizing (generator/plan/memory.py, issue 21) costs per service.

Run: .venv/bin/python bench/memory.py [--runs N] [--calls N] [--hosts N]

Two figures, both in this one process (no subprocess, so the load of the machine moves
them less than a `gen check` would; still say the `uptime` load beside them):

  size_memory   one call of plan/memory.size_memory, the whole token sizing SGLang's own
                formula mirrors (fraction default, free memory, weights per rank, bytes
                per token, pool, request table, reserve), for each real startup log of
                tests/data/memory_logs.json with its real config.json
                (tests/data/memory_configs.json), per pin: the median over --runs of
                --calls calls, in microseconds per call
  fleet share   `gen check`'s in-process pipeline (pipeline/fleet.run_fleet, one job) on
                a synthetic fleet of --hosts hosts (bench/fleet.py's make_fleet, GPUs with
                memory_mib), with pipeline/host.check_service_memory wrapped by a timer:
                the time inside it against the whole run, and which path each service
                took (sized by token, or the weights.size_gb budget when the model has no
                checkpoint snapshot)

Nothing is written into this repository: the fleet is a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fleet import make_fleet  # noqa: E402  (bench/fleet.py: the synthetic fleet)

from generator.plan.memory import Checkpoint, Flags, size_memory  # noqa: E402

DATA = ROOT / "tests" / "data"
PINS = ("0.5.9", "0.5.23")


def sizing_cases() -> list[tuple[str, str, Checkpoint, int, Flags, bool]]:
    """(log id, pin, checkpoint, memory.total MiB, flags, nvlink) for every logged start that sizes statically."""
    logs = json.loads((DATA / "memory_logs.json").read_text())["cases"]
    configs = json.loads((DATA / "memory_configs.json").read_text())
    cases = []
    for log in logs:
        if not log.get("weight_bytes"):
            continue
        extra: dict[str, Any] = {}
        if "draft" in log:
            extra = {"draft_config": configs[log["draft"]], "draft_weight_bytes": log["draft_weight_bytes"]}
        checkpoint = Checkpoint(configs[log["model"]], log["weight_bytes"], **extra)
        for pin in PINS:
            cases.append((log["id"], pin, checkpoint, log["gpu_memory_mib"], Flags(**log["flags"]),
                          log.get("nvlink", False)))
    return cases


def time_sizing(runs: int, calls: int) -> list[tuple[str, str, float]]:
    """Median microseconds per size_memory call, per (log, pin)."""
    out = []
    for log_id, pin, checkpoint, mib, flags, nvlink in sizing_cases():
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            for _ in range(calls):
                size_memory(pin, checkpoint, mib, flags, nvlink=nvlink)
            samples.append((time.perf_counter() - start) / calls * 1e6)
        out.append((log_id, pin, statistics.median(samples)))
    return out


def fleet_share(hosts: int, runs: int) -> tuple[float, float, int, Counter[str]]:
    """(median wall s of run_fleet, median s inside check_service_memory, services, paths taken)."""
    import generator.pipeline.host as host_pipeline
    from generator.pipeline.fleet import run_fleet

    inner = host_pipeline.check_service_memory
    spent = [0.0]
    paths: Counter[str] = Counter()

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        outcome = inner(*args, **kwargs)
        spent[0] += time.perf_counter() - start
        paths["sized by token" if outcome is not None and outcome.plan is not None
              else f"budget from weights.size_gb ({outcome.skipped or 'no reason'})" if outcome is not None
              else "not sized"] += 1
        return outcome

    host_pipeline.check_service_memory = timed
    try:
        with tempfile.TemporaryDirectory(prefix="gen-bench-memory-") as tmp:
            repo = Path(tmp)
            services = make_fleet(repo, hosts)
            for path in (repo / "hosts").iterdir():  # memory.total as gen host snapshot records it
                path.write_text(path.read_text().replace("memory_gb: 96,", "memory_mib: 97887,"))
            walls, inside = [], []
            for _ in range(runs):
                spent[0] = 0.0
                paths.clear()
                start = time.perf_counter()
                run_fleet(repo, None, jobs=1)
                walls.append(time.perf_counter() - start)
                inside.append(spent[0])
    finally:
        host_pipeline.check_service_memory = inner
    return statistics.median(walls), statistics.median(inside), services, paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="repeats; the median is reported (default 5)")
    parser.add_argument("--calls", type=int, default=200, help="size_memory calls per repeat (default 200)")
    parser.add_argument("--hosts", type=int, default=100, help="hosts of the synthetic fleet (default 100)")
    args = parser.parse_args()
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    rows = time_sizing(args.runs, args.calls)
    print("\n| log | pin | us per size_memory call |\n|---|---|---:|")
    for log_id, pin, us in rows:
        print(f"| {log_id} | {pin} | {us:.0f} |")
    per_call = [us for _, _, us in rows]
    print(f"\nsize_memory: {len(rows)} cases, median {statistics.median(per_call):.0f} us, "
          f"slowest {max(per_call):.0f} us per call")
    wall, inside, services, paths = fleet_share(args.hosts, args.runs)
    print(f"\nfleet of {args.hosts} hosts, {services} services, one job: run_fleet {wall:.2f} s, of which "
          f"check_service_memory {inside * 1000:.0f} ms ({inside / wall:.1%}), "
          f"{inside / services * 1e6:.0f} us per service")
    for path, count in sorted(paths.items()):
        print(f"  {count} services: {path}")


if __name__ == "__main__":
    main()
