"""Models no host runs are checked too: a broken unused manifest is an error, not silence.

A model only meets the flag and rule checks through a service. For a manifest that no
host uses, the pipeline builds a placeholder service for it (listen 127.0.0.1, port
:data:`PLACEHOLDER_PORT`, ``gpus_per_node`` placeholder GPUs) and checks it against every
committed SGLang catalog, since no host says which pin it will run on. It is valid when
one pin accepts it; otherwise the findings of the newest pin are reported, at the
manifest's own lines.

The result depends only on models/ and catalogs/, so the fleet runner computes it once
per run with the models (generator/pipeline/fleet.py); which are unused is decided per run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from generator.errors import CatalogMissingError, Diagnostic, Diagnostics
from generator.load.resolve import Gpu, Model, ServiceSpec
from generator.load.sources import ModelSet
from generator.plan.argv import build_argv
from generator.plan.placement import Placement
from generator.plan.services import service_environment
from generator.sglang.catalog import Catalog, known_pins, load_catalog
from generator.sglang.rules import check_rules

PLACEHOLDER_PORT = 30000
PLACEHOLDER_PYTHON = "/usr/bin/python3"


def _placeholder(model: Model) -> Placement:
    """A single-node service running ``model``, positioned at the manifest's ``name``."""
    service = ServiceSpec(doc=model.doc, base=("name",), name=model.name, model=model.name,
                          port=PLACEHOLDER_PORT)
    gpus = tuple(Gpu(i, f"00000000:{i:02X}:00.0", 0.0, 0) for i in range(model.gpus_per_node))
    return Placement(service, model, gpus, (0,), None)


def _findings(model: Model, catalog: Catalog, others: list[Catalog]) -> list[Diagnostic]:
    diags = Diagnostics()
    diags.hide(model.doc.secrets)
    p = _placeholder(model)
    argv = build_argv(p, PLACEHOLDER_PYTHON, catalog, diags, others)
    check_rules(catalog, p, argv, service_environment(p), diags)
    return diags.items


def check_models_alone(root: Path, models: ModelSet) -> dict[str, tuple[Diagnostic, ...]]:
    """Model name -> its errors when no committed pin accepts it (empty when one does)."""
    catalogs: list[Catalog] = []
    for pin in known_pins(root):
        try:
            catalogs.append(load_catalog(root, pin))
        except CatalogMissingError:
            continue
    out: dict[str, tuple[Diagnostic, ...]] = {}
    for name, model in models.models.items():
        if not catalogs or model.multinode is not None:
            out[name] = ()  # a multi-node model names its hosts: P023/P024 report those
            continue
        per_pin = [(c, _findings(model, c, [o for o in catalogs if o is not c])) for c in catalogs]
        if any(not any(d.is_error for d in found) for _, found in per_pin):
            out[name] = ()
            continue
        catalog, found = per_pin[-1]
        note = (f" [model '{name}' is used by no host: checked against every committed SGLang pin, "
                f"none accepts it; shown for {catalog.pin}]")
        out[name] = tuple(replace(d, message=d.message + note) for d in found if d.is_error)
    return out
