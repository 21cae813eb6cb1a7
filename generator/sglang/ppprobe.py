"""Probe: which model architectures of one SGLang split their layers across pipeline stages.

Run inside the target interpreter (``PYTHON - < ppprobe.py``, locally or over SSH, like the
flag, env and architectures probes); it imports only the standard library and prints one JSON
document (``<pin>.pipeline.json``, format 1) on stdout.

Two facts per architecture SGLang registers (the ``EntryClass`` names of every module of
``sglang.srt.models``), both what SGLang's model runner asks of the model object it built:

* ``layers``: the class exposes ``start_layer`` and ``end_layer`` (a property, a class
  attribute, or ``self.start_layer = ...`` in a method of a class in its MRO, or through a
  ``__getattr__`` that forwards to another model). The runner sizes its KV pool for
  ``end_layer - start_layer`` layers (0.5.9 ``model_runner.py``: ``getattr(self.model,
  "start_layer", 0)`` / ``getattr(self.model, "end_layer", model_num_layers)``; 0.5.23
  ``layer_setup._resolve_pp_layer_range``): a class without them gets a pool for every layer
  on every pipeline rank;
* ``pp_proxy_tensors``: its ``forward`` takes ``pp_proxy_tensors`` (``support_pp``): with
  ``--pp-size`` above 1 the runner asserts it ("Pipeline Parallel is not compatible with this
  model.").

Both are read from the source (Python's ``ast``), not by importing the modules: most model
modules import CUDA-only kernels and cannot be imported on a CPU machine, and the answer must
not depend on which optional packages the capturing machine has. Base classes and forwarding
targets are followed across modules of the installed ``sglang`` package (C3 order); a base
outside it (``torch.nn.Module``, Transformers) defines neither. An architecture whose classes
cannot all be found is in ``unresolved`` with the reason, and gen does not guess for it.

No date and no install path: a re-capture of one install is byte-identical.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import sys

PROBE_FORMAT = 1
MODELS = "sglang.srt.models"
LAYER_ATTRS = ("start_layer", "end_layer")


class Unresolved(Exception):
    """A class or module of the sglang package the probe cannot find."""


class Source:
    """The parsed modules of one installed ``sglang`` package, read on demand."""

    def __init__(self, package_dir: str) -> None:
        self.root = os.path.dirname(package_dir)  # the directory holding sglang/
        self.modules: dict = {}

    def module(self, name: str) -> dict:
        """``{"classes": {name: ClassDef}, "imports": {name: (module, attr)}, "entry": [names]}``."""
        if name in self.modules:
            return self.modules[name]
        base = os.path.join(self.root, *name.split("."))
        path = base + ".py" if os.path.isfile(base + ".py") else os.path.join(base, "__init__.py")
        if not os.path.isfile(path):
            raise Unresolved(f"module {name} not found")
        with open(path, encoding="utf-8-sig") as handle:  # a few files start with a BOM
            tree = ast.parse(handle.read())
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        info: dict = {"classes": {}, "imports": {}, "entry": [], "package": package}
        for node in ast.walk(tree):  # imports inside functions too (lazy imports break cycles)
            if isinstance(node, ast.ImportFrom):
                source = _absolute(node, package)
                for alias in node.names:
                    info["imports"].setdefault(alias.asname or alias.name, (source, alias.name))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                info["classes"][node.name] = node
            targets, value = _assignment(node)
            if any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in targets):
                values = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                info["entry"] += [v.id for v in values if isinstance(v, ast.Name)]
        self.modules[name] = info
        return info

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple | None:
        """The ``(module, class name)`` that ``name`` means in ``module``; None outside sglang."""
        if depth > 20:
            raise Unresolved(f"import cycle at {module}.{name}")
        info = self.module(module)
        if name in info["classes"]:
            return (module, name)
        if name in info["imports"]:
            source, attr = info["imports"][name]
            if source.split(".")[0] != "sglang":
                return None  # torch, transformers, ...: defines neither attribute
            return self.resolve(source, attr, depth + 1)
        raise Unresolved(f"{name} is neither defined nor imported in {module}")


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The absolute module name of an ``ImportFrom`` (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    if node.level > 1:
        parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _assignment(node: ast.AST) -> tuple:
    if isinstance(node, ast.Assign):
        return node.targets, node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [node.target], node.value
    return [], None


def _names(target: ast.AST) -> list:
    """The plain targets of an assignment target, tuples unpacked."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names(elt)]
    return [target]


def _self_attrs(cls: ast.ClassDef) -> dict:
    """``self.NAME = VALUE`` assignments in the methods of ``cls``: name -> [values]."""
    found: dict = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.AugAssign):
            continue
        targets, value = _assignment(node)
        for target in targets:
            for t in _names(target):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    found.setdefault(t.attr, []).append(value)
    return found


def _defines(cls: ast.ClassDef, attr: str) -> bool:
    """``attr`` is set on the class or its instances by the class's own body."""
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
            return True
        targets, _ = _assignment(node)
        if any(isinstance(t, ast.Name) and t.id == attr for target in targets for t in _names(target)):
            return True
    return attr in _self_attrs(cls)


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node  # type: ignore[return-value]
    return None


