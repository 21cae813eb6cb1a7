#!/usr/bin/env python3
"""Benchmark: `gen check` and `gen render --all` on a synthetic fleet, beside the YAML floor.

Run: .venv/bin/python bench/fleet.py [--sizes 10,100,1000] [--runs N] [--jobs N]

For each fleet size, a temporary repository is generated (nothing is written into this
repo): the real catalogs/ and templates/ of this repo, the real model manifests plus
synthetic ones in the same shape, and N hosts with 8 GPUs on two NUMA nodes, each with
1 to 8 services packed onto its GPUs (pins alternate between the repo's catalogs).
Every command runs in a fresh process; the table shows, per size:

  floor          load the same YAML files with ruamel.yaml (YAML(typ="safe"), the
                 loader generator/load/manifests.py uses), nothing else: the lower bound
  render first   `gen render --all` into an empty output/ (before each run the last one's
                 tree is moved aside and synced, untimed)
  render again   `gen render --all` with nothing changed (must rewrite nothing)
  check          `gen check` (output/ current): what CI and the pre-commit hook run

gen runs from a snapshot of generator/ taken at the start, byte-compiled as an installed
gen is (see :func:`snapshot_gen`), so other people editing this checkout mid-run do not
change what is measured. Every command runs with GEN_RENDER_CACHE=off, so a --gen-src from
before the render cache was removed (e1eb843 and older) does the same full work.

with wall time (median of --runs), peak RSS of the child (ru_maxrss from wait4),
time per service, and the ratio to the floor; then CPU seconds (user + system of the
command and the workers it waited for, from wait4) and their ratio to the floor's CPU
seconds. On a machine shared with other work, wall time follows the load; CPU time
is what the command itself costs. The first render's system time is the filesystem's:
it creates 10,400 files and 9,000 folders. On this machine's ext4, which has no journal,
that took 0.35 s of kernel time in a fresh state and up to 18 s within minutes of other
large deletions anywhere on the disk (see :func:`measure_first`); `TMPDIR=/dev/shm`
(tmpfs) shows gen's own share, and the header names the filesystem used.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (name, size_gb, tp, extra YAML lines): realistic dense and MoE checkpoints that fit
# 96 GB GPUs at the given TP, with flags both catalogs know.
SYNTHETIC_MODELS: tuple[tuple[str, float, int, str], ...] = (
    ("llama-3.1-8b-instruct", 16, 1, "context_length: 131072\n"),
    ("qwen3-8b", 16.4, 1, "parsers:\n  reasoning: qwen3\n  tool_call: qwen25\n"),
    ("mistral-small-3.2-24b", 48, 1, "args:\n  --max-running-requests: 64\n"),
    ("qwen3-30b-a3b", 61, 1, "parsers:\n  reasoning: qwen3\nargs:\n  --chunked-prefill-size: 8192\n"),
    ("qwen3-32b", 65.5, 2, "parsers:\n  reasoning: qwen3\n  tool_call: qwen25\n"),
    ("llama-3.3-70b-instruct", 141, 2, "args:\n  --kv-cache-dtype: fp8_e4m3\n  --enable-metrics: true\n"),
    ("gpt-oss-120b", 65, 2, "args:\n  --schedule-policy: lpm\n"),
    ("qwen3-235b-a22b-fp8", 236, 4, ("parsers:\n  reasoning: qwen3\n  tool_call: qwen25\n"
                                     "args:\n  --max-total-tokens: 400000\n")),
)
REAL_MODELS = ("qwen3.5-122b-a10b", "kimi-k2.5-eagle3")  # copied from models/

# GPU layouts: (model, first GPU) per service; 1 to 8 services on 8 GPUs.
LAYOUTS: tuple[tuple[tuple[str, int], ...], ...] = (
    tuple((SYNTHETIC_MODELS[i % 4][0], i) for i in range(8)),               # 8 x TP1
    (("qwen3.5-122b-a10b", 0), ("qwen3-32b", 4), ("gpt-oss-120b", 6)),       # TP4 + 2 x TP2
    (("kimi-k2.5-eagle3", 0),),                                              # TP8
    (("qwen3-235b-a22b-fp8", 0), ("qwen3-8b", 4), ("llama-3.1-8b-instruct", 5),
     ("qwen3-30b-a3b", 6), ("mistral-small-3.2-24b", 7)),                    # TP4 + 4 x TP1
    (("llama-3.3-70b-instruct", 0), ("qwen3-32b", 2), ("gpt-oss-120b", 4),
     ("llama-3.3-70b-instruct", 6)),                                         # 4 x TP2
)
TP = {name: tp for name, _, tp, _ in SYNTHETIC_MODELS} | {"qwen3.5-122b-a10b": 4, "kimi-k2.5-eagle3": 8}
PINS = ("0.5.9", "0.5.23")
PCI = ("01", "21", "41", "61", "81", "A1", "C1", "E1")


def _model_yaml(name: str, size_gb: float, tp: int, extra: str) -> str:
    return (f"name: {name}\ndescription: {name} at TP={tp} (synthetic, benchmark)\n"
            f"weights:\n  path: /shared/models/{name}\n  format: safetensors\n"
            f"  size_gb: {size_gb}\n  shards: {max(1, int(size_gb // 5))}\n"
            f"served_model_name: {name}\nparallel:\n  tp: {tp}\n"
            f"memory:\n  mem_fraction_static: 0.85\n{extra}")


def _host_yaml(index: int) -> tuple[str, str, int]:
    """One host inventory: (name, text, number of services)."""
    name = f"gpu-{index:04d}"
    layout = LAYOUTS[index % len(LAYOUTS)]
    gpus = "".join(
        f'  - {{index: {g}, pci_bus_id: "00000000:{PCI[g]}:00.0", memory_gb: 96, '
        f"numa_node: {g // 4}, model: RTX PRO 6000 Blackwell}}\n" for g in range(8))
    services = []
    for k, (model, first) in enumerate(layout):
        tp = TP[model]
        svc = (f"  - name: {model.split('-')[0]}-{k}\n    model: {model}\n    port: {30000 + k}\n"
               f"    listen: 0.0.0.0\n    gpus: [{', '.join(str(first + g) for g in range(tp))}]\n")
        if tp == 8:
            svc += "    allow_cross_numa: true\n"
        services.append(svc)
    text = (f"name: {name}\ndescription: synthetic fleet host {index} (benchmark)\n"
            f"address: {name}.fleet.invalid\nssh:\n  user: root\n"
            f"gpus:\n{gpus}"
            'numa:\n  - {node: 0, cpus: "0-31,64-95"}\n  - {node: 1, cpus: "32-63,96-127"}\n'
            "storage:\n  model_root: /shared/models\n  retired: [/data]\n"
            f'sglang:\n  pin: "{PINS[index % len(PINS)]}"\n  source_dir: /root/sglang-main\n'
            "  python: /root/sglang-main/.venv/bin/python\n  user: root\n"
            f"services:\n{''.join(services)}")
    return name, text, len(layout)


def make_fleet(dest: Path, hosts: int) -> int:
    """Write a synthetic repository with ``hosts`` hosts under ``dest``; return the service count."""
    for folder in ("catalogs", "templates"):
        shutil.copytree(ROOT / folder, dest / folder)
    (dest / "models").mkdir()
    (dest / "hosts").mkdir()
    for name in REAL_MODELS:
        shutil.copy(ROOT / "models" / f"{name}.yaml", dest / "models" / f"{name}.yaml")
    for name, size, tp, extra in SYNTHETIC_MODELS:
        (dest / "models" / f"{name}.yaml").write_text(_model_yaml(name, size, tp, extra))
    services = 0
    for i in range(hosts):
        name, text, count = _host_yaml(i)
        (dest / "hosts" / f"{name}.yaml").write_text(text)
        services += count
    return services


FLOOR_SCRIPT = """
import sys
from pathlib import Path
from ruamel.yaml import YAML
yaml = YAML(typ="safe")
root = Path(sys.argv[1])
for folder in ("models", "hosts"):
    for path in sorted((root / folder).iterdir()):
        yaml.load(path.read_bytes().decode("utf-8"))
