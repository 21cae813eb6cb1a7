"""Answer the real SGLang's device checks from declared GPU facts, on CPU (the GPU oracle's stand-in GPU).

Runs inside an SGLang venv (imported by tests/rules_differential_runner.py), standard library
and SGLang only. The stand-in is generator/sglang/deviceprobe.py's :func:`platform`, the one
``gen sglang snapshot`` captures the pin's automatic choices with (imported from its file: the
SGLang venv has no gen installed): a context manager that makes one pin see one NVIDIA GPU
(0.5.23's own ``override_platform``; 0.5.9's capability probes patched; ``torch.cuda`` and
``torch.version.cuda`` answering; FlashInfer counted as installed).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# Loaded from its file, not through sys.path: generator/sglang's other module names must not
# shadow anything SGLang imports.
_FILE = Path(__file__).resolve().parent.parent / "generator" / "sglang" / "deviceprobe.py"
_spec = importlib.util.spec_from_file_location("gen_deviceprobe", _FILE)
assert _spec is not None and _spec.loader is not None
_probe = importlib.util.module_from_spec(_spec)
sys.modules["gen_deviceprobe"] = _probe
_spec.loader.exec_module(_probe)

OVERRIDES = _probe.OVERRIDES
PROBES = _probe.PROBE_NAMES
platform = _probe.platform
preload = _probe.preload
probe_answers = _probe.probe_answers

__all__ = ["OVERRIDES", "PROBES", "platform", "preload", "probe_answers"]
