"""Render what ``gen import`` printed: its REQUIRED values filled in, on a host of the pin, through gen check's pipeline.

Used by the import corpus test and the given-twice test: ``checked_render`` writes the
manifest (REQUIRED values filled in as its comments ask) and a host of the pin into a
repository, runs the same pipeline as ``gen check`` and fails the test on any error, and
returns the argv the service renders (after the program).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from repo_builder import host_yaml, write_repo
from ruamel.yaml import YAML

from generator.errors import Diagnostics
from generator.load.manifests import load_text
from generator.pipeline.fleet import run

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = {"name", "description", "weights", "served_model_name", "dtype", "trust_remote_code",
            "context_length", "parallel", "speculative", "parsers", "memory", "multinode", "args", "env"}
# What the test writes where a REQUIRED comment asks the operator for a value.
FILL: dict[tuple[str, ...], Any] = {
    ("weights", "size_gb"): 10, ("weights", "path"): "/shared/models/standin",
    ("speculative", "draft_model_path"): "/shared/models/standin-draft", ("multinode", "hosts"): ["h", "h2"],
    ("multinode", "port"): 50000}


def manifest_data(text: str) -> dict[str, Any]:
    """The printed manifest as gen's own loader reads it (no finding allowed)."""
    diags = Diagnostics()
    doc = load_text(text, "models/imported.yaml", diags)
    assert doc is not None and not diags.items, [str(d) for d in diags.items]
    assert isinstance(doc.data, dict)
    assert set(doc.data) <= SECTIONS, set(doc.data) - SECTIONS
    return doc.data


def fill_required(text: str) -> tuple[dict[str, Any], set[tuple[str, ...]]]:
    """The manifest's data with every REQUIRED value filled in, and the paths filled."""
    data = manifest_data(text)
    filled: set[tuple[str, ...]] = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("# REQUIRED"):
            continue
        key_line = next(ln for ln in lines[i + 1:] if not ln.lstrip().startswith("#"))
        key = key_line.split(":", 1)[0].strip()
        path = next(p for p in FILL if p[-1] == key)
        node = data
        for step in path[:-1]:
            node = node[step]
        assert node[path[-1]] is None, f"REQUIRED above a value: {key_line}"
        node[path[-1]] = FILL[path]
        filled.add(path)
    return data, filled


def _model_root(path: str) -> str:
    parts = [p for p in path.split("/") if p]
    return "/" + parts[0] if len(parts) > 1 else "/srv"


def checked_render(pin: str, text: str, tmp: Path) -> tuple[list[str], set[tuple[str, ...]]]:
    """Write the filled-in manifest and a host of ``pin`` (two for a multi-node manifest) into a
    repo, run gen check's pipeline on it, and return the service's rendered argv (rank 0's,
    after the program) and the filled paths."""
    data, filled = fill_required(text)
    name = data["name"]
    nodes = data.get("multinode", {}).get("hosts") or ["h"]
    hosts = {}
    for rank, host in enumerate(nodes):
        inventory = host_yaml(host, gpus_per_node=(16,), mem=141, pin=pin, services=(
            f"  - {{name: svc, model: {name}, port: 31000, allow_cross_numa: true}}\n"))
        inventory = inventory.replace("model_root: /shared/models", f"model_root: {_model_root(data['weights']['path'])}")
        if len(nodes) > 1:
            inventory = inventory.replace("storage:", f"network: {{address: 10.0.0.{rank + 1}, interface: eth0}}\nstorage:")
        hosts[host] = inventory
    root = write_repo(tmp, hosts, {})
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False  # block style: a flow mapping cannot hold "a:b" plain for gen's loader
    with (root / "models" / f"{name}.yaml").open("w", encoding="utf-8") as f:
        yaml.dump(data, f)
    for part in ("templates", "catalogs"):  # copied: gen reads no linked templates/ or catalogs/ (Y009)
        shutil.copytree(ROOT / part, root / part)
    result = run(root, None)
    errors = [str(d) for d in result.diagnostics if d.is_error]
    assert not errors, "gen check refuses what gen import printed:\n" + "\n".join(errors) + "\n" + text
    render = next(r for r in result.renders if r.host.name == nodes[0])
    [service] = render.services
    return [w for g in service.argv.groups for w in g.words], filled


def rendered_argv(pin: str, text: str, tmp: Path | None = None) -> list[str]:
    """The argv gen renders from an imported manifest (REQUIRED values filled in)."""
    with tempfile.TemporaryDirectory(prefix="gen-corpus-") as scratch:
        return checked_render(pin, text, tmp or Path(scratch))[0]
