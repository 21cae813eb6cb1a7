"""The digest of a host's ``output/<host>/`` tree: recorded by ``gen ansible``, checked by the playbook.

``gen ansible`` writes each host's digest into the inventory (``gen_digest``); the
playbook's first task runs a copy of this file (``ansible/gen-digest.py``) on the
controller, before any host is reached, and stops the run when a tree changed since:
``gen render`` run and ``gen ansible`` forgotten would otherwise roll out files the
playbook's plan (services, batches, preflight) was not written for.

Standalone, standard library only (the controller's Python runs the copy). The digest is
sha256 over one line per entry of the tree in path order: ``<sha256 of the bytes>
<relative path>`` for a regular file, ``link <relative path>`` or ``other <relative
path>`` for anything else (never followed). The path is written as a JSON string, so a
name holding a line break (or any other byte) is one line and never reads as another
entry: a file named ``"f\\n<sha256> g"`` would otherwise digest as the two files ``f`` and
``g``. A missing tree is ``absent``.

Usage of the copy: ``gen-digest.py check OUTPUT_DIR`` with ``{"host": "digest", ...}`` on
stdin; prints what differs and exits 1, or exits 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys

ABSENT = "absent"


CHUNK = 1 << 20  # files are hashed in parts: a large file is never read whole


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for part in iter(lambda: handle.read(CHUNK), b""):
            digest.update(part)
    return digest.hexdigest()


def _entries(top: str) -> list:
    out = []
    for folder, dirs, files in os.walk(top):  # os.walk never follows a link to a folder
        dirs.sort()
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, top)
            quoted = json.dumps(rel)  # one line whatever the name holds (\n, \udcxx for undecodable bytes)
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                continue
            if stat.S_ISREG(mode):
                out.append((rel, f"{_file_sha256(path)} {quoted}"))
            elif stat.S_ISLNK(mode):
                out.append((rel, f"link {quoted}"))
            else:
                out.append((rel, f"other {quoted}"))
    return [line for _, line in sorted(out)]


def tree_digest(top: str) -> str:
    """``sha256:<hex>`` of the tree at TOP (see the module docstring), or ``absent``."""
    if not os.path.isdir(top) or os.path.islink(top):
        return ABSENT
    text = "".join(line + "\n" for line in _entries(top))
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def stale_hosts(output_dir: str, recorded: dict) -> list:
    """(host, recorded, now) for each host whose tree's digest is not the recorded one."""
    out = []
    for host in sorted(recorded):
        now = tree_digest(os.path.join(output_dir, host))
        if now != recorded[host]:
            out.append((host, recorded[host], now))
    return out


def main(argv: list) -> int:
    """``check OUTPUT_DIR`` (recorded digests as JSON on stdin): exit 1 and say which trees changed."""
    if len(argv) != 2 or argv[0] != "check":
        print("usage: gen-digest.py check OUTPUT_DIR < digests.json", file=sys.stderr)
        return 2
    stale = stale_hosts(argv[1], json.load(sys.stdin))
    if not stale:
        print("output/ is what ansible/ was written from")
        return 0
    names = ", ".join(host for host, _, _ in stale)
    print(f"ansible/ is stale: output/ of {names} changed since `gen ansible` wrote this playbook; "
          "nothing was touched. Run `gen ansible` (after `gen render --all`), review, then run the "
          "playbook again.")
    for host, before, now in stale:
        print(f"  output/{host}/: recorded {before}, now {now}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
