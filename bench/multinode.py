#!/usr/bin/env python3
"""Benchmark: one multi-node group of N hosts, `gen check` without the render cache.

Run: .venv/bin/python bench/multinode.py [--hosts 256] [--runs 3] [--jobs 2] [--gen-src DIR]

A temporary repository (nothing is written into this one): the real catalogs/ and
templates/, one model whose ``multinode.hosts`` lists N hosts (TP = N, one GPU per node,
pin 0.5.9), and N host inventories that each run one service of it. Every run is a fresh
process of `gen check --jobs J` with GEN_RENDER_CACHE=off (the whole work, as on a fresh CI
machine); `gen render --all` first writes output/ so check compares a current tree. Printed:
median wall and CPU seconds (user + system, the pool's workers included), peak RSS, the
exit status, and the load average before the runs (the machine is shared: figures move
with it). Each host's render used to load and place every other member of its group, n**2
host documents in all (issue 22 item 10: 256 hosts took 51 s).

``--gen-src`` runs another checkout's gen (its ``generator/`` and ``catalogs/``) on the same
repository, to compare before and after.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PCI_BUS = "00000000:18:00.0"


def make_group(dest: Path, hosts: int) -> None:
    """A repository with one multi-node model over ``hosts`` one-GPU hosts."""
    for folder in ("catalogs", "templates"):
        shutil.copytree(ROOT / folder, dest / folder)
    (dest / "models").mkdir()
    (dest / "hosts").mkdir()
    names = [f"node-{i:04d}" for i in range(hosts)]
    (dest / "models" / "big.yaml").write_text(
        "name: big\ndescription: one replica over many nodes (synthetic, benchmark)\n"
        "weights:\n  path: /srv/models/big\n  format: safetensors\n  size_gb: 100\n"
        f"served_model_name: big\ndtype: bfloat16\nparallel:\n  tp: {hosts}\n"
        f"multinode:\n  hosts: [{', '.join(names)}]\n  port: 50000\n")
    for i, name in enumerate(names):
        (dest / "hosts" / f"{name}.yaml").write_text(
            f"name: {name}\naddress: {name}.cluster.invalid\nssh:\n  user: root\n"
            f'gpus:\n  - {{index: 0, pci_bus_id: "{PCI_BUS}", memory_gb: 141, numa_node: 0}}\n'
            'numa:\n  - {node: 0, cpus: "0-31"}\n'
            f"network:\n  address: 10.{i // 250}.{i % 250}.10\n  interface: eth0\n"
            "storage:\n  model_root: /srv/models\n"
            'sglang:\n  pin: "0.5.9"\n  python: /opt/sglang/.venv/bin/python\n'
            "services:\n  - name: big\n    model: big\n    port: 30000\n    listen: 127.0.0.1\n")


def measure(cmd: list[str], runs: int, env: dict[str, str], cwd: Path) -> tuple[float, float, float, int, str]:
    """Median wall and CPU seconds, peak RSS (MB), last exit status and stderr tail of ``runs`` runs."""
    walls, cpus, rss, status, err = [], [], [], 0, ""
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, **env})
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        _, raw, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        proc.returncode = status = os.waitstatus_to_exitcode(raw)
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss.append(usage.ru_maxrss / 1024)
    return statistics.median(walls), statistics.median(cpus), max(rss), status, err[-600:]


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--hosts", type=int, default=256)
    cli.add_argument("--runs", type=int, default=3)
    cli.add_argument("--jobs", type=int, default=2)
    cli.add_argument("--gen-src", type=Path, default=ROOT, help="the checkout whose gen runs (default: this one)")
    args = cli.parse_args()
    with tempfile.TemporaryDirectory(prefix="gen-bench-multinode.") as tmp:
        repo = Path(tmp) / "repo"
        make_group(repo, args.hosts)
        gen = [sys.executable, "-c", "import sys; from generator.cli.main import main; sys.argv[0] = 'gen'; main()"]
        env = {"GEN_RENDER_CACHE": "off", "PYTHONPATH": str(args.gen_src.resolve())}
        render = subprocess.run([*gen, "render", "--all", "--jobs", str(args.jobs)], cwd=repo,
                                env={**os.environ, **env}, capture_output=True, text=True)
        if render.returncode != 0:
            print(render.stderr[-2000:], file=sys.stderr)
            return 1
        load = os.getloadavg()
        wall, cpu, rss, status, err = measure([*gen, "check", "--jobs", str(args.jobs)], args.runs, env, repo)
        print(f"gen from {args.gen_src}: one multi-node group of {args.hosts} hosts, gen check --jobs "
              f"{args.jobs}, no render cache, {args.runs} runs (load average before: "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs)")
        print(f"  wall {wall:.2f} s   CPU {cpu:.2f} s   peak RSS {rss:.0f} MB   exit {status}")
        if status != 0:
            print(err, file=sys.stderr)
        return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
