"""The quick way to load a well-formed manifest: plain data and positions from one parse.

:func:`generator.load.manifests.load_text` used to parse every file twice (the events for
:mod:`generator.load.limits`, then libyaml's composer, whose Python callbacks and node
objects cost more than the parse itself) and then walk the node graph again. Here the
events of one parse are enough: :func:`build` checks them against the same bounds as it
builds the data, ``value_pos`` and ``key_pos`` exactly as the node walk does (same
values, same positions, same insertion order). A text with an anchor (an ``&``) has its
events collected first, so that every use of an alias builds its node again.

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

from ruamel.yaml.events import (AliasEvent, DocumentEndEvent, DocumentStartEvent, MappingEndEvent,
                                 MappingStartEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent,
                                 StreamEndEvent, StreamStartEvent)
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


def _collect(text: str) -> tuple[list[Any], dict[str, tuple[int, int]]]:
    """Every event of ``text``, and where each anchor's events start and end.

    Checked as they come, so a hostile file is abandoned as early as limits.prescan
    abandons it; aliases too: each must name an anchor whose node is complete.
    """
    loader = libyaml.parser(text)
    get_event = loader.get_event
    out: list[Any] = []
    append = out.append
    slices: dict[str, tuple[int, int]] = {}  # complete anchors
    named: set[str] = set()  # every anchor so far: a name used twice is the composer's call
    opened: list[tuple[str | None, int]] = []  # per open collection: its anchor, its first event
    try:
        while True:
            event = get_event()
            cls = event.__class__
            append(event)
            anchor = getattr(event, "anchor", None)  # an alias' is the name it uses
            if anchor is not None and cls is not AliasEvent:
                if anchor in named:
                    raise _GiveUp
                named.add(anchor)
            if cls is MappingStartEvent or cls is SequenceStartEvent:
                opened.append((anchor, len(out) - 1))
                if len(opened) >= limits.MAX_DEPTH:
                    raise _GiveUp
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                anchor, start = opened.pop()
                if anchor is not None:
                    slices[anchor] = (start, len(out))
            elif cls is ScalarEvent:
                if anchor is not None:
                    slices[anchor] = (len(out) - 1, len(out))
            elif cls is AliasEvent:
                if event.anchor not in slices:
                    raise _GiveUp  # undefined, or inside its own anchor (a cycle)
            elif cls is StreamEndEvent:
                return out, slices
            if len(out) > _MAX_EVENTS:
                raise _GiveUp
    finally:
        loader.dispose()


class _Builder:
    """Builds data from events, pulled one at a time, as manifests._build does from nodes."""

    def __init__(self, events: list[Any], slices: dict[str, tuple[int, int]]) -> None:
        self.events, self.slices = events, slices  # empty unless the text has anchors
        self.value_pos: Positions = {}
        self.key_pos: Positions = {}
        self.left = limits.MAX_NODES  # nodes left, keys and every alias use counted in full
        # False once a key or value is anything load/values.py might refuse (text that is not
        # printable, NaN, infinity, an integer past 64 bits); True: it would find nothing.
        self.clean = True

    def plain(self, event: Any) -> Any:
        """The value of a plain scalar the memo does not hold (its callers look there first):
        a string, or what ruamel's constructor makes of it.

        Only printable strings and usable immutable values are remembered, so a value from
        the memo never needs looking at again.
        """
        text = event.value
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

    def node(self, event: Any, pull: Any, path: DocPath, depth: int) -> Any:
        """The value whose first event is ``event``; ``pull`` gives the events after it."""
        cls = event.__class__
        if cls is AliasEvent:
            found = self.slices.get(event.anchor)
            if found is None:
                raise _GiveUp  # no anchor in the text: the alias is undefined
            start, end = found
            again = iter(self.events[start:end]).__next__
            return self.node(again(), again, path, depth)
        if cls is ScalarEvent:
            return self.leaf(event, path, depth)
        self.left -= 1
        if self.left < 0 or depth >= limits.MAX_DEPTH - 1 or event.ctag is not None:
            raise _GiveUp  # too many nodes, too deep (limits.prescan), or a tag
        mark = event.start_mark
        self.value_pos[path] = (mark.line + 1, mark.column + 1)
        if cls is MappingStartEvent:
            return self.mapping(pull, path, depth)
        if cls is SequenceStartEvent:
            return self.sequence(pull, path, depth)
        raise _GiveUp  # not a node: cannot happen in a well-formed stream, but never guess

    def leaf(self, event: Any, path: DocPath, depth: int) -> Any:
        """A scalar (most nodes): its value, its position noted."""
        self.left -= 1
        if self.left < 0 or depth > limits.MAX_DEPTH or event.ctag is not None or \
                len(event.value) > limits.MAX_SCALAR_CHARS:
            raise _GiveUp
        mark = event.start_mark
        self.value_pos[path] = (mark.line + 1, mark.column + 1)
        if not event.implicit[0]:
            return self.quoted(event.value)
        found = _PLAIN.get(event.value, _MISSING)
        if found is _STRING:
            return event.value
        return self.plain(event) if found is _MISSING else found

    def sequence(self, pull: Any, path: DocPath, depth: int) -> list[Any]:
        """The items up to the sequence's end event."""
        out: list[Any] = []
        while (event := pull()).__class__ is not SequenceEndEvent:
            if event.__class__ is ScalarEvent:
                out.append(self.leaf(event, path + (len(out),), depth + 1))
            else:
                out.append(self.node(event, pull, path + (len(out),), depth + 1))
        return out

    def mapping(self, pull: Any, path: DocPath, depth: int) -> dict[Any, Any]:
        """The pairs up to the mapping's end event."""
        out: dict[Any, Any] = {}
        key_pos = self.key_pos
        while (event := pull()).__class__ is not MappingEndEvent:
            if event.__class__ is not ScalarEvent or event.ctag is not None or \
                    len(event.value) > limits.MAX_SCALAR_CHARS:
                raise _GiveUp  # Y005, an alias as a key, a tag, a limit: the old path decides
            self.left -= 1  # limits.prescan counts keys too
            if not event.implicit[0]:
                key = self.quoted(event.value)
            elif (found := _PLAIN.get(event.value, _MISSING)) is _STRING:
                key = event.value  # the usual key: a plain word, from the memo
            else:
                key = self.plain(event) if found is _MISSING else found
            if key.__class__ is not str and not isinstance(key, _KEY_TYPES) and key is not None:
                key = self.quoted(str(key))  # as manifests._mapping: a date used as key stays hashable
            kpath = path + (key,)
            if key in out:
                raise _GiveUp  # Y002
            mark = event.start_mark
            key_pos[kpath] = (mark.line + 1, mark.column + 1)
            value = pull()
            if value.__class__ is ScalarEvent:
                out[key] = self.leaf(value, kpath, depth + 1)
            else:
                out[key] = self.node(value, pull, kpath, depth + 1)
        return out


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


