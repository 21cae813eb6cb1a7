"""A checkpoint folder on a host against the model's snapshot: same files, same shards.

``gen verify`` (``checks/weights.py``) and ``gen preflight`` both read a folder with the
on-host script's ``check_weights`` (sizes from each shard's header, SHA-256 of config.json,
the index and generation_config.json) and compare here: a small file changed or gone, a
shard the snapshot names missing from the host's index, or one the snapshot does not name,
each fails naming the file.
"""

from __future__ import annotations

from typing import Any

from generator.live.plan import CheckpointExpect


def compare_snapshot(found: dict[str, Any], expect: CheckpointExpect) -> list[str]:
    """Problems of a checked folder (``check_weights``' result) against the snapshot."""
    problems = []
    hashes = found.get("hashes") or {}
    where = expect.snapshot
    for name, sha in expect.files:
        got = hashes.get(name)
        if got is None:
            problems.append(f"{name}: missing (or not a regular file); {where} hashed it")
        elif got != sha:
            problems.append(f"{name}: changed since {where} was captured (sha256 {got[:12]}..., snapshot "
                            f"{sha[:12]}...): restore the file, or re-capture with `gen model snapshot`")
    listed = {s["file"] for s in found.get("shards") or []}
    if expect.shards and listed:
        problems += [f"{n}: named by {where} but not by the host's index" for n in sorted(set(expect.shards) - listed)]
        problems += [f"{n}: on the host's index but not in {where}" for n in sorted(listed - set(expect.shards))]
    return problems


def snapshot_detail(folder: str, expect: CheckpointExpect, problems: list[str]) -> str:
    """The one-line detail of the comparison's result."""
    return f"{folder} is the checkpoint {expect.snapshot} describes" if not problems else f"{folder}: {problems[0]}"
