#!/usr/bin/env python3
"""Benchmark: the kernel's cost of a first render's writes, without gen.

Run: python3 bench/write_floor.py [--dir DIR] [--hosts 1000] [--direct]

Creates the tree a 1,000-host first render creates (bench/fleet.py's fleet): per host 9
folders (the host, etc/, etc/systemd/, etc/systemd/system/, etc/sglang/, usr/, usr/local/,
usr/local/libexec/, usr/local/libexec/gen/) and 10.4 files of 1,800 bytes on average
(10,400 in all), each written as gen writes it (a temp file opened O_CREAT|O_EXCL|O_NOFOLLOW,
written, fchmod, renamed over its name), then one sync. Prints wall, user and system seconds of the writes and of the
sync. ``--direct`` writes each file under its final name (no temp, fchmod or rename), for
comparison. The tree is made in a new folder under ``--dir`` (default: the temporary folder)
and left there: removing it here would slow the next run (see bench/fleet.py measure_first).

What it showed on this machine (ext4 without a journal): 0.35 s of kernel time on an idle
disk, 13-18 s within minutes of 20,000 deletions (the allocator's ``recently_deleted``
window), 0.15 s on tmpfs.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

FOLDERS = ("etc", "etc/systemd", "etc/systemd/system", "etc/sglang", "usr", "usr/local",
           "usr/local/libexec", "usr/local/libexec/gen")
FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DATA = b"x" * 1800


def _cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def _write(folder_fd: int, name: str, direct: bool) -> None:
    target = name if direct else f".{name}.abcdefgh.tmp"
    fd = os.open(target, FLAGS, 0o644 if direct else 0o600, dir_fd=folder_fd)
    os.write(fd, DATA)
    if not direct:
        os.fchmod(fd, 0o644)
    os.close(fd)
    if not direct:
        os.rename(target, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)


def write_tree(root: Path, hosts: int, direct: bool) -> None:
    """Every host's folders and files under ``root`` (which must not exist yet)."""
    root.mkdir()
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for h in range(hosts):
            host = f"gpu-{h:04d}"
            os.mkdir(host, dir_fd=root_fd)
            host_fd = os.open(host, os.O_RDONLY | os.O_DIRECTORY, dir_fd=root_fd)
            for sub in FOLDERS:
                os.mkdir(sub, dir_fd=host_fd)
            units = os.open("etc/systemd/system", os.O_RDONLY | os.O_DIRECTORY, dir_fd=host_fd)
            envs = os.open("etc/sglang", os.O_RDONLY | os.O_DIRECTORY, dir_fd=host_fd)
            tools = os.open("usr/local/libexec/gen", os.O_RDONLY | os.O_DIRECTORY, dir_fd=host_fd)
            services = 5 if h % 5 == 0 else 4  # 4.2 a host, as in the fleet: 10,400 files
            files = [(units, f"sglang-s{i}.service") for i in range(services)]
            files += [(envs, f"s{i}.env") for i in range(services)]
            files += [(host_fd, ".gen-managed"), (tools, "sglang-wait-ready")]
            for fd, name in files:
                _write(fd, name, direct)
            for fd in (units, envs, tools, host_fd):
                os.close(fd)
    finally:
        os.close(root_fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--direct", action="store_true", help="no temp file, fchmod or rename")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="write-floor-", dir=args.dir)) / "output"
    user0, sys0 = _cpu()
    start = time.perf_counter()
    write_tree(root, args.hosts, args.direct)
    mid = time.perf_counter()
    user1, sys1 = _cpu()
    os.sync()
    end = time.perf_counter()
    user2, sys2 = _cpu()
    print(f"{root}: writes {mid - start:.2f} s wall, {user1 - user0:.2f} user, {sys1 - sys0:.2f} system; "
          f"sync {end - mid:.2f} s wall, {sys2 - sys1:.2f} system")


if __name__ == "__main__":
    main()
