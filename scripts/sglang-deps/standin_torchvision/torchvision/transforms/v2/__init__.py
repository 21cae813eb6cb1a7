"""STAND-IN for torchvision.transforms.v2 (see the package docstring)."""

from __future__ import annotations

from torchvision.transforms.v2 import functional


def __getattr__(name: str) -> object:
    raise AttributeError(
        f"torchvision.transforms.v2.{name}: this is gen's import-only stand-in for torchvision"
    )
