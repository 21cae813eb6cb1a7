"""The quick way to load a well-formed manifest: plain data and positions from one parse.

:func:`generator.load.manifests.load_text` used to parse every file twice (the events for
:mod:`generator.load.limits`, then libyaml's composer, whose Python callbacks and node
objects cost more than the parse itself) and then walk the node graph again. Here the
events of one parse are enough: :func:`build` checks them against the same bounds while
it collects them, then builds the data, ``value_pos`` and ``key_pos`` exactly as the node
walk does (same values, same positions, same insertion order).

It never reports anything. Whatever could lead to a diagnostic, or is merely unusual
(a syntax error, a second document, any explicit tag, a limit, a merge key, a non-scalar
or duplicate key, an alias to an anchor not yet complete, a reused anchor, a value the
constructor refuses), makes it give up with None, and the caller runs the old path from
the start; so the findings, their order and where loading stops are the old path's own.
tests/test_eventload.py compares both on every YAML file of the repository, on hostile
cases and on generated documents.

Scalar types are ruamel's: its resolver picks the tag of a plain scalar and its safe
constructor builds every value that is not a string, exactly as when composing. While it
builds, it also notes whether every key and value is printable text or a usable number;
when so, :mod:`generator.load.values` skips its walk over the document (it would find
nothing: the test checks that too).
"""

from __future__ import annotations

import math
from typing import Any

from ruamel.yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                                 ScalarEvent, SequenceEndEvent, SequenceStartEvent, StreamEndEvent)
from ruamel.yaml.nodes import ScalarNode

from generator.errors import GenError
from generator.load import libyaml, limits

DocPath = tuple[Any, ...]
Positions = dict[DocPath, tuple[int, int]]

_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_KEY_TYPES = (str, int, float, bool)
# Event count past which the old path surely refuses the document: every node but an alias
# is at most two events, so more than this means more than MAX_NODES nodes (limits.py).
_MAX_EVENTS = 2 * limits.MAX_NODES + 8
# Plain scalar text -> its value, for values that are immutable and depend on the text only
# (ruamel's safe constructor reads nothing else); _STRING when the text is its own value.
_STRING = object()
_MISSING = object()
_PLAIN: dict[str, Any] = {}
_PLAIN_MAX = 8192
_CACHED_TYPES = frozenset({int, float, bool, type(None)})  # NaN is not: _usable refuses it


class _GiveUp(GenError, ValueError):  # internal: caught in this module
    """Something the old path must decide (and report)."""


def _collect(text: str) -> list[Any]:
    """Every event of ``text``, checked as they come: stops at the first one over a bound,
    so a hostile file is abandoned as early as limits.prescan abandons it."""
    loader = libyaml.parser(text)
    get_event = loader.get_event
    out: list[Any] = []
    append = out.append
    depth = documents = 0
    anchors: set[str] = set()
    try:
        while True:
            event = get_event()
            cls = event.__class__
            if cls is ScalarEvent:  # most events: tested first
                if event.ctag is not None or len(event.value) > limits.MAX_SCALAR_CHARS:
                    raise _GiveUp
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                depth += 1
                if event.ctag is not None or depth >= limits.MAX_DEPTH:
                    raise _GiveUp
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                depth -= 1
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _GiveUp
                continue
            elif cls is StreamEndEvent:
                return out
            elif cls is not AliasEvent:
                continue  # stream start, document end: nothing to build
            anchor = getattr(event, "anchor", None)  # an alias' is the name it uses
            if anchor is not None and cls is not AliasEvent:
                if anchor in anchors:
                    raise _GiveUp  # a reused anchor name: which one an alias means is the composer's call
                anchors.add(anchor)
            append(event)
            if len(out) > _MAX_EVENTS:
                raise _GiveUp
    finally:
        loader.dispose()


