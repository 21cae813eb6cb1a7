"""The ``weights`` part of a snapshot, from what the reader read: sizes, dtypes, tensor names.

The reader (:mod:`generator.checkpoint.reader`, which also runs on hosts) returns the index
as parsed and each shard header; this works out, the same for every source, the shards'
sizes and hashes, bytes and elements per dtype, ``total_size`` (the index's, else the
headers' sum), the tensor names as templates (:mod:`generator.checkpoint.names`), and the
consistency problems (M003): a shard lacking tensors the index names, an index total_size
the shards do not hold.
"""

from __future__ import annotations

from typing import Any

from generator.checkpoint.names import compact_names
from generator.checkpoint.reader import DTYPE_BYTES, INCOMPLETE, INDEX, Problem


def weight_facts(index: dict[str, Any] | None, headers: dict[str, Any], shard_names: list[str],
                 problems: list[dict[str, Any]], index_name: str = INDEX) -> dict[str, Any]:
    """The ``weights`` part of the facts, from the index (may be None) and the shard headers read."""
    weights: dict[str, Any] = {"format": "safetensors", "index": index_name if index is not None else None,
                     "total_size": None, "total_parameters": None}
    names: list[str] = []
    if index is not None:
        found_meta = index.get("metadata")
        meta: dict[str, Any] = found_meta if isinstance(found_meta, dict) else {}
        for key in ("total_size", "total_parameters"):
            value = meta.get(key)
            weights[key] = int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        names = sorted(index["weight_map"])
    shards = []
    dtypes: dict[str, dict[str, int]] = {}
    complete = True
    for shard in shard_names:
        found = headers.get(shard)
        entry: dict[str, Any] = {"file": shard, "bytes": None, "header_sha256": None, "tensors": None}
        if found is None:
            complete = False
        else:
            entry.update(bytes=found.get("bytes"), header_sha256=found["header_sha256"],
                         tensors=len(found["tensors"]))
            for dtype, elements in found["tensors"].values():
                d = dtypes.setdefault(dtype, {"tensors": 0, "elements": 0, "bytes": 0})
                d["tensors"] += 1
                d["elements"] += elements
                d["bytes"] += int(elements * DTYPE_BYTES[dtype])
            if index is None:
                names.extend(found["tensors"])
        shards.append(entry)
    if index is not None and complete and headers:
        listed: dict[str, set[str]] = {}
        for tensor, shard in index["weight_map"].items():
            listed.setdefault(shard, set()).add(tensor)
        for shard in shard_names:
            lacking = sorted(listed.get(shard, set()) - set(headers[shard]["tensors"]))
            if lacking:
                problems.append(Problem(shard, f"lacks {len(lacking)} tensor(s) the index names, e.g. "
                                        f"{lacking[0]!r} (a shard from another save?)", code=INCOMPLETE).as_dict())
        total = sum(d["bytes"] for d in dtypes.values())
        if weights["total_size"] is not None and weights["total_size"] != total:
            problems.append(Problem(index_name, f"says total_size {weights['total_size']} but the shards' "
                                    f"tensors hold {total} bytes", code=INCOMPLETE).as_dict())
    weights["shards"] = shards
    weights["dtypes"] = {k: dtypes[k] for k in sorted(dtypes)} if complete and dtypes else None
    if weights["total_size"] is None and weights["dtypes"] is not None:
        weights["total_size"] = sum(d["bytes"] for d in dtypes.values())
    weights["tensor_count"] = len(set(names))
    weights["tensor_names"] = compact_names(set(names))
    return weights
