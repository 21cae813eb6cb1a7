"""The one YAML loader every manifest goes through: ruamel's safe loader, libyaml when installed.

Speed only (ARCHITECTURE.md, with its measured gain), all of it in this module: the loader
class built once and the resolver's answer kept per scalar text.

:func:`events` (for :mod:`generator.load.limits`) and :func:`compose` (for
:mod:`generator.load.manifests`) are ``YAML(typ="safe").parse`` and ``.compose``, minus
what those cost per call under libyaml: ruamel builds a new loader *class* for every
document it reads (``YAML.get_constructor_parser``), which is slow to make and leaves
cyclic garbage behind. The class here is built once, from the same three parts ruamel
combines (its ``CParser``, the safe constructor and the resolver), and initialised the
same way, so the events, nodes, marks and errors are libyaml's own, as before.

Without ruamel.yaml.clib the pure-Python loader of ``YAML(typ="safe")`` runs unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import Node, ScalarNode
from ruamel.yaml.resolver import _DEFAULT_YAML_VERSION, VersionedResolver

try:
    from ruamel.yaml.main import CParser
except ImportError:  # no ruamel.yaml.clib: the pure parser reads %YAML itself
    CParser = None

# One safe loader: the composer keeps marks; no arbitrary object construction.
YAML_SAFE = YAML(typ="safe")  # libyaml (ruamel.yaml.clib) when installed: same marks, ~6x faster


class CParserResolver(VersionedResolver):
    """ruamel's resolver, minus two failing attribute lookups per scalar under libyaml.

    With the C parser there is no Python scanner to read a ``%YAML`` directive from, so
    ruamel's ``processing_version`` always ends at the loader's version (or YAML 1.2),
    after an AttributeError per call: a tenth of composing a host file. Same answer here.
    """

    @property
    def processing_version(self) -> Any:
        version = getattr(self.loadumper, "version", None) or self._loader_version
        return version if version is not None else _DEFAULT_YAML_VERSION

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """ruamel's answer, remembered per (version, value, implicit) for scalars.

        libyaml asks once per scalar, and a fleet's files repeat the same few values
        (ports, ``true``, GPU indexes): ruamel would run its regexes and make a new Tag
        each time. The answer is a pure function of the key (no path resolvers here);
        equal answers share one Tag, which ruamel itself does for plain strings.
        """
        if kind is not ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        key = (self.processing_version, value, implicit)
        found = RESOLVED.get(key)
        if found is None:
            found = super().resolve(kind, value, implicit)
            found = _TAGS.setdefault(str(found), found)
            if len(RESOLVED) >= RESOLVED_MAX:
                RESOLVED.clear()  # bounded: a fleet of unique values must not grow it forever
            RESOLVED[key] = found
        return found


_EVENTS = YAML(typ="safe")  # without libyaml: its own parser for events, as before

RESOLVED: dict[tuple[Any, str, Any], Any] = {}
RESOLVED_MAX = 8192
_TAGS: dict[str, Any] = {}  # one Tag per tag string
FAST = CParser is not None and YAML_SAFE.Parser is CParser
if FAST:
    YAML_SAFE.Resolver = CParserResolver


_Constructor: Any = YAML_SAFE.Constructor  # the safe constructor class (a variable to mypy)

if FAST:
    class _Loader(CParser, _Constructor, CParserResolver):
        """ruamel's per-call ``XLoader`` (main.py, get_constructor_parser), made once."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            self._parser = self._composer = self
            _Constructor.__init__(self, loader=self)
            self.allow_duplicate_keys = YAML_SAFE.allow_duplicate_keys
            CParserResolver.__init__(self, version=YAML_SAFE.version, loadumper=self)


def events(text: str) -> Iterator[Any]:
    """The parser's events for ``text``, lazily (stop early: the rest is never parsed)."""
    if not FAST:
        yield from _EVENTS.parse(text)
        return
    loader = _Loader(text)
    try:
        while loader.check_event():
            yield loader.get_event()
    finally:
        loader.dispose()


def compose(text: str) -> Node | None:
    """The node graph of the single document in ``text`` (None when it is empty)."""
    if not FAST:
        return YAML_SAFE.compose(text)
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()
