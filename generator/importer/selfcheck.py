"""What ``gen check`` says about the manifest ``gen import`` is about to print, and what gen sets itself.

Whatever gen import prints must pass gen check's own input rules, or say with a REQUIRED
comment what the operator must write. So the printed text goes through gen check's own
pipeline before it is printed (:func:`check_printed`): it is loaded from memory as
``models/<name>.yaml`` (the REQUIRED nulls given stand-in values on their own lines, so
every line keeps its number), served by a stand-in host of the same pin, planned and
rendered with the repository's own catalogs and templates. Every finding about the
manifest file itself (YAML, schema, flags, rules, variables, secrets, gen's own
variables: families Y, S, F, X, E, K) comes back with its line; findings about the
stand-in host (placement, references) are not the manifest's and are left out.

:func:`gen_variables` renders the same stand-in with a probe model (and ``secret_args``,
so ``LoadCredential=`` is in the unit) and reads what the unit makes gen's own
(:func:`generator.emit.owned_env.owned_variables`): the variables gen import drops from a
command's environment instead of copying them into ``env:``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from generator.emit.owned_env import owned_variables
from generator.emit.templates import load_templates
from generator.errors import Diagnostic, Diagnostics, TemplateError
from generator.load.files import SourceFile
from generator.load.resolve import model_from_doc
from generator.load.schema import MODEL_SCHEMA
from generator.load.sources import ModelSet, load_document
from generator.pipeline.host import process_host
from generator.pipeline.outcome import HostOutcome
from generator.plan.services import gen_environment
from generator.sglang.catalog import Catalog

STANDIN_HOST = "import-check"  # a name no inventory needs: the host exists only in memory
MANIFEST_FAMILIES = ("Y", "S", "F", "X", "E", "K")


def _host_text(pin: str, model: str, model_root: str, extra: str = "") -> str:
    """A stand-in inventory of ``pin`` with one service of ``model`` (16 GPUs on one NUMA node)."""
    gpus = "".join(f'  - {{index: {i}, pci_bus_id: "00000000:{0x10 + i:02X}:00.0", memory_gb: 141, numa_node: 0}}\n'
                   for i in range(16))
    return (f"name: {STANDIN_HOST}\naddress: 127.0.0.1\ngpus:\n{gpus}numa:\n  - {{node: 0, cpus: \"0-63\"}}\n"
            f"storage:\n  model_root: {json.dumps(model_root)}\n"
            f"sglang: {{pin: {json.dumps(pin)}, python: /opt/sglang/bin/python}}\n"
            f"services:\n  - name: imported\n    model: {model}\n    port: 30000\n{extra}")


def _source(display: str, text: str) -> SourceFile:
    return SourceFile(Path("/nonexistent") / display, display, text.encode("utf-8"))


def _run(root: Path, pin: str, model_name: str, model_text: str, model_root: str,
         extra: str = "") -> tuple[HostOutcome, ModelSet]:
    """The stand-in host's outcome (with its full render) for the in-memory manifest."""
    diags = Diagnostics()
    doc = load_document(_source(f"models/{model_name}.yaml", model_text), MODEL_SCHEMA, "model", diags)
    models = {model_name: model_from_doc(doc)} if doc is not None else {}
    model_set = ModelSet(models, frozenset() if doc is not None else frozenset({model_name}), tuple(diags.items))
    host = _source(f"hosts/{STANDIN_HOST}.yaml", _host_text(pin, model_name, model_root, extra))
    templates, _ = load_templates(root)  # their problems are gen check's to report; None renders nothing
    if templates is not None and not templates.texts:
        templates = None  # no templates/: the manifest is still loaded, planned and checked, not rendered
    return process_host(root, host, model_set, {}, render=True, detail=True, templates=templates), model_set


def _model_root(path: str) -> str:
    """A model root holding ``path`` (its parent folder), so placement has nothing to say about it."""
    parent = str(PurePosixPath(path).parent) if path.startswith("/") else "/srv"
    return parent if parent != "/" else "/srv"


def check_printed(root: Path, catalog: Catalog, name: str, text: str, standins: Mapping[int, str],
                  weights_path: str) -> list[Diagnostic]:
    """Findings of gen check's pipeline about the manifest ``text`` (shown as ``models/<name>.yaml``).

    ``standins`` maps a line number of ``text`` to the line to check instead (a REQUIRED
    null filled in), so findings keep the printed text's line numbers.
    """
    lines = text.split("\n")
    for number, line in standins.items():
        lines[number - 1] = line
    outcome, models = _run(root, catalog.pin, name, "\n".join(lines), _model_root(weights_path))
    display = f"models/{name}.yaml"
    found = [*models.diagnostics, *outcome.load, *outcome.render]
    return [d for d in found if d.pos.path == display and d.code[0] in MANIFEST_FAMILIES]


def gen_variables(root: Path, pin: str, secret_args: bool) -> Mapping[str, str]:
    """Variable -> what sets it, for a service of ``pin`` as the repository's templates render it."""
    probe = "name: import-probe\nweights: {path: /srv/import-probe, size_gb: 1}\n"
    extra = "    secret_args: [--api-key]\n" if secret_args else ""
    try:
        outcome, _ = _run(root, pin, "import-probe", probe, "/srv", extra)
    except TemplateError:
        return {}
    render = outcome.detail
    if render is None:
        return {}
    [service] = render.services
    unit = next(f.text for f in render.tree.files if f.relpath == service.unit_path)
    owned = owned_variables(unit, gen_environment(service.placement))
    # said of any service: the probe's own name is no part of what gen sets
    return {name: why.replace("sglang-imported", "sglang-<service>") for name, why in owned.items()}
