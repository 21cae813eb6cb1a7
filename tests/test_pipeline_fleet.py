"""The fleet path (pipeline.render_fleet): same answers as pipeline.run, for any jobs.

render_fleet loads and renders each host file on its own, in a process pool. None of that
may show: diagnostics (and their order), trees and the plan must equal run()'s, byte for byte.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.pipeline import fleet as pipeline
from generator.cli.main import main
from generator.pipeline.fleet import render_fleet, run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from fleet import make_fleet

BAD = Path(__file__).parent / "fixtures" / "bad"


def _same(fast: pipeline.RenderResult, slow: pipeline.RenderResult) -> None:
    assert [str(d) for d in fast.diagnostics] == [str(d) for d in slow.diagnostics]
    assert fast.diagnostics == slow.diagnostics
    assert fast.trees == slow.trees
    assert fast.changes == slow.changes


@pytest.fixture(scope="module")
def fleet_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12-host synthetic fleet (every layout of the benchmark, both pins): enough for the pool."""
    root = tmp_path_factory.mktemp("fleet")
    make_fleet(root, 12)
    return root


@pytest.fixture(scope="module")
def fleet_run(fleet_repo: Path) -> pipeline.RenderResult:
    """run() of the whole fleet, once for the module: the reference the fleet path must equal
    (the tests only compare with it; the fleet's files are never changed)."""
    return run(fleet_repo, None)


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_fleet_equals_run_for_any_jobs(fleet_repo: Path, fleet_run: pipeline.RenderResult, jobs: int) -> None:
    slow = fleet_run
    assert slow.ok and len(slow.trees) == 12
    _same(render_fleet(fleet_repo, None, jobs=jobs), slow)


def test_a_models_finding_is_reported_once_however_many_services_use_it(
        fleet_repo: Path, fleet_run: pipeline.RenderResult) -> None:
    # qwen3-8b's deprecated tool-call parser (X160) is found again for each of its services
    # on each pin; the report names the model's line once per distinct message.
    found = [d for d in fleet_run.diagnostics if d.code == "X160" and d.pos.path == "models/qwen3-8b.yaml"]
    assert sorted("0.5.23" in d.message for d in found) == [False, True]  # one per pin
    assert len(fleet_run.diagnostics) == len(set(fleet_run.diagnostics))
    users = sum(1 for h in fleet_run.hosts for s in h.services if s.model == "qwen3-8b")
    assert users > 2  # more services than reports: the duplicates were there to drop
    result = CliRunner().invoke(main, ["check", "--root", str(fleet_repo)])
    lines = [line for line in result.output.splitlines() if "models/qwen3-8b.yaml:15:14" in line]
    assert len(lines) == 2, result.output


def test_selected_hosts_equal_run(fleet_repo: Path, fleet_run: pipeline.RenderResult) -> None:
    names = ["gpu-0007", "gpu-0002"]
    _same(render_fleet(fleet_repo, names, jobs=2), run(fleet_repo, names))
    _same(render_fleet(fleet_repo, None, jobs=2), fleet_run)  # after a partial run
    with pytest.raises(pipeline.UnknownHostError, match="did you mean 'gpu-0007'"):
        render_fleet(fleet_repo, ["gpu-007"])


@pytest.mark.parametrize("case", sorted(p.name for p in BAD.iterdir() if p.is_dir()))
def test_bad_inputs_give_the_same_diagnostics(case: str, repo_copy: Path) -> None:
    for src in sorted((BAD / case).rglob("*")):
        if src.is_file():
            dest = repo_copy / src.relative_to(BAD / case)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    slow = run(repo_copy, None)
    assert slow.diagnostics, "a bad case must say something"
    for jobs in (1, 2):
        _same(render_fleet(repo_copy, None, jobs=jobs), slow)


def test_every_input_reaches_the_fleet_render(repo_copy: Path) -> None:
    _same(render_fleet(repo_copy, None), run(repo_copy, None))
    edits = [
        ("models/qwen3.5-122b-a10b.yaml", "mem_fraction_static: 0.85", "mem_fraction_static: 0.8"),
        ("hosts/llm-two.yaml", "port: 30000", "port: 30001"),
        ("templates/sglang.service.j2", "TimeoutStopSec=2min", "TimeoutStopSec=3min"),
        ("catalogs/renames.yaml", "\n", "\n# an edit\n"),
        # A multi-node peer: rank 0's address is in the other node's unit (--dist-init-addr).
        ("hosts/gpu-a.yaml", "address: 192.0.2.10", "address: 192.0.2.12"),  # not gpu-b's 192.0.2.11 (R017)
    ]
    for path, old, new in edits:
        target = repo_copy / path
        assert old in target.read_text(), path
        target.write_text(target.read_text().replace(old, new, 1))
        fast, slow = render_fleet(repo_copy, None), run(repo_copy, None)
        _same(fast, slow)
        assert path.startswith("catalogs/") or fast.dirty, f"an edit of {path} changed nothing"
    assert any(c.path.startswith("gpu-b/") for c in fast.dirty), "the peer's unit must change too"


