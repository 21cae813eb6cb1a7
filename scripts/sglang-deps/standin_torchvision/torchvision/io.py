"""STAND-IN for torchvision.io (see the package docstring): importable, but decodes nothing."""

from __future__ import annotations

import enum
from typing import NoReturn


class ImageReadMode(enum.Enum):
    """Same members and values as the real enum, which transformers reads at import time."""

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4


def _standin_only(name: str) -> NoReturn:
    raise NotImplementedError(f"torchvision.io.{name}: gen's import-only stand-in cannot decode images")


def decode_image(*args: object, **kwargs: object) -> NoReturn:
    """Imported by transformers' image utilities at import time; never called by gen."""
    _standin_only("decode_image")


def decode_jpeg(*args: object, **kwargs: object) -> NoReturn:
    """Imported lazily by SGLang's image loading; never called by gen."""
    _standin_only("decode_jpeg")


def __getattr__(name: str) -> object:
    raise AttributeError(f"torchvision.io.{name}: this is gen's import-only stand-in for torchvision")
