"""Run inside a real SGLang venv: the captured pipeline facts against the imported classes.

``PYTHON tests/pipeline_runtime_check.py catalogs/sglang/<pin>.pipeline.json`` imports every
module of ``sglang.srt.models`` it can (on a CPU machine many need CUDA kernels), and for each
class in SGLang's own ``ModelRegistry`` compares the committed file with what Python itself
says: ``"pp_proxy_tensors" in inspect.signature(cls.forward).parameters`` (SGLang's own
``support_pp`` test) and whether a class of the real ``cls.__mro__`` sets ``start_layer`` and
``end_layer`` (in its ``vars()``, or ``self.<name> = ...`` in its source). Prints one JSON
document: agreements, disagreements, and the classes it could not check.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import logging
import pkgutil
import sys
import textwrap


def _sets(cls: type, attr: str) -> bool:
    if attr in vars(cls):
        return True
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return False
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        while targets:
            target = targets.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                targets += target.elts
            elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                  and target.value.id == "self" and target.attr == attr):
                return True
    return False


def main(path: str) -> dict:
    logging.disable(logging.CRITICAL)
    captured = json.load(open(path))["architectures"]
    from sglang.srt.models import registry

    import sglang.srt.models as models

    for info in pkgutil.iter_modules(models.__path__, "sglang.srt.models."):
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a CUDA-only module: not checkable here
            pass
    agree, disagree, unchecked = [], [], []
    for arch, cls in sorted(registry.ModelRegistry.models.items()):
        facts = captured.get(arch)
        if facts is None or "__getattr__" in vars(cls):
            unchecked.append(arch)
            continue
        runtime = {"layers": all(any(_sets(c, a) for c in cls.__mro__ if c is not object)
                                 for a in ("start_layer", "end_layer")),
                   "pp_proxy_tensors": "pp_proxy_tensors" in inspect.signature(cls.forward).parameters}
        (agree if runtime == facts else disagree).append(arch if runtime == facts else [arch, runtime, facts])
    return {"agree": agree, "disagree": disagree, "unchecked": unchecked}


if __name__ == "__main__":
    real, sys.stdout = sys.stdout, sys.stderr  # what SGLang prints on import is not the document
    document = main(sys.argv[1])
    sys.stdout = real
    print(json.dumps(document))