def test_no_change_render_rewrites_nothing(fleet_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(fleet_repo, repo, ignore=shutil.ignore_patterns("output"))
    assert CliRunner().invoke(main, ["render", "--all", "--root", str(repo)]).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in (repo / "output").rglob("*") if p.is_file()}
    # -v lists unchanged files too; the last line is the summary.
    again = CliRunner().invoke(main, ["render", "--all", "--root", str(repo), "--jobs", "2", "-v"])
    assert again.exit_code == 0
    *files, summary = again.stdout.splitlines()
    assert {ln.split()[0] for ln in files} == {"unchanged"}
    assert summary.endswith(f" 0 created, 0 updated, {len(before)} unchanged, 0 removed")
    assert {p: p.stat().st_mtime_ns for p in (repo / "output").rglob("*") if p.is_file()} == before
    assert len(files) == len(before)  # every file listed, none written


def test_detail_runs_in_the_pool_equal_serial(fleet_repo: Path, fleet_run: pipeline.RenderResult) -> None:
    """verify/upgrade keep full renders; a pool of workers must give the same ones."""
    pooled = pipeline.run_fleet(fleet_repo, None, jobs=2, detail=True)
    serial = fleet_run
    _same(pooled, serial)
    assert [r.tree for r in pooled.renders] == pooled.trees == serial.trees
    assert [h.name for h in pooled.hosts] == [h.name for h in serial.hosts] and len(pooled.hosts) == 12


def test_a_peer_file_renamed_to_yml_is_named_in_the_unit(repo_copy: Path) -> None:
    """The peer's displayed path is in gpu-b's unit header: the same bytes under another name show it."""
    _same(render_fleet(repo_copy, None), run(repo_copy, None))
    (repo_copy / "hosts/gpu-a.yaml").rename(repo_copy / "hosts/gpu-a.yml")
    fast, slow = render_fleet(repo_copy, None), run(repo_copy, None)
    _same(fast, slow)
    [unit] = [f.text for t in fast.trees if t.host == "gpu-b" for f in t.files if f.relpath.endswith(".service")]
    assert "hosts/gpu-a.yml" in unit


def test_same_address_check_sees_every_host_and_a_file_that_failed_its_schema(tmp_path: Path) -> None:
    """R011 takes each loaded host's ssh target from its outcome, and parses a file that
    failed to load on its own, so the answer is run()'s."""
    repo = tmp_path / "repo"
    make_fleet(repo, 3)
    first = repo / "hosts" / "gpu-0001.yaml"
    first.write_text(first.read_text().replace("gpu-0001.fleet.invalid", "gpu-0000.fleet.invalid"))
    broken = repo / "hosts" / "gpu-0002.yaml"
    broken.write_text(broken.read_text().replace("gpu-0002.fleet.invalid", "GPU-0000.fleet.invalid.")
                      + "no_such_field: 1\n")
    slow = run(repo, None)
    r011 = sorted(d.pos.path for d in slow.diagnostics if d.code == "R011")
    # Each of the three files collides with both others: two findings per file.
    assert r011 == ["hosts/gpu-0000.yaml"] * 2 + ["hosts/gpu-0001.yaml"] * 2 + ["hosts/gpu-0002.yaml"] * 2
    _same(render_fleet(repo, None), slow)


def test_collector_threshold_raised_for_the_host_loop_only(fleet_repo: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The host loop runs with the larger young-generation threshold (workers inherit it at
    fork); the caller's own setting is back afterwards, also when a host raised."""
    import gc

    seen: list[int] = []
    real = pipeline._process_chunk

    def spy(work: list) -> list:
        seen.append(gc.get_threshold()[0])
        return real(work)

    before = gc.get_threshold()
    monkeypatch.setattr(pipeline, "_process_chunk", spy)
    run(fleet_repo, None)
    assert seen and all(t >= pipeline.GC_YOUNG_THRESHOLD for t in seen)
    assert gc.get_threshold() == before

    def boom(work: list) -> list:
        raise RuntimeError("host failed")

    monkeypatch.setattr(pipeline, "_process_chunk", boom)
    with pytest.raises(RuntimeError):
        run(fleet_repo, None)
    assert gc.get_threshold() == before