def _document(pull: Any, builder: _Builder) -> Any:
    """The one document of a stream: its root built, and nothing else in the stream."""
    if pull().__class__ is not StreamStartEvent or pull().__class__ is not DocumentStartEvent:
        raise _GiveUp  # empty: Y006
    data = builder.node(pull(), pull, (), 0)
    if pull().__class__ is not DocumentEndEvent or pull().__class__ is not StreamEndEvent:
        raise _GiveUp  # a second document: Y012
    return data


def build(text: str) -> tuple[Any, Positions, Positions, bool] | None:
    """The data, value positions, key positions of ``text``, and whether every key and value
    is plainly usable (:func:`generator.load.values.check_values` would find nothing, so it
    need not look); None: use the old path.

    None also whenever the C parser (ruamel.yaml.clib) is missing.
    """
    if not libyaml.FAST:
        return None
    try:
        if "&" in text:  # maybe an anchor: collect the events, so an alias can replay its node's
            events, slices = _collect(text)
            builder = _Builder(events, slices)
            data = _document(iter(events).__next__, builder)
        else:  # no anchor, so no alias can be valid: the parser's events as they come
            loader = libyaml.parser(text)
            try:
                builder = _Builder([], {})
                data = _document(loader.get_event, builder)
            finally:
                loader.dispose()
    except Exception:  # noqa: BLE001 - any doubt (syntax, reader, constructor): the old path reports it
        return None
    return data, builder.value_pos, builder.key_pos, builder.clean
