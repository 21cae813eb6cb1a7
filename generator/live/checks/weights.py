"""Model weights: every shard the safetensors index names is on the host, at full size, and
the folder is the checkpoint the model's snapshot describes.

Sizes come from each shard's own header (8-byte little-endian length, JSON header,
largest data end offset), so a download cut short is caught without hashing 234 GB. With a
snapshot (catalogs/models/<model>.json) config.json, the index and generation_config.json
must have the hashes it recorded and the index must name the same shards (``snapshot``
results, the draft's too): a changed or incomplete checkpoint fails, naming the file.
"""

from __future__ import annotations

from generator.live.context import HostContext
from generator.live.checkpoint_compare import compare_snapshot, snapshot_detail
from generator.live.plan import CheckpointExpect
from generator.live.remote import RemoteError, onhost
from generator.live.results import CheckResult, result


def run(ctx: HostContext) -> list[CheckResult]:
    """One result per service and checkpoint folder (model, and drafter if any)."""
    folders: list[tuple[str, str, str]] = []
    expects: list[CheckpointExpect | None] = []
    for svc in ctx.plan.services:
        folders.append((svc.name, "weights", svc.model_path))
        expects.append(svc.model_expect)
        if svc.draft_path:
            folders.append((svc.name, "draft-weights", svc.draft_path))
            expects.append(svc.draft_expect)
    if not folders:
        return []
    try:
        found = onhost(ctx.host, ctx.plan.python, "weights", *[f for _, _, f in folders])
    except RemoteError as exc:
        return [result(False, ctx.plan.name, name, check, f"cannot check {folder}", str(exc))
                for name, check, folder in folders]
    out = []
    for (name, check, folder), info, expect in zip(folders, found, expects, strict=True):
        problems = info["problems"]
        shards = info["shards"]
        total = sum(s.get("size", 0) for s in shards)
        out.append(result(not problems, ctx.plan.name, name, check,
                          f"{folder}: {len(shards)} shard(s), {total} bytes, all complete" if not problems else
                          f"{folder}: {len(problems)} problem(s), e.g. {problems[0]}", "\n".join(problems)))
        if expect is not None and info.get("exists"):
            differs = compare_snapshot(info, expect)
            out.append(result(not differs, ctx.plan.name, name, f"{check}-snapshot",
                              snapshot_detail(folder, expect, differs), "\n".join(differs)))
    return out
