"""STAND-IN for torchvision.transforms.functional (see the package docstring)."""

from __future__ import annotations

import enum
from typing import NoReturn


class InterpolationMode(enum.Enum):
    """Same members and values as the real enum, which SGLang reads as defaults at import time."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _standin_only(name: str) -> NoReturn:
    raise NotImplementedError(
        f"torchvision.transforms.functional.{name}: gen's import-only stand-in cannot transform images"
    )


def pil_to_tensor(pic: object) -> NoReturn:
    """Imported by transformers' image utilities at import time; never called by gen."""
    _standin_only("pil_to_tensor")


def to_tensor(pic: object) -> NoReturn:
    """Imported by SGLang's multimodal processors at import time; never called by gen."""
    _standin_only("to_tensor")


def __getattr__(name: str) -> object:
    raise AttributeError(
        f"torchvision.transforms.functional.{name}: this is gen's import-only stand-in for torchvision"
    )
