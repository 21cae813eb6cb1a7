"""STAND-IN for torchvision.transforms.v2.functional (see the package docstring)."""

from __future__ import annotations

from torchvision.transforms.functional import InterpolationMode, pil_to_tensor, to_tensor

__all__ = ["InterpolationMode", "pil_to_tensor", "to_tensor"]


def __getattr__(name: str) -> object:
    raise AttributeError(
        f"torchvision.transforms.v2.functional.{name}: this is gen's import-only stand-in for torchvision"
    )
