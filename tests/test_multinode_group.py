"""A multi-node group is loaded and placed once per group, not once per member (issue 22 item 10).

Each member's render compared itself with every other node, and loaded and placed every
peer again to do so: n**2 host documents for a group of n (256 hosts took 51 s;
bench/multinode.py measures it). Counted here, structurally, and the findings are the
ones each member's own render gives when it loads its peers by itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from generator.errors import Diagnostic
from generator.load import sources as sources_module
from generator.load.files import host_file_index, source_files
from generator.load.sources import load_models
from generator.pipeline import host as host_module
from generator.pipeline.fleet import run_fleet
from generator.plan import cluster as cluster_module

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from multinode import make_group  # noqa: E402  (the benchmark's own repository)

N = 12


@pytest.fixture
def group(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_group(root, N)
    return root


def test_each_member_is_loaded_once(group: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []
    real = sources_module.load_document

    def counted(sf, *args, **kwargs):  # type: ignore[no-untyped-def]
        loaded.append(sf.display)
        return real(sf, *args, **kwargs)

    monkeypatch.setattr(sources_module, "load_document", counted)
    result = run_fleet(group, None, jobs=1)
    assert result.ok, result.diagnostics
    hosts = [d for d in loaded if d.startswith("hosts/")]
    assert sorted(hosts) == sorted(f"hosts/node-{i:04d}.yaml" for i in range(N))  # n, not n**2


def test_each_node_is_placed_a_bounded_number_of_times(group: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    placed: list[str] = []
    real = cluster_module.place_host

    def counted(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        placed.append(host.name)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(cluster_module, "place_host", counted)  # placing a peer to compare with it
    monkeypatch.setattr(host_module, "place_host", counted)     # placing a member for its own render
    assert run_fleet(group, None, jobs=1).ok
    assert {name: placed.count(name) for name in set(placed)} == {f"node-{i:04d}": 2 for i in range(N)}


def _spoil(root: Path) -> None:
    """One node passes another flag, one another variable, one runs another pin."""
    def edit(i: int, old: str, new: str) -> None:
        path = root / "hosts" / f"node-{i:04d}.yaml"
        path.write_text(path.read_text().replace(old, new, 1))

    edit(3, "    listen: 127.0.0.1\n", "    listen: 127.0.0.1\n    args: {--max-running-requests: 8}\n")
    edit(5, "    listen: 127.0.0.1\n", "    listen: 127.0.0.1\n    env: {NCCL_DEBUG: INFO}\n")
    edit(7, 'pin: "0.5.9"', 'pin: "0.5.23"')
    edit(9, "gpus:\n", "gpus: []\nold_gpus:\n")  # an invalid inventory: P023 at the others


def test_findings_are_each_members_own(group: Path) -> None:
    """The oracle: each member processed alone, loading its peers itself (the per-host way)."""
    _spoil(group)
    fleet = run_fleet(group, None, jobs=1)
    models = load_models(group)
    files = source_files(group, "hosts")
    index = host_file_index(files)
    alone: list[Diagnostic] = list(models.diagnostics)
    for sf in files:
        peers = {n: index.get(n) for n in models.peer_names(sf.stem) if n != sf.stem}
        outcome = host_module.process_host(group, sf, models, peers)
        alone += [*outcome.load, *outcome.render]
    ordered = sorted(dict.fromkeys(alone), key=Diagnostic.sort_key)
    assert fleet.diagnostics == ordered
    codes = {d.code for d in fleet.diagnostics}
    assert {"P027", "P028", "P029", "P023"} <= codes, codes


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_group_among_other_hosts_in_a_pool(group: Path, jobs: int) -> None:
    """Singles and the group side by side, in one process or a pool: the same trees."""
    example = Path(__file__).resolve().parent.parent
    for name in ("llm-two", "llm-two-full"):
        (group / "hosts" / f"{name}.yaml").write_text((example / "hosts" / f"{name}.yaml").read_text())
    for name in ("qwen3.5-122b-a10b", "kimi-k2.5-eagle3"):
        (group / "models" / f"{name}.yaml").write_text((example / "models" / f"{name}.yaml").read_text())
    serial = run_fleet(group, None, jobs=1)
    pooled = run_fleet(group, None, jobs=jobs)
    assert serial.ok and pooled.diagnostics == serial.diagnostics
    assert [t.host for t in pooled.trees] == [t.host for t in serial.trees] and pooled.trees == serial.trees
    assert len(serial.trees) == N + 2