class Analysis:
    """Attribute lookup on the classes of one installed sglang, as Python does it (C3 MRO)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.mros: dict = {}

    def bases(self, ref: tuple) -> list:
        module, name = ref
        cls = self.source.module(module)["classes"][name]
        found = []
        for base in cls.bases:
            if isinstance(base, ast.Name):
                resolved = self.source.resolve(module, base.id)
            elif isinstance(base, ast.Attribute):
                resolved = None  # nn.Module, torch.nn.Module: outside sglang
            else:
                raise Unresolved(f"base {ast.dump(base)[:80]} of {module}.{name}")
            if resolved is not None:
                found.append(resolved)
        return found

    def mro(self, ref: tuple, depth: int = 0) -> list:
        """The C3 linearization of ``ref`` over its sglang bases."""
        if ref in self.mros:
            return self.mros[ref]
        if depth > 50:
            raise Unresolved(f"inheritance too deep at {ref}")
        seqs = [list(self.mro(b, depth + 1)) for b in self.bases(ref)] + [self.bases(ref)]
        result = [ref]
        while any(seqs):
            for seq in seqs:
                if not seq:
                    continue
                head = seq[0]
                if not any(head in s[1:] for s in seqs):
                    break
            else:
                raise Unresolved(f"no consistent MRO for {ref}")
            result.append(head)
            seqs = [s[1:] if s and s[0] == head else s for s in seqs]
        self.mros[ref] = result
        return result

    def cls(self, ref: tuple) -> ast.ClassDef:
        return self.source.module(ref[0])["classes"][ref[1]]

    def delegate(self, ref: tuple) -> tuple | None:
        """The class a ``__getattr__`` forwards unknown attributes to (``getattr(self.X, name)``
        with ``self.X = Cls(...)``), searched along the MRO."""
        for klass in self.mro(ref):
            node = _method(self.cls(klass), "__getattr__")
            if node is None:
                continue
            for call in ast.walk(node):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "getattr"
                        and call.args and isinstance(call.args[0], ast.Attribute)
                        and isinstance(call.args[0].value, ast.Name) and call.args[0].value.id == "self"):
                    field = call.args[0].attr
                    for value in _self_attrs(self.cls(klass)).get(field, []):
                        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                            return self.source.resolve(klass[0], value.func.id)
                    raise Unresolved(f"{klass[1]}.__getattr__ forwards to self.{field} of an unknown class")
            return None  # a __getattr__ of another kind: nothing forwarded
        return None

    def has(self, ref: tuple, attr: str, depth: int = 0) -> bool:
        """An instance of ``ref`` has ``attr`` (own MRO first, then a forwarding ``__getattr__``)."""
        if any(_defines(self.cls(k), attr) for k in self.mro(ref)):
            return True
        target = self.delegate(ref)
        return target is not None and depth < 5 and self.has(target, attr, depth + 1)

    def forward_takes(self, ref: tuple, param: str, depth: int = 0) -> bool:
        """The ``forward`` an instance of ``ref`` resolves to has a parameter ``param``."""
        for klass in self.mro(ref):
            node = _method(self.cls(klass), "forward")
            if node is not None:
                args = node.args
                return param in [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        target = self.delegate(ref)
        return target is not None and depth < 5 and self.forward_takes(target, param, depth + 1)


def probe() -> dict:
    """The pipeline document (module docstring)."""
    spec = importlib.util.find_spec("sglang")  # locates the package; runs none of its code
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("sglang is not installed for this interpreter")
    package_dir = list(spec.submodule_search_locations)[0]
    source = Source(package_dir)
    analysis = Analysis(source)
    models_dir = os.path.join(package_dir, "srt", "models")
    archs: dict = {}
    unresolved: dict = {}
    for filename in sorted(os.listdir(models_dir)):
        if not filename.endswith(".py") or filename in ("__init__.py", "registry.py"):
            continue
        module = f"{MODELS}.{filename[:-3]}"
        try:
            entries = source.module(module)["entry"]
        except (SyntaxError, Unresolved) as exc:
            unresolved[module] = str(exc)[:300]
            continue
        for name in entries:
            ref = None
            try:
                ref = source.resolve(module, name)
                if ref is None:
                    raise Unresolved(f"{name} is imported from outside sglang")
                facts = {"layers": all(analysis.has(ref, a) for a in LAYER_ATTRS),
                         "pp_proxy_tensors": analysis.forward_takes(ref, "pp_proxy_tensors")}
            except (Unresolved, KeyError) as exc:
                unresolved[ref[1] if ref else name] = str(exc)[:300]
                continue
            arch = ref[1]  # the registry keys classes by their __name__
            if arch in archs and archs[arch] != facts:
                unresolved[arch] = "registered twice with different answers"
                continue
            archs[arch] = facts
    for arch in unresolved:
        archs.pop(arch, None)
    try:
        version = importlib.metadata.version("sglang")
    except importlib.metadata.PackageNotFoundError:
        version = None
    return {"format": PROBE_FORMAT, "sglang": version, "architectures": archs, "unresolved": unresolved}


if __name__ == "__main__":
    document = probe()
    sys.stdout.write(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=True) + "\n")
