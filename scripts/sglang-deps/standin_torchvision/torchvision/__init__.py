"""STAND-IN for torchvision, installed by gen's scripts/sglang-venv. Not the real package.

The PyPI torchvision wheels do not load against the CPU torch on this machine
("operator torchvision::nms does not exist"), yet SGLang 0.5.9 imports torchvision at
module level (image transforms of multimodal models) on the way to
``sglang.srt.server_args``. gen only reads SGLang's CLI and runs its argument
validation, which never touches images, so this package provides the few names
needed to import SGLang and nothing else: every other attribute raises
AttributeError saying it is a stand-in. It ships no dist-info on purpose, so
``importlib.metadata`` (and transformers' availability checks) still report
torchvision as not installed.
"""

from __future__ import annotations

__standin__ = True
__version__ = "0.0.0+gen.standin"


def __getattr__(name: str) -> object:
    raise AttributeError(f"torchvision.{name}: this is gen's import-only stand-in for torchvision")
