"""Keep checking a document whose only schema errors sit on leaves nothing structural needs.

A wrong-typed ``weights.size_gb`` used to drop its whole model, and with it every
placement, flag and rule check of the services that run it (issue 13 item 4). When each
schema error of a document is on one of the leaves listed here, :func:`taint` takes those
leaves out of a copy of the data and records them in ``Document.dropped``: the document
then resolves as if they were not written, its errors stay reported, and the checks that
would read a dropped value skip themselves (placement's memory check: no P030-P033 from a
size or fraction that is not known). A tainted document is never rendered
(generator/pipeline/host.py), and a run with errors writes nothing anyway.

Only leaves whose absence cannot create a finding are listed: none of them changes the
GPU count, the flags a rule reads, or a name. A wrong ``parallel.tp`` still drops the
model, since tp 1 in its place would report a false P004.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from generator.load.manifests import Document, DocPath
from generator.load.schema import error_paths

# "*" stands for any list index.
TAINTABLE: dict[str, frozenset[DocPath]] = {
    "model": frozenset({
        ("description",),
        ("weights", "size_gb"),  # read by the memory check only (skipped) and the unit timeout
        ("weights", "shards"),
        ("weights", "params_b"),
        ("weights", "active_params_b"),
        ("weights", "quantization"),  # informational (F105 only)
        ("memory", "mem_fraction_static"),  # the memory check is skipped; no flag is rendered
        # Read only by gen ansible's rollout plan (never rendered into a unit).
        ("rollout", "canary"),
        ("rollout", "batch"),
        ("rollout", "max_fail_percentage"),
        ("rollout", "max_unavailable"),
    }),
    "host": frozenset({
        ("description",),
        ("gpus", "*", "model"),  # the GPU's product name: informational
        ("gpus", "*", "compute_cap"),  # not known: the GPU checks stay silent, as without it
    }),
}


def _matches(path: DocPath, pattern: DocPath) -> bool:
    return len(path) == len(pattern) and all(
        p == "*" and isinstance(step, int) or p == step for step, p in zip(path, pattern, strict=True))


def taintable(path: DocPath, kind: str) -> bool:
    """True when the leaf at ``path`` of a ``kind`` document may be dropped (see module doc)."""
    return any(_matches(path, pattern) for pattern in TAINTABLE.get(kind, ()))


def _remove(data: Any, path: DocPath) -> None:
    node = data
    for step in path[:-1]:
        node = node[step]
    if isinstance(node, dict):
        node.pop(path[-1], None)  # a missing required leaf is simply absent


def taint(doc: Document, schema: dict[str, Any], kind: str) -> Document | None:
    """``doc`` without its invalid leaves, or None when any error is not on a taintable leaf.

    Call it only for a document whose strings were clean and whose validation failed
    (validate() has reported every error already).
    """
    paths = error_paths(doc, schema)
    if not paths or not all(taintable(p, kind) for p in paths):
        return None
    data = copy.deepcopy(doc.data)
    for path in paths:
        _remove(data, path)
    return replace(doc, data=data, dropped=frozenset(paths))
