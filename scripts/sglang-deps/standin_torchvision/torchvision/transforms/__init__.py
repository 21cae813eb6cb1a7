"""STAND-IN for torchvision.transforms (see the package docstring): names needed at import time only."""

from __future__ import annotations

from torchvision.transforms.functional import InterpolationMode

__all__ = ["InterpolationMode"]


def __getattr__(name: str) -> object:
    raise AttributeError(
        f"torchvision.transforms.{name}: this is gen's import-only stand-in for torchvision"
    )
