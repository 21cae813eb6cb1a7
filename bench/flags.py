#!/usr/bin/env python3
"""Benchmark: loading an SGLang catalog and checking one service's flags, beside `gen check`.

Run: .venv/bin/python bench/flags.py [--runs N]

Measured in this process (median of --runs, each on fresh caches where it says so), as
wall and CPU milliseconds (the CPU column is the figure to compare on a loaded machine):

  load catalog (cold)   parse catalogs/sglang/<pin>.json into a Catalog (lru cache cleared)
  load tables (cold)    foreign-flags.yaml + renames.yaml (cache cleared)
  check flags           check_args on every flag of each example service (warm catalog)
  check flags (cold)    the same with both caches cleared first: load + tables + check

and, in a fresh process each run, the whole `gen check` on this repository.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.sglang import catalog as catalog_mod
from generator.sglang import tables as tables_mod
from generator.plan.argv import _free_form, _structured
from generator.sglang.catalog import known_pins, load_catalog, load_flag_tables
from generator.errors import Diagnostics
from generator.sglang.flags import check_args
from generator.plan.placement import place_host
from generator.load.sources import load_sources


class Ms(tuple):  # type: ignore[type-arg]
    """Median wall and CPU milliseconds of one measurement; prints as two columns."""

    def __format__(self, spec: str) -> str:
        return f"{format(self[0], spec)} {format(self[1], spec)}"


def median_ms(fn: Callable[[], object], runs: int, before: Callable[[], None] = lambda: None) -> Ms:
    """Median wall and CPU time (this process) of ``fn`` in ms; ``before`` runs untimed first.

    CPU time is what the check itself costs; on a machine shared with other work the wall
    time also counts the time the process waited for a core.
    """
    wall, cpu = [], []
    for _ in range(runs):
        before()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return Ms((statistics.median(wall), statistics.median(cpu)))


def clear_caches() -> None:
    catalog_mod._load_cached.cache_clear()
    tables_mod._load_tables_cached.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    opts = parser.parse_args()
    sources = load_sources(ROOT, Diagnostics())
    services = []
    for host in sources.hosts.values():
        for p in place_host(host, sources.models, Diagnostics()):
            services.append((host, p, _structured(p) + _free_form(p)))
    print(f"{'what':44} {'wall ms':>10} {'cpu ms':>10}")
    for pin in known_pins(ROOT):
        size = (ROOT / "catalogs" / "sglang" / f"{pin}.json").stat().st_size
        cat = load_catalog(ROOT, pin)
        ms = median_ms(lambda: load_catalog(ROOT, pin), opts.runs, clear_caches)
        print(f"{f'load catalog {pin} (cold, {size // 1024} KiB, {len(cat.actions)} actions)':44} {ms:10.2f}")
        ms = median_ms(lambda: load_flag_tables(cat.source_file), opts.runs, clear_caches)
        print(f"{'load foreign/renames tables (cold)':44} {ms:10.2f}")
        others = [load_catalog(ROOT, p) for p in known_pins(ROOT) if p != pin]
        for host, p, args in services:
            label = f"{host.name}/{p.service.name}, {len(args)} flags, pin {pin}"
            warm = median_ms(lambda: check_args(cat, args, Diagnostics(), others), opts.runs)
            print(f"{'check ' + label:44} {warm:10.2f}")
            cold = median_ms(lambda: check_args(load_catalog(ROOT, pin), args, Diagnostics(),
                                                [load_catalog(ROOT, o) for o in known_pins(ROOT)
                                                 if o != pin]),
                             opts.runs, clear_caches)
            print(f"{'  same, cold (load all catalogs + check)':44} {cold:10.2f}")
    gen = [str(ROOT / ".venv" / "bin" / "gen"), "check", "--root", str(ROOT)]
    runs = max(3, opts.runs // 4)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(gen, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    print(f"{f'whole `gen check` (new process, {runs} runs)':44} {statistics.median(times):10.2f}")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import generator.cli.main"], cwd=ROOT, check=True)
        times.append((time.perf_counter() - start) * 1000)
    print(f"{'  of which: python start + import gen':44} {statistics.median(times):10.2f}")


if __name__ == "__main__":
    main()
