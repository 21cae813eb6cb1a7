#!/usr/bin/env python3
"""Benchmark: `gen check` on the example repo beside the cost of importing its dependencies.

Run: .venv/bin/python bench/check.py [--runs N]

Reports medians of N runs (fresh processes) for:
  deps import   python -c 'import jinja2, ruamel.yaml, cerberus, click'
  gen import    python -c 'import generator.cli.main' (gen's own modules on top)
  gen check     python -m generator check (whole command)
and, in one process after the imports, the median time of the check itself
(load + validate + place + flags + render + plan), which should stay well under 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return statistics.median(times)


def _in_process(runs: int) -> tuple[float, float]:
    from generator.sglang.catalog import load_catalog
    from generator.pipeline.fleet import run

    first_start = time.perf_counter()
    result = run(ROOT, None)
    first = time.perf_counter() - first_start
    assert result.ok and not result.dirty, "the example repo must be valid and current"
    times = []
    for _ in range(runs):
        load_catalog.cache_clear() if hasattr(load_catalog, "cache_clear") else None
        start = time.perf_counter()
        run(ROOT, None)
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    py = sys.executable
    deps = _wall([py, "-c", "import jinja2, ruamel.yaml, cerberus, click"], args.runs)
    own = _wall([py, "-c", "import generator.cli.main"], args.runs)
    check = _wall([py, "-m", "generator", "check"], args.runs)
    first, warm = _in_process(args.runs)
    print(f"runs: {args.runs} (medians), python {sys.version.split()[0]}")
    print(f"deps import     {deps * 1000:8.1f} ms   jinja2, ruamel.yaml, cerberus, click")
    print(f"gen import      {own * 1000:8.1f} ms   + gen's modules")
    print(f"gen check       {check * 1000:8.1f} ms   whole command, fresh process")
    print(f"beyond imports  {(check - own) * 1000:8.1f} ms   gen check minus gen import")
    print(f"check, first    {first * 1000:8.1f} ms   in process, cold caches (catalog parse, templates)")
    print(f"check, warm     {warm * 1000:8.1f} ms   in process, repeated")


if __name__ == "__main__":
    main()
