"""Probe: the model architectures one SGLang registers, and the model classes of its Transformers.

Run inside the target interpreter (``PYTHON - < archprobe.py``, locally or over SSH, like the
flag and env probes); it imports only the standard library at module level and prints one
JSON document (``<pin>.architectures.json``, format 1) on stdout:

* ``registry``: architecture -> module, from ``sglang.srt.models.registry.ModelRegistry`` as
  SGLang builds it at start (every module of ``sglang.srt.models`` imported, ``EntryClass``
  read). A module that cannot be imported here (a CUDA-only dependency on a CPU machine)
  is in ``import_errors`` with the error's first line, and its ``EntryClass`` names are
  read from its source instead (``static``: the names SGLang registers where it imports);
* ``transformers``: the version and the model classes (``*For*``, ``*Model``) the installed
  Transformers exports: what SGLang's Transformers fallback can load for an architecture
  its registry lacks.

No date: a re-capture of one install is byte-identical.
"""

from __future__ import annotations

import ast
import importlib
import json
import logging
import os
import pkgutil
import sys

PROBE_FORMAT = 1


def _entry_names(path: str) -> list:
    """The class names a module assigns to ``EntryClass`` (a name or a list of names)."""
    with open(path, encoding="utf-8-sig") as handle:  # a few files start with a BOM
        tree = ast.parse(handle.read())
    names: list = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in targets):
            continue
        values = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        names += [v.id for v in values if isinstance(v, ast.Name)]
    return names


def probe() -> dict:
    """The architectures document (module docstring)."""
    logging.disable(logging.CRITICAL)  # SGLang logs every failed import; they are recorded below
    import sglang  # the target's own SGLang
    from sglang.srt.models import registry as reg

    models_pkg = importlib.import_module("sglang.srt.models")
    registry = {arch: getattr(cls, "__module__", str(cls)) for arch, cls in reg.ModelRegistry.models.items()}
    errors, static = {}, {}
    for info in pkgutil.iter_modules(models_pkg.__path__, "sglang.srt.models."):
        if info.ispkg or info.name.endswith(".registry"):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 - any import failure is a fact to record
            # the install's own path is cut: the captured file must not depend on where the venv lives
            text = f"{type(exc).__name__}: {exc}".replace(sys.prefix, "<sys.prefix>")
            errors[info.name] = (text.splitlines() or [""])[0][:300]
            path = os.path.join(models_pkg.__path__[0], info.name.rsplit(".", 1)[1] + ".py")
            for name in _entry_names(path):
                if name not in registry:
                    static[name] = info.name
    out = {"format": PROBE_FORMAT, "sglang": getattr(sglang, "__version__", None), "registry": registry,
           "import_errors": errors, "static": static, "transformers": None}
    try:
        import transformers  # type: ignore[import-not-found]

        names = sorted(n for n in dir(transformers) if n[:1].isupper() and ("For" in n or n.endswith("Model")))
        out["transformers"] = {"version": transformers.__version__, "classes": names}
    except Exception as exc:  # noqa: BLE001 - recorded: no fallback known
        out["transformers"] = {"version": None, "classes": [], "error": str(exc).replace(sys.prefix, "<sys.prefix>")[:300]}
    return out


if __name__ == "__main__":
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # what SGLang prints on import is not the document
    document = probe()
    sys.stdout = real_stdout
    sys.stdout.write(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=True) + "\n")
