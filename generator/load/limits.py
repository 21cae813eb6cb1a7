"""Bounds on a YAML document, checked on the parser's event stream before anything is composed.

libyaml composes recursively (200 KB of ``[`` crashes it) and its scanner is quadratic in
flow nesting (the same input takes 46 s just to parse), and a 478-byte "billion laughs" file
expands to 10**9 nodes when aliases are followed. So :func:`prescan` walks the events (cheap,
no tree), and stops at the first event that breaks a limit, with its position:

* nesting deeper than :data:`MAX_DEPTH` collections;
* more than :data:`MAX_NODES` nodes once every alias is expanded (an anchor's size is known
  when its node ends, so an alias adds that many; the count never builds anything), or
  :data:`MAX_DATA_NODES` in one of gen's own data files;
* a scalar longer than :data:`MAX_SCALAR_CHARS`;
* more than one document in a stream (a manifest is one document);
* an explicit tag outside YAML's core schema (``!!python/object``, ``!!binary``, ``!foo``).

Stopping early is what keeps the bad cases fast: the parser is lazy, so the deep-``[`` file
is abandoned after 65 events (about a millisecond).
"""

from __future__ import annotations

from typing import Any

from generator.errors import Diagnostics, GenError, Position

MAX_DEPTH = 64  # collections inside collections; the examples use 4
MAX_NODES = 5_000  # after alias expansion; the largest example inventory has 90, a 64-service host ~2,600
# gen's own data files under catalogs/ (load_data_file): rules.yaml held ~4,800 values for 126
# rules and grows by about 40 per rule, with some 300 rules to come
MAX_DATA_NODES = 50_000
MAX_SCALAR_CHARS = 64 * 1024
INT_LIMIT = 2**63 - 1  # the largest integer any key or value may hold (load/values.py)
MAX_DIAGNOSTICS = 50  # per document; the rest are counted in one "and K more" note
# Worker processes for --jobs: 5,000 forks ran out of process slots (BlockingIOError) and hung
# the pool; a 300-host render is done in seconds with a few.
MAX_JOBS = 64

_CORE = "tag:yaml.org,2002:"
ALLOWED_TAGS = frozenset({"!", *(_CORE + t for t in ("str", "int", "float", "bool", "null", "map", "seq"))})


class _Stop(GenError, ValueError):  # internal: caught in this module
    """A limit was broken at this event."""

    def __init__(self, event: Any, code: str, message: str):
        super().__init__(message)
        self.event, self.code, self.message = event, code, message


def _pos(display: str, event: Any) -> Position:
    mark = event.start_mark
    return Position(display, mark.line + 1, mark.column + 1)


def _check_tag(event: Any) -> None:
    tag = getattr(event, "tag", None)
    if tag is not None and tag not in ALLOWED_TAGS:
        shown = "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag
        raise _Stop(event, "Y011", f"YAML tag '{shown}' is not allowed: write plain values "
                    "(strings, numbers, true/false, lists, mappings)")


def _walk(text: str, max_nodes: int) -> None:
    """Raise _Stop at the first event over a limit; parser errors propagate as they are.

    Scalars come first and tags are tested inline: this runs on every file before it is
    composed, and most events are plain scalars.
    """
    # ruamel is imported here, not with the module: the limits' numbers are read by every
    # command (MAX_JOBS), and commands that load nothing need no YAML at all.
    from ruamel.yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                                     ScalarEvent, SequenceEndEvent, SequenceStartEvent)

    from generator.load import libyaml

    open_nodes: list[list[Any]] = []  # per open collection: [expanded size, anchor]
    sizes: dict[str, int] = {}  # anchor -> expanded size of its node
    total = 0
    documents = 0
    for event in libyaml.events(text):  # the manifests' own loader, events only
        cls = event.__class__
        size = 0
        if cls is ScalarEvent:
            if event.tag is not None and event.tag not in ALLOWED_TAGS:
                _check_tag(event)
            if len(event.value) > MAX_SCALAR_CHARS:
                raise _Stop(event, "Y010", f"a value of {len(event.value)} characters; at most "
                            f"{MAX_SCALAR_CHARS} are allowed")
            size = 1
            total += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            _check_tag(event)
            open_nodes.append([1, event.anchor])
            total += 1
            if len(open_nodes) > MAX_DEPTH:
                raise _Stop(event, "Y003", f"YAML nesting is too deep (more than {MAX_DEPTH} levels)")
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            size, anchor = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = size
        elif cls is AliasEvent:
            size = sizes.get(event.anchor, 1)
            total += size
        elif cls is DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise _Stop(event, "Y012", "a second YAML document ('---'): a manifest is one document")
        if size and open_nodes:
            open_nodes[-1][0] += size
        if total > max_nodes:
            raise _Stop(event, "Y013", f"the document has more than {max_nodes} values (each use of a "
                        "YAML alias counted in full): a manifest is far smaller; split it")


def prescan(text: str, display: str, diags: Diagnostics, max_nodes: int = MAX_NODES) -> bool:
    """Check ``text`` against the limits above (``max_nodes`` values); record the first broken one and return False.

    YAML syntax errors are not caught here: the caller reports them with their position.
    """
    try:
        _walk(text, max_nodes)
    except _Stop as stop:
        diags.error(_pos(display, stop.event), stop.code, stop.message)
        return False
    return True


def cap(diags: Diagnostics, start: int, display: str, limit: int = MAX_DIAGNOSTICS) -> None:
    """Keep at most ``limit`` of the findings recorded since index ``start`` (by position),
    then one note counting the rest: a generated file with 20,000 mistakes stays readable."""
    mine = sorted(diags.items[start:], key=lambda d: d.sort_key())
    if len(mine) <= limit:
        return
    rest = mine[limit:]
    errors = sum(d.is_error for d in rest)
    del diags.items[start:]
    diags.items.extend(mine[:limit])
    # Placed at the first finding left out, so it prints after the ones shown.
    record = diags.error if errors else diags.warning
    record(rest[0].pos if rest[0].pos.path == display else Position(display, 0, 0), "Y014",
           f"and {len(rest)} more finding(s) in this file from here on ({errors} error(s)), not shown")
