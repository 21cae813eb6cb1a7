"""Per-host results as JSON data and back, with every field's shape checked on the way in.

The render cache (generator/pipeline/cache.py) stores what :func:`outcome_json` gives and
reads through :func:`outcome_from_json`, which rejects (returns None for) anything that
is not exactly what :func:`outcome_json` writes: unknown keys, wrong types, an unknown
severity, a file mode outside 0..0o7777, a path that is absolute or climbs with ``..``.
"""

from __future__ import annotations

import functools
from typing import Any

from generator.emit.writer import HostTree, RenderedFile
from generator.errors import Diagnostic, Position, Severity
from generator.load.addresses import Reach
from generator.pipeline.outcome import HostOutcome

_SEVERITIES = {s.value: s for s in Severity}


def diagnostic_json(d: Diagnostic) -> list[Any]:
    """One diagnostic as a JSON list."""
    return [d.pos.path, d.pos.line, d.pos.col, d.code, d.message, d.severity.value, d.hint]


# Diagnostics already read, by their JSON fields: a fleet repeats the same model warnings
# on every host that uses the model. Diagnostics are frozen, so one object can stand for all.
_READ: dict[tuple[Any, ...], Diagnostic] = {}
_READ_MAX = 1 << 16  # emptied when full: a bound, not an eviction policy


def diagnostic_from_json(item: Any) -> Diagnostic | None:
    """The diagnostic :func:`diagnostic_json` wrote, or None when ``item`` is not one
    (a wrong shape or type, an unknown severity, an unregistered code or its wrong severity)."""
    if type(item) is not list or len(item) != 7:
        return None
    path, line, col, code, message, severity, hint = item
    # type() is, not isinstance: JSON gives exact types, and a bool is not a line number
    if not (type(path) is str and type(line) is int and type(col) is int and line >= 0 and col >= 0
            and type(code) is str and type(message) is str and type(severity) is str
            and severity in _SEVERITIES and (hint is None or type(hint) is str)):
        return None
    key = (path, line, col, code, message, severity, hint)  # checked scalars only: hashable
    found = _READ.get(key)
    if found is None:
        try:
            found = Diagnostic(Position(path, line, col), code, message, _SEVERITIES[severity], hint)
        except ValueError:  # codes.check: not a code gen has, or not with that severity
            return None
        if len(_READ) >= _READ_MAX:
            _READ.clear()
        _READ[key] = found
    return found


def diagnostics_from_json(items: Any) -> tuple[Diagnostic, ...] | None:
    """A list of diagnostics, or None when any item is malformed."""
    if not isinstance(items, list):
        return None
    out = [diagnostic_from_json(item) for item in items]
    return None if any(d is None for d in out) else tuple(d for d in out if d is not None)


def _tree_json(tree: HostTree | None) -> tuple[Any, str]:
    """A tree as JSON data (each file's path, length of text and mode) and its files' text."""
    if tree is None:
        return None, ""
    return ({"host": tree.host, "files": [[f.relpath, len(f.text), f.mode] for f in tree.files]},
            "".join(f.text for f in tree.files))


@functools.lru_cache(maxsize=4096)  # a fleet's trees repeat the same few relative paths
def _safe_text_relpath(path: str) -> bool:
    """A relative path without empty, ``.`` or ``..`` parts (string tests: this runs per file)."""
    if not path or path[0] == "/" or "\0" in path:
        return False
    wrapped = f"/{path}/"
    return "//" not in wrapped and "/./" not in wrapped and "/../" not in wrapped


def _tree_from_json(data: Any, text: str) -> tuple[bool, HostTree | None]:
    """(valid, tree): the files' lengths must cut ``text`` into them exactly, to its end."""
    if data is None:
        return text == "", None
    if not isinstance(data, dict) or set(data) != {"host", "files"} or not isinstance(data["host"], str) \
            or not isinstance(data["files"], list):
        return False, None
    files = []
    start = 0
    for item in data["files"]:
        # type() is, not isinstance: JSON gives exact types, and a bool is neither a length nor a mode
        if not (type(item) is list and len(item) == 3):
            return False, None
        relpath, length, mode = item
        if not (type(relpath) is str and _safe_text_relpath(relpath) and type(length) is int and length >= 0
                and type(mode) is int and 0 <= mode <= 0o7777):
            return False, None
        end = start + length
        files.append(RenderedFile(relpath, text[start:end], mode))
        start = end
    if start != len(text):  # a length too long, too short, or text left over
        return False, None
    return True, HostTree(data["host"], tuple(files))


_FIELDS = {"stem", "name", "load", "render", "rendered", "tree", "models", "reach"}


def outcome_json(outcome: HostOutcome) -> tuple[dict[str, Any], str]:
    """A host's outcome (without ``detail``) as JSON data, and its tree's text (see cache.encode)."""
    tree, text = _tree_json(outcome.tree)
    return {
        "stem": outcome.stem,
        "name": outcome.name,
        "load": [diagnostic_json(d) for d in outcome.load],
        "render": [diagnostic_json(d) for d in outcome.render],
        "rendered": outcome.rendered,
        "tree": tree,
        "models": list(outcome.models),
        "reach": _reach_json(outcome.reach),
    }, text


def _reach_json(r: Reach | None) -> Any:
    if r is None:
        return None
    return [r.name, r.path, r.pos.path, r.pos.line, r.pos.col, r.target[0], r.target[1], sorted(r.shared_with),
            [[n, p.path, p.line, p.col] for n, p in r.services]]


def _reach_from_json(data: Any) -> tuple[bool, Reach | None]:
    """(valid, reach)."""
    if data is None:
        return True, None
    # type() is, not isinstance: JSON gives exact types, and a bool is not a line or a port
    if type(data) is not list or len(data) != 9:  # 8: before the services (R012); recomputed
        return False, None
    name, path, pos_path, line, col, address, port, shared, services = data
    if not (type(name) is str and type(path) is str and type(pos_path) is str and type(address) is str
            and type(line) is int and type(col) is int and type(port) is int and type(shared) is list
            and type(services) is list and all(type(v) is str for v in shared)):
        return False, None
    for s in services:  # a loop, not all(...) of a generator: this runs per service of a fleet
        if not (type(s) is list and len(s) == 4 and type(s[0]) is str and type(s[1]) is str
                and type(s[2]) is int and type(s[3]) is int):
            return False, None
    named = tuple((s[0], Position(s[1], s[2], s[3])) for s in services)
    return True, Reach(name, path, Position(pos_path, line, col), (address, port), frozenset(shared), named)


def outcome_from_json(entry: tuple[Any, str] | None, stem: str) -> HostOutcome | None:
    """The outcome :func:`outcome_json` wrote for the file ``stem``, or None when ``entry``
    (a payload and its text, as cache.load gives them) is not one."""
    if entry is None:
        return None
    data, text = entry
    if not isinstance(data, dict) or set(data) != _FIELDS or data["stem"] != stem:
        return None
    name, rendered, models = data["name"], data["rendered"], data["models"]
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        return None
    load, render = diagnostics_from_json(data["load"]), diagnostics_from_json(data["render"])
    valid, tree = _tree_from_json(data["tree"], text)
    reach_ok, reach = _reach_from_json(data["reach"])
    if (not (name is None or isinstance(name, str)) or not isinstance(rendered, bool) or load is None
            or render is None or not valid or not reach_ok):
        return None
    if tree is not None and (not rendered or tree.host != name) or (name is None and (rendered or render)):
        return None
    return HostOutcome(stem, name, load, render, rendered, tree, tuple(models), reach=reach)
