#!/usr/bin/env python3
"""Benchmark: `gen check` as a pre-commit hook runs it, with the render cache and without.

Run: .venv/bin/python bench/precommit.py [--sizes 30,100] [--runs 5] [--gen-src DIR]

The hook (.pre-commit-hooks.yaml) runs `gen check` in the deployment repository before each
commit. Measured per repository (the example repository of this checkout, and the
synthetic fleets of bench/fleet.py with the given host counts), each command in a fresh
process, median wall and CPU seconds of ``--runs``:

  cache off        GEN_RENDER_CACHE=off: everything loaded, checked and rendered
  cache, no edit   the render cache warm and nothing changed since the last run
  cache, one edit  the render cache warm, one host file edited (a comment line added, so
                   its key changes and output/ stays current): what a commit usually is

The render cache was removed after this measurement (README, "Performance"): this checkout's
gen does the first row's work in every row, and ``--gen-src`` names an older checkout (e1eb843
or before) to see the cache's rows. gen runs from a byte-compiled snapshot of ``--gen-src``
(default: this checkout), as bench/fleet.py does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import fleet  # noqa: E402  (bench/fleet.py: the synthetic fleet, the snapshot, the measurement)


def _example(dest: Path, src: Path) -> None:
    for folder in ("models", "hosts", "catalogs", "templates", "output"):
        shutil.copytree(src / folder, dest / folder)


def _measure(gen: list[str], repo: Path, env: dict[str, str], runs: int, cwd: Path,
             edit: Path | None = None) -> tuple[float, float]:
    """Median (wall, cpu) of ``gen check`` on ``repo``; with ``edit``, that file changes before each run."""
    walls, cpus = [], []
    for i in range(runs):
        if edit is not None:
            with edit.open("a") as f:
                f.write(f"# edit {i} {time.time_ns()}\n")
        sample = fleet.measure(gen + ["check", "--root", str(repo)], 1, env, cwd)
        if sample.status != 0:
            raise SystemExit(f"gen check failed ({sample.status}) on {repo}:\n{sample.stderr}")
        walls.append(sample.wall)
        cpus.append(sample.cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    """Print one table: repository, hosts, and the three rows' wall and CPU seconds."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", default="30,100", help="fleet sizes besides the example repository")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gen-src", type=Path, default=None, help="run gen from a snapshot of this checkout")
    opts = ap.parse_args()
    src = (opts.gen_src or ROOT).resolve()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, runs {opts.runs}, load {os.getloadavg()[0]:.2f}")
    print(f"{'repository':<12} {'hosts':>5} {'cache off':>18} {'cache, no edit':>18} {'cache, one edit':>18}")
    with tempfile.TemporaryDirectory(prefix="gen-precommit-") as tmp:
        gen_src = fleet.snapshot_gen(Path(tmp) / "src", src)
        gen = [sys.executable, "-m", "generator"]
        for size in ["example", *opts.sizes.split(",")]:
            repo = Path(tmp) / f"repo-{size}"
            repo.mkdir()
            if size == "example":
                _example(repo, src)
                hosts = len(list((repo / "hosts").glob("*.yaml")))
                edit = repo / "hosts" / "llm-two.yaml"
            else:
                fleet.make_fleet(repo, int(size))
                hosts = int(size)
                render = fleet.measure(gen + ["render", "--all", "--root", str(repo)], 1,
                                       {"GEN_RENDER_CACHE": "off"}, gen_src)
                if render.status != 0:
                    raise SystemExit(f"render failed:\n{render.stderr}")
                edit = repo / "hosts" / "gpu-0001.yaml"
            cache = {"GEN_RENDER_CACHE": str(Path(tmp) / f"cache-{size}")}
            off = _measure(gen, repo, {"GEN_RENDER_CACHE": "off"}, opts.runs, gen_src)
            _measure(gen, repo, cache, 1, gen_src)  # fills the cache
            warm = _measure(gen, repo, cache, opts.runs, gen_src)
            edited = _measure(gen, repo, cache, opts.runs, gen_src, edit)
            cells = " ".join(f"{w:>8.2f} s {c:>5.2f} cpu" for w, c in (off, warm, edited))
            print(f"{size:<12} {hosts:>5} {cells}", flush=True)


if __name__ == "__main__":
    main()
