"""The per-host pipeline (generator/pipeline/host.py) and what every command gets from it.

* peers are loaded with the host (generator/load/sources.py): planning reads no file;
* ``--host H`` selects ``hosts/H.yaml`` by its file name, so H's own errors are shown;
* the commands that keep full renders (verify, upgrade) and the cached fleet path agree.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from generator.cli.main import main
from generator.errors import Diagnostics
from generator.load.files import host_file_index
from generator.load.sources import load_host, load_models, source_files
from generator.pipeline.fleet import render_fleet, run_fleet
from generator.emit.templates import read_templates
from generator.pipeline.host import plan_host, process_host
from generator.emit.render import render_host


def _sources(root: Path, name: str):  # noqa: ANN202 - a HostSources
    files = source_files(root, "hosts")
    index = host_file_index(files)
    models = load_models(root)
    peers = {n: index.get(n) for n in models.peer_names(name) if n != name}
    return load_host(root, index[name], models, peers, Diagnostics()), models, index, peers


def test_peers_come_from_loading_and_planning_reads_no_file(repo_copy: Path) -> None:
    sources, models, index, peers = _sources(repo_copy, "gpu-b")
    assert sources is not None and set(sources.peers) == {"gpu-a"}
    assert sources.peer("gpu-a").host is not None and sources.peer("gpu-a").host.name == "gpu-a"
    templates = read_templates(repo_copy)
    before = render_host(plan_host(sources, Diagnostics()), templates).tree
    # Every host file gone: planning and rendering only use what loading handed over.
    for path in (repo_copy / "hosts").iterdir():
        path.unlink()
    diags = Diagnostics()
    planned = plan_host(sources, diags)
    assert planned is not None and not diags.items
    assert render_host(planned, templates).tree == before
    unit = next(f.text for f in before.files if f.relpath.endswith(".service"))
    assert "--dist-init-addr 192.0.2.10:50000" in unit and "--node-rank 1" in unit


def test_process_host_without_peer_file_reports_it(repo_copy: Path) -> None:
    _, models, index, _ = _sources(repo_copy, "gpu-b")
    outcome = process_host(repo_copy, index["gpu-b"], models, {"gpu-a": None})
    assert outcome.tree is None and outcome.rendered
    assert any(d.code == "P023" and "hosts/gpu-a.yaml does not exist" in d.message for d in outcome.render)


def test_render_host_with_an_error_shows_its_own_diagnostics(repo_copy: Path) -> None:
    host = repo_copy / "hosts/llm-two.yaml"
    host.write_text(host.read_text().replace("port: 30000", 'port: "x"', 1))
    r = CliRunner().invoke(main, ["render", "--host", "llm-two", "--root", str(repo_copy)])
    assert r.exit_code == 1, r.stderr
    assert "no host" not in r.stderr
    assert "hosts/llm-two.yaml:37:11: error[S002]: 'services[0].port' must be an integer, got str 'x'" in r.stderr


def test_render_host_with_a_yaml_error_and_a_wrong_name(repo_copy: Path) -> None:
    broken = repo_copy / "hosts/llm-two.yaml"
    broken.write_text(broken.read_text() + "  : [unclosed\n")
    renamed = repo_copy / "hosts/llm-two-full.yaml"
    renamed.write_text(renamed.read_text().replace("name: llm-two-full", "name: other", 1))
    for name, code in (("llm-two", "Y021"), ("llm-two-full", "R003")):
        r = CliRunner().invoke(main, ["render", "--host", name, "--root", str(repo_copy)])
        assert r.exit_code == 1 and f"error[{code}]" in r.stderr and "no host" not in r.stderr, r.stderr


def test_detail_runs_and_fleet_runs_give_the_same_result(repo_copy: Path) -> None:
    detail = run_fleet(repo_copy, None, detail=True)
    fleet = render_fleet(repo_copy, None)
    assert detail.trees == fleet.trees and detail.changes == fleet.changes
    assert detail.diagnostics == fleet.diagnostics
    assert [r.tree for r in detail.renders] == detail.trees
    assert [h.name for h in detail.hosts] == ["gpu-a", "gpu-b", "llm-two", "llm-two-full"]
    assert not fleet.renders and not fleet.hosts