"""


@dataclass(frozen=True)
class Sample:
    """One measured command: median wall and CPU time (s), peak RSS (MB), exit status, stderr tail."""

    wall: float
    cpu: float
    rss_mb: float
    status: int
    stderr: str


def snapshot_gen(dest: Path, source: Path = ROOT) -> Path:
    """Copy gen's package (and the catalogs it falls back to) from ``source`` to ``dest``,
    byte-compiled as ``pip install`` leaves it; run gen from there.

    Compiled here because nothing else would: this machine sets PYTHONDONTWRITEBYTECODE=1,
    under which every run compiles each of gen's modules from source again (about 30 ms of
    a warm check, 0.15 s CPU of a cold one) and writes nothing. An installed gen has its
    .pyc files; the floor's ruamel.yaml, installed by pip, has them too.
    """
    import compileall

    shutil.copytree(source / "generator", dest / "generator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(source / "catalogs", dest / "catalogs")
    if not compileall.compile_dir(dest / "generator", quiet=1):
        raise SystemExit(f"gen in {source} does not byte-compile")
    return dest


def measure(cmd: list[str], runs: int, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Sample:
    """Run ``cmd`` ``runs`` times in fresh processes; wall via perf_counter, RSS via wait4."""
    walls, cpus, rss, status, err = [], [], [], 0, ""
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, **(env or {})})
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        _, raw_status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        proc.returncode = os.waitstatus_to_exitcode(raw_status)  # so Popen does not wait again
        status = proc.returncode
        rss.append(usage.ru_maxrss / 1024)  # kilobytes on Linux
        cpus.append(usage.ru_utime + usage.ru_stime)  # includes the waited-for pool workers
    return Sample(statistics.median(walls), statistics.median(cpus), max(rss), status, err[-2000:])


def measure_first(cmd: list[str], runs: int, repo: Path, env: dict[str, str], cwd: Path) -> Sample:
    """The first render, ``runs`` times: each into an empty output/.

    The previous run's tree is moved aside, not deleted (it goes with the
    temporary folder at the end), and a ``sync`` keeps their writeback out of the next
    run. Deleting them would charge the next run for it: on ext4 without a journal (this
    machine's disk) the inode allocator skips inodes deleted in the last 60-360 s
    (``recently_deleted`` in fs/ext4/ialloc.c), and after 20,000 deletions each new file
    or folder cost up to 1 ms of kernel time instead of 20 us (perf: find_inode_bit ->
    recently_deleted).
    """
    samples = []
    for run in range(runs):
        aside = repo.parent / f"{repo.name}-aside-{run}"
        aside.mkdir(exist_ok=True)
        if (repo / "output").exists():
            (repo / "output").rename(aside / "output")
        os.sync()
        samples.append(measure(cmd, 1, env, cwd))
    return Sample(statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples),
                  max(s.rss_mb for s in samples), max(s.status for s in samples), samples[-1].stderr)


def filesystem(path: Path) -> str:
    """The type of the filesystem holding ``path`` (from /proc/mounts), or '?'."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "?"
    best = ("", "?")
    for fields in mounts:
        if len(fields) > 2 and (str(path) + "/").startswith(fields[1].rstrip("/") + "/") \
                and len(fields[1]) >= len(best[0]):
            best = (fields[1], fields[2])
    return best[1]


def mtimes(output: Path) -> dict[str, int]:
    """Modification time (ns) of every file under ``output``."""
    return {str(p.relative_to(output)): p.stat().st_mtime_ns for p in output.rglob("*") if p.is_file()}


def bench_size(hosts: int, runs: int, jobs: int | None, gen_src: Path) -> list[tuple[str, Sample, int]]:
    """Measure every command for one fleet size; returns (label, sample, services) rows."""
    py = sys.executable
    jobs_opt = ["--jobs", str(jobs)] if jobs else []
    with tempfile.TemporaryDirectory(prefix=f"gen-fleet-{hosts}-") as tmp:
        repo = Path(tmp) / "repo"  # the first render's earlier trees are moved aside beside it
        repo.mkdir()
        services = make_fleet(repo, hosts)
        gen = [py, "-m", "generator"]
        # python -m generator run in gen_src: the snapshot comes first on sys.path.
        nocache = {"GEN_RENDER_CACHE": "off"}  # for a --gen-src that still has the render cache
        rows = [("floor (yaml load)", measure([py, "-c", FLOOR_SCRIPT, str(repo)], runs), services)]
        first = measure_first(gen + ["render", "--all", "--root", str(repo)] + jobs_opt, runs, repo,
                              nocache, gen_src)
        if first.status != 0:
            raise SystemExit(f"render of {hosts} hosts failed ({first.status}):\n{first.stderr}")
        rows.append(("render, first", first, services))
        before = mtimes(repo / "output")
        again = measure(gen + ["render", "--all", "--root", str(repo)] + jobs_opt, runs, nocache, gen_src)
        rewritten = sum(1 for k, v in mtimes(repo / "output").items() if before.get(k) != v)
        if rewritten or again.status != 0:
            raise SystemExit(f"no-change render rewrote {rewritten} file(s), status {again.status}")
        rows.append(("render, no change", again, services))
        check = measure(gen + ["check", "--root", str(repo)] + jobs_opt, runs, nocache, gen_src)
        if check.status != 0:
            raise SystemExit(f"check of {hosts} hosts failed ({check.status}):\n{check.stderr}")
        rows.append(("check", check, services))
        files = len(before)
    print(f"{hosts:>5} hosts, {services:>5} services, {files:>6} files rendered; "
          f"no-change render rewrote 0 files", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="comma-separated host counts")
    parser.add_argument("--runs", type=int, default=1, help="runs per command (median); each first render starts from an empty output/")
    parser.add_argument("--jobs", type=int, default=None, help="pass --jobs N to gen (default: gen's own)")
    parser.add_argument("--gen-src", type=Path, default=None,
                        help="run gen from a snapshot of this folder (holding generator/ and catalogs/) "
                             "instead of this checkout, e.g. an older version for before/after numbers")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = Path(tempfile.gettempdir()).resolve()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, runs {args.runs}, "
          f"jobs {args.jobs or 'default'}, fleet in {tmp} ({filesystem(tmp)}; set TMPDIR to move it)")
    print(f"{'hosts':>5} {'command':<18} {'wall s':>8} {'x floor':>8} {'peak MB':>8} {'ms/service':>10} "
          f"{'cpu s':>7} {'cpu x floor':>11}")
    with tempfile.TemporaryDirectory(prefix="gen-src-") as src:
        gen_src = snapshot_gen(Path(src), args.gen_src.resolve() if args.gen_src else ROOT)
        for hosts in sizes:
            rows = bench_size(hosts, args.runs, args.jobs, gen_src)
            floor, floor_cpu = rows[0][1].wall, rows[0][1].cpu
            for label, sample, services in rows:
                print(f"{hosts:>5} {label:<18} {sample.wall:>8.2f} {sample.wall / floor:>8.2f} "
                      f"{sample.rss_mb:>8.1f} {sample.wall / services * 1000:>10.2f} "
                      f"{sample.cpu:>7.2f} {sample.cpu / floor_cpu:>11.2f}", flush=True)


if __name__ == "__main__":
    main()
