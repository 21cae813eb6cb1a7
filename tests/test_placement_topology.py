"""Placement with the host's link matrix (facts.topology): best-joined GPUs first, P040 when a group
crosses the CPU interconnect while a better-joined set is free; without a matrix, as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from nvidia_smi_outputs import TOPO_8X4090_PCIE, TOPO_8XH100_NV18
from repo_builder import host_yaml, model_yaml, write_repo

from generator.errors import Diagnostics
from generator.live.facts import parse_topology
from generator.load.resolve import Gpu, Topology
from generator.load.sources import load_sources
from generator.plan.placement import Placement, place_host
from generator.plan.topology import best_group, group_score, link_rank, worst_link


def _matrix_yaml(links: list[list[str]]) -> str:
    rows = "".join(f"      - [{', '.join(r)}]\n" for r in links)
    return f"facts:\n  topology:\n    gpus: [{', '.join(str(i) for i in range(len(links)))}]\n    links:\n{rows}"


def _place(tmp_path: Path, services: str, models: dict[str, str], links: list[list[str]] | None,
           **host_kw: object) -> tuple[tuple[Placement, ...], list[str]]:
    text = host_yaml(services="", **host_kw) + (_matrix_yaml(links) if links else "")
    write_repo(tmp_path, {"h": text + "services:\n" + services}, models)
    diags = Diagnostics()
    sources = load_sources(tmp_path, diags)
    placed = place_host(sources.hosts["h"], sources.models, diags) if "h" in sources.hosts else ()
    return placed, [f"{d.code}: {d.message}" for d in diags.sorted()]


def _from_topo(text: str) -> list[list[str]]:
    matrix = parse_topology(text)
    return [[matrix[a][b] for b in sorted(matrix)] for a in sorted(matrix)]


# Two sockets of four GPUs; on each socket GPUs 2-3 (6-7) share one PCIe switch, the rest a root port each.
SWITCHED = [["X" if a == b else ("SYS" if (a < 4) != (b < 4) else ("PIX" if {a % 4, b % 4} == {2, 3} else "NODE"))
             for b in range(8)] for a in range(8)]


def test_without_a_matrix_the_lowest_indexes_as_before(tmp_path: Path) -> None:
    placed, errors = _place(tmp_path, "  - {name: a, model: m2, port: 1}\n", {"m2": model_yaml("m2", tp=2)}, None)
    assert errors == [] and placed[0].cuda_visible_devices == "0,1"


def test_a_pair_under_one_pcie_switch_is_taken_before_two_root_ports(tmp_path: Path) -> None:
    placed, errors = _place(tmp_path, "  - {name: a, model: m2, port: 1}\n", {"m2": model_yaml("m2", tp=2)}, SWITCHED)
    assert errors == [] and placed[0].cuda_visible_devices == "2,3"


def test_services_planned_together_each_get_the_best_of_their_node(tmp_path: Path) -> None:
    svc = "  - {name: a, model: m2, port: 1}\n  - {name: b, model: m2, port: 2}\n  - {name: c, model: m4, port: 3}\n"
    placed, errors = _place(tmp_path, svc, {"m2": model_yaml("m2", tp=2), "m4": model_yaml("m4", tp=4)}, SWITCHED)
    assert errors == []
    # the NUMA plan puts a and b on one node, c on the other; a takes the switched pair
    assert [(p.service.name, p.cuda_visible_devices) for p in placed] == [("a", "2,3"), ("b", "0,1"), ("c", "4,5,6,7")]


def test_a_group_that_must_cross_sockets_takes_nvlink_and_no_warning(tmp_path: Path) -> None:
    links = _from_topo(TOPO_8XH100_NV18)
    svc = "  - {name: a, model: m6, port: 1, allow_cross_numa: true}\n"
    placed, errors = _place(tmp_path, svc, {"m6": model_yaml("m6", tp=6)}, links)
    assert errors == [] and placed[0].numa_nodes == (0, 1)


def test_tp8_over_a_pcie_dual_socket_box_must_cross_and_is_not_warned(tmp_path: Path) -> None:
    links = _from_topo(TOPO_8X4090_PCIE)  # every pair is SYS there: no better set exists
    svc = "  - {name: a, model: m8, port: 1, allow_cross_numa: true}\n"
    _, errors = _place(tmp_path, svc, {"m8": model_yaml("m8", tp=8)}, links)
    assert errors == []


def test_an_explicit_group_across_sockets_is_warned_when_a_better_one_is_free(tmp_path: Path) -> None:
    svc = "  - {name: a, model: m2, port: 1, gpus: [0, 4], allow_cross_numa: true}\n"
    _, errors = _place(tmp_path, svc, {"m2": model_yaml("m2", tp=2)}, SWITCHED)
    assert errors == ["P040: the GPUs of service 'a' (0, 4) cross the CPU interconnect (SYS in the link matrix), "
                      "but free GPUs 2, 3 are joined by PIX at worst"]


def test_an_explicit_group_across_sockets_when_nothing_better_is_free(tmp_path: Path) -> None:
    svc = ("  - {name: x, model: m3, port: 1, gpus: [0, 1, 2]}\n  - {name: z, model: m3, port: 2, gpus: [5, 6, 7]}\n"
           "  - {name: a, model: m2, port: 3, gpus: [3, 4], allow_cross_numa: true}\n")
    _, errors = _place(tmp_path, svc, {"m2": model_yaml("m2", tp=2), "m3": model_yaml("m3", tp=3)}, SWITCHED)
    assert errors == []


def test_an_automatic_group_left_to_cross_sockets_is_not_warned(tmp_path: Path) -> None:
    """x spans both sockets while a socket's four were free (P040 for x); the automatic group then
    must cross on the GPUs left, and no better set is free for it."""
    svc = ("  - {name: x, model: m4, port: 1, gpus: [0, 1, 4, 5], allow_cross_numa: true}\n"
           "  - {name: a, model: m4, port: 2, allow_cross_numa: true}\n")
    placed, errors = _place(tmp_path, svc, {"m4": model_yaml("m4", tp=4)}, SWITCHED)
    assert errors == ["P040: the GPUs of service 'x' (0, 1, 4, 5) cross the CPU interconnect (SYS in the link "
                      "matrix), but free GPUs 0, 1, 2, 3 are joined by NODE at worst"]
    assert placed[1].cuda_visible_devices == "2,3,6,7"


def _gpus(n: int) -> list[Gpu]:
    return [Gpu(i, f"00000000:{i + 1:02X}:00.0", 96.0, 0 if i < n // 2 else 1) for i in range(n)]


def test_link_ranks_follow_the_legend() -> None:
    order = ["NV18", "NV12", "NV2", "PIX", "PXB", "PHB", "NODE", "SYS"]
    assert sorted(order, key=link_rank) == order
    assert link_rank(None) == link_rank("SYS")


def test_the_best_group_is_the_best_of_every_subset() -> None:
    """The exhaustive choice and the greedy one agree on the real 8x H100 matrix and the switched box."""
    for links in (_from_topo(TOPO_8XH100_NV18), SWITCHED):
        topo = Topology(tuple(range(8)), tuple(tuple(r) for r in links))
        gpus = _gpus(8)
        for count in range(1, 9):
            group = best_group(gpus, count, topo)
            assert group is not None and len(group) == count
            assert worst_link(group, topo) in (None, "NV18", "PIX", "NODE", "SYS")
    topo = Topology(tuple(range(8)), tuple(tuple(r) for r in SWITCHED))
    assert [g.index for g in best_group(_gpus(8), 4, topo) or ()] == [0, 1, 2, 3]
    assert group_score(_gpus(8)[2:4], topo) < group_score(_gpus(8)[0:2], topo)


@pytest.mark.parametrize("count", [3, 6])
def test_the_greedy_growth_beyond_the_subset_limit(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    from generator.plan import topology

    topo = Topology(tuple(range(8)), tuple(tuple(r) for r in SWITCHED))
    exhaustive = best_group(_gpus(8), count, topo)
    monkeypatch.setattr(topology, "MAX_SUBSETS", 1)
    greedy = best_group(_gpus(8), count, topo)
    assert greedy is not None and worst_link(greedy, topo) == worst_link(exhaustive or (), topo)


def test_the_better_set_is_one_no_other_service_lists(tmp_path: Path) -> None:
    """GPUs 2-3 are free when 'a' is placed, but 'b' lists them: the warning points at 6-7."""
    svc = ("  - {name: a, model: m2, port: 1, gpus: [0, 4], allow_cross_numa: true}\n"
           "  - {name: b, model: m2, port: 2, gpus: [2, 3]}\n")
    _, errors = _place(tmp_path, svc, {"m2": model_yaml("m2", tp=2)}, SWITCHED)
    assert errors == ["P040: the GPUs of service 'a' (0, 4) cross the CPU interconnect (SYS in the link matrix), "
                      "but free GPUs 6, 7 are joined by PIX at worst"]