class _Builder:
    """Builds data from the collected events as manifests._build does from nodes."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events
        self.value_pos: Positions = {}
        self.key_pos: Positions = {}
        self.anchors: dict[str, int] = {}  # complete anchors -> index of their first event
        self.left = limits.MAX_NODES  # nodes left, keys and every alias use counted in full
        # False once a key or value is anything load/values.py might refuse (text that is not
        # printable, NaN, infinity, an integer past 64 bits); True: it would find nothing.
        self.clean = True

    def plain(self, event: Any) -> Any:
        """The value of a plain scalar: a string, or what ruamel's constructor makes of it.

        Only printable strings and usable immutable values are remembered, so a value from
        the memo never needs looking at again.
        """
        text = event.value
        found = _PLAIN.get(text, _MISSING)
        if found is not _MISSING:
            return text if found is _STRING else found
        tag = libyaml.resolve_scalar(text, event.implicit)
        if str(tag) == _STR_TAG:
            value, found = text, _STRING
        elif str(tag) == _MERGE_TAG:
            raise _GiveUp  # Y004
        else:
            node = ScalarNode(tag, text, event.start_mark, event.end_mark, event.style)
            value = found = libyaml.construct_scalar(node)  # may raise: the old path reports Y001
        if not _usable(value):
            self.clean = False
            return value
        if found is _STRING or type(found) in _CACHED_TYPES:  # not a date: built again for every use
            if len(_PLAIN) >= _PLAIN_MAX:
                _PLAIN.clear()  # bounded: a fleet of unique values must not grow it forever
            _PLAIN[text] = found
        return value

    def quoted(self, text: str) -> str:
        """A quoted scalar's text, noted when it is not printable."""
        if not text.isprintable():
            self.clean = False
        return text

    def node(self, i: int, path: DocPath, depth: int) -> tuple[Any, int]:
        """The value whose first event is ``events[i]``, and the index after its last."""
        event = self.events[i]
        cls = event.__class__
        if cls is AliasEvent:
            start = self.anchors.get(event.anchor)
            if start is None:
                raise _GiveUp  # undefined, or inside its own anchor (a cycle)
            return self.node(start, path, depth)[0], i + 1
        self.left -= 1
        if self.left < 0 or depth > limits.MAX_DEPTH:
            raise _GiveUp
        mark = event.start_mark
        self.value_pos[path] = (mark.line + 1, mark.column + 1)
        if cls is ScalarEvent:
            value, end = (self.plain(event) if event.implicit[0] else self.quoted(event.value)), i + 1
        elif cls is MappingStartEvent:
            value, end = self.mapping(i + 1, path, depth)
        else:
            value, end = self.sequence(i + 1, path, depth)
        if event.anchor is not None:  # complete now (_collect refused a reused name)
            self.anchors[event.anchor] = i
        return value, end

    def leaf(self, event: Any, path: DocPath, depth: int) -> Any:
        """A scalar without an anchor (most nodes): :meth:`node` without its dispatch."""
        self.left -= 1
        if self.left < 0 or depth > limits.MAX_DEPTH:
            raise _GiveUp
        mark = event.start_mark
        self.value_pos[path] = (mark.line + 1, mark.column + 1)
        if not event.implicit[0]:
            return self.quoted(event.value)
        found = _PLAIN.get(event.value, _MISSING)
        if found is _STRING:
            return event.value
        return self.plain(event) if found is _MISSING else found

    def sequence(self, i: int, path: DocPath, depth: int) -> tuple[list[Any], int]:
        """The items from ``events[i]`` up to the sequence's end event."""
        out: list[Any] = []
        events = self.events
        while (event := events[i]).__class__ is not SequenceEndEvent:
            if event.__class__ is ScalarEvent and event.anchor is None:
                out.append(self.leaf(event, path + (len(out),), depth + 1))
                i += 1
            else:
                value, i = self.node(i, path + (len(out),), depth + 1)
                out.append(value)
        return out, i + 1

    def mapping(self, i: int, path: DocPath, depth: int) -> tuple[dict[Any, Any], int]:
        """The pairs from ``events[i]`` up to the mapping's end event."""
        out: dict[Any, Any] = {}
        events = self.events
        key_pos = self.key_pos
        while (event := events[i]).__class__ is not MappingEndEvent:
            if event.__class__ is not ScalarEvent:
                raise _GiveUp  # Y005, or an alias as a key: the old path decides
            self.left -= 1  # limits.prescan counts keys too
            key = self.plain(event) if event.implicit[0] else self.quoted(event.value)
            if key.__class__ is not str and not isinstance(key, _KEY_TYPES) and key is not None:
                key = self.quoted(str(key))  # as manifests._mapping: a date used as key stays hashable
            kpath = path + (key,)
            if key in out:
                raise _GiveUp  # Y002
            mark = event.start_mark
            key_pos[kpath] = (mark.line + 1, mark.column + 1)
            if event.anchor is not None:  # a key's anchor: an alias builds that scalar as a value
                self.anchors[event.anchor] = i
            value = events[i + 1]
            if value.__class__ is ScalarEvent and value.anchor is None:
                out[key] = self.leaf(value, kpath, depth + 1)
                i += 2
            else:
                out[key], i = self.node(i + 1, kpath, depth + 1)
        return out, i + 1


def _usable(value: Any) -> bool:
    """False for what load/values.py may refuse; bool, None and dates are always fine."""
    cls = value.__class__
    if cls is str:
        return value.isprintable()  # every character values.bad_char refuses is unprintable
    if cls is float:
        return math.isfinite(value)
    if cls is int:
        return -limits.INT_LIMIT <= value <= limits.INT_LIMIT
    return True


def build(text: str) -> tuple[Any, Positions, Positions, bool] | None:
    """The data, value positions, key positions of ``text``, and whether every key and value
    is plainly usable (:func:`generator.load.values.check_values` would find nothing, so it
    need not look); None: use the old path.

    None also whenever the C parser (ruamel.yaml.clib) is missing.
    """
    if not libyaml.FAST:
        return None
    try:
        events = _collect(text)
        if not events:
            return None  # empty: Y006
        builder = _Builder(events)
        data, end = builder.node(0, (), 0)
        if end != len(events):
            return None  # not one root node: cannot happen in one document, but never guess
    except Exception:  # noqa: BLE001 - any doubt (syntax, reader, constructor): the old path reports it
        return None
    return data, builder.value_pos, builder.key_pos, builder.clean
