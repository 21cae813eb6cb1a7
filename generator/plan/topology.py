"""How well a set of GPUs is joined, by the host's link matrix (``facts.topology``, `nvidia-smi topo -m`).

A tensor-parallel group all-reduces over its slowest link, so a group is ranked by its
worst pair first: NVLink (``NV<n>``), then one PCIe switch (``PIX``), several switches
(``PXB``), one host bridge (``PHB``), host bridges of one NUMA node (``NODE``), and last
the interconnect between CPU sockets (``SYS``). Ties go to the group on fewer NUMA
nodes, then to the smaller sum over all pairs (more bonded NVLinks count as better),
then to the lowest GPU indexes, so the choice is deterministic.

Without a matrix nothing here is used and placement is what it was.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from generator.load.resolve import Gpu, Topology

_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
CROSS_SOCKET = "SYS"
# Groups scored exhaustively up to this many subsets (C(16, 8) = 12,870); beyond, a greedy growth.
MAX_SUBSETS = 20_000


def link_rank(link: str | None) -> tuple[int, int]:
    """(rank, -NVLinks) of one link: lower is better; an unknown link counts as SYS."""
    if link is not None and link.startswith("NV"):
        return 0, -int(link[2:])
    return _RANK.get(link or CROSS_SOCKET, _RANK[CROSS_SOCKET]), 0


def worst_link(gpus: Sequence[Gpu], topo: Topology) -> str | None:
    """The slowest link between two GPUs of the group (None for a single GPU)."""
    pairs = [topo.link(a.index, b.index) or CROSS_SOCKET for a, b in itertools.combinations(gpus, 2)]
    return max(pairs, key=link_rank) if pairs else None


def group_score(gpus: Sequence[Gpu], topo: Topology) -> tuple[tuple[int, int], int, tuple[int, int], tuple[int, ...]]:
    """The ranking key of a group (lower is better): worst link, NUMA nodes, sum of links, indexes."""
    ranks = [link_rank(topo.link(a.index, b.index)) for a, b in itertools.combinations(gpus, 2)]
    worst = max(ranks) if ranks else (0, 0)
    total = (sum(r[0] for r in ranks), sum(r[1] for r in ranks))
    return worst, len({g.numa_node for g in gpus}), total, tuple(sorted(g.index for g in gpus))


def best_group(free: Sequence[Gpu], count: int, topo: Topology) -> tuple[Gpu, ...] | None:
    """The best-joined ``count`` GPUs of ``free`` (index order), or None when too few are free."""
    if count > len(free):
        return None
    pool = sorted(free, key=lambda g: g.index)
    if math.comb(len(pool), count) <= MAX_SUBSETS:
        return min(itertools.combinations(pool, count), key=lambda group: group_score(group, topo))
    # Too many subsets: grow from each GPU, adding the one that keeps the group best joined.
    best: tuple[Gpu, ...] | None = None
    for seed in pool:
        group = [seed]
        while len(group) < count:
            group.append(min((g for g in pool if g not in group), key=lambda g: group_score([*group, g], topo)))
        candidate = tuple(sorted(group, key=lambda g: g.index))
        if best is None or group_score(candidate, topo) < group_score(best, topo):
            best = candidate
    return best
