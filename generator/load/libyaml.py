"""The one YAML loader every manifest goes through: ruamel's safe loader, libyaml when installed.

:func:`events` (for :mod:`generator.load.limits`) and :func:`compose` (for
:mod:`generator.load.manifests`) are ``YAML(typ="safe").parse`` and ``.compose``, so the
events, nodes, marks and errors are libyaml's own; the constructor of :data:`YAML_SAFE`
builds the scalars that are not strings. Without ruamel.yaml.clib the pure-Python loader
of ``YAML(typ="safe")`` runs unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import Node

# One safe loader: the composer keeps marks; no arbitrary object construction.
YAML_SAFE = YAML(typ="safe")
# The events get their own loader: limits.prescan may stop reading them midway.
_EVENTS = YAML(typ="safe")


def events(text: str) -> Iterator[Any]:
    """The parser's events for ``text``, lazily (stop early: the rest is never parsed)."""
    return _EVENTS.parse(text)


def compose(text: str) -> Node | None:
    """The node graph of the single document in ``text`` (None when it is empty)."""
    return YAML_SAFE.compose(text)
