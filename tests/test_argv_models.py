"""plan/argv.py: services of one model get the model's arguments, while each service's own
fields and overrides stay its own (values and positions).
"""

from __future__ import annotations

from pathlib import Path

from repo_builder import host_yaml, model_yaml, write_repo

from generator.errors import Diagnostics
from generator.load.sources import load_sources
from generator.plan.argv import build_argv
from generator.plan.placement import place_host
from generator.sglang.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
MODEL = model_yaml("m", tp=2, extra="dtype: bfloat16\nargs:\n  --max-running-requests: 64\n  --log-level: info\n")


def test_services_share_the_model_args_and_keep_their_own(tmp_path: Path) -> None:
    write_repo(tmp_path, {
        "a": host_yaml("a", services="  - {name: s, model: m, port: 30000, gpus: [0, 1]}\n"),
        "b": host_yaml("b", services=("  - name: s\n    model: m\n    port: 30001\n    gpus: [0, 1]\n"
                                      "    args: {--max-running-requests: 8, --enable-metrics: true}\n")),
    }, {"m": MODEL})
    (tmp_path / "catalogs").symlink_to(ROOT / "catalogs")
    diags = Diagnostics()
    sources = load_sources(tmp_path, diags)
    catalog = load_catalog(ROOT, "0.5.9")
    built = {}
    for name in ("a", "b"):
        [p] = place_host(sources.hosts[name], sources.models, diags)
        built[name] = build_argv(p, "/opt/sglang/bin/python", catalog, diags)
    assert [str(d) for d in diags.items] == []
    a, b = ({g.words[0]: (g.words[1:], str(g.pos)) for g in built[n].groups} for n in ("a", "b"))
    assert a["--model-path"] == b["--model-path"] == (("/shared/models/m",), "models/m.yaml:2:17")
    assert a["--port"] == (("30000",), "hosts/a.yaml:20:31") and b["--port"][0] == ("30001",)
    assert b["--port"][1].startswith("hosts/b.yaml:")
    assert a["--max-running-requests"] == (("64",), "models/m.yaml:6:3")
    assert b["--max-running-requests"][0] == ("8",) and b["--max-running-requests"][1].startswith("hosts/b.yaml:")
    assert "--enable-metrics" in b and "--enable-metrics" not in a
    # The model's flags keep their order, the service's override in place, its own come last.
    assert [g.words[0] for g in built["b"].groups][-3:] == ["--max-running-requests", "--log-level", "--enable-metrics"]
