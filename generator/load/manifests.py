"""Load YAML sources with the line and column of every node.

The document is composed by ruamel.yaml (the node graph) and walked here, which reports
what is wrong; we get plain Python data and, for every path into the document, where its
key and its value were written. Later
passes (schema, resolve, flags) report problems at those positions. Malformed YAML and
duplicate keys become diagnostics here, never tracebacks.

Hostile input is bounded before it is composed (:mod:`generator.load.limits`: depth, alias
expansion, scalar length, one document, core tags only) and read without following links or
blocking (:mod:`generator.load.files`). Building the data counts nodes again, because an
alias to an enclosing anchor makes a cycle the event count cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from generator.errors import Diagnostics, GenError, Position
from generator.load import libyaml, limits, yaml_errors
from generator.load.files import SourceFile, read_file

DocPath = tuple[Any, ...]
_STR_TAG = "tag:yaml.org,2002:str"

_YAML = libyaml.YAML_SAFE  # its constructor makes the non-string scalars


@dataclass
class Document:
    """A loaded YAML file: plain data plus positions of every key and value."""

    path: str  # as displayed in diagnostics (relative to the repo root)
    data: Any
    value_pos: dict[DocPath, tuple[int, int]] = field(default_factory=dict)
    key_pos: dict[DocPath, tuple[int, int]] = field(default_factory=dict)
    # Values already refused by the whole-document walk (load/values.py): the schema does not
    # report them a second time.
    refused: set[DocPath] = field(default_factory=set)
    # Leaves the schema refused and load/taint.py took out of ``data`` so the rest of the
    # document is still checked; a document with any is never rendered.
    dropped: frozenset[DocPath] = frozenset()
    # The secrets written in it (generator/secrecy.py secret_values), which no finding about
    # it may quote: a stage's Diagnostics collector is told them (Diagnostics.hide).
    secrets: frozenset[str] = frozenset()

    def pos(self, path: DocPath = (), key: bool = False) -> Position:
        """Position of the value (or key) at ``path``; falls back to the nearest parent."""
        table = self.key_pos if key else self.value_pos
        probe = tuple(path)
        while probe:
            if probe in table:
                line, col = table[probe]
                return Position(self.path, line, col)
            if probe in self.value_pos:
                line, col = self.value_pos[probe]
                return Position(self.path, line, col)
            probe = probe[:-1]
        line, col = self.value_pos.get((), (1, 1))
        return Position(self.path, line, col)


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Budget:
    """Nodes left to build (an alias is built again wherever it is used), and whether a value
    could not be constructed (then the document is not checked further: no "null" noise)."""

    def __init__(self, max_nodes: int) -> None:
        self.left = self.max_nodes = max_nodes
        self.failed = False


class _TooBig(GenError, ValueError):  # internal: caught in this module
    """Building stopped: an alias cycle or nesting past the limits (one error, no data)."""

    def __init__(self, path: DocPath, code: str, message: str):
        super().__init__(message)
        self.path, self.code, self.message = path, code, message


def _scalar(node: ScalarNode, path: DocPath, doc: Document, diags: Diagnostics, budget: _Budget) -> Any:
    """Construct one scalar; a value Python refuses (a 5,000-digit integer) is positioned."""
    if node.tag == _STR_TAG:
        return node.value  # what the constructor returns for a string
    if node.tag == "tag:yaml.org,2002:merge":
        diags.error(doc.pos(path), "Y004", "YAML merge keys ('<<') are not supported")
        budget.failed = True
        return None
    try:
        return _YAML.constructor.construct_object(node, deep=True)
    except (YAMLError, ValueError, TypeError, OverflowError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "digits" in text:  # Python's int-from-string limit (sys.get_int_max_str_digits)
            text = f"a number with {len(node.value)} characters is too long"
        diags.error(Position(doc.path, *_mark(node)), "Y001", f"invalid value: {text}")
        budget.failed = True
        return None


def _build(node: Node, path: DocPath, doc: Document, diags: Diagnostics, depth: int,
           budget: _Budget) -> Any:
    """Turn a composed node into plain data, recording positions and duplicate keys.

    Raises _TooBig past MAX_NODES (an alias cycle such as ``&a [*a, *a]`` doubles at every
    level, which the event count of limits.prescan cannot see) or MAX_DEPTH.
    """
    budget.left -= 1
    if budget.left < 0:
        raise _TooBig(path, "Y013", f"the document has more than {budget.max_nodes} values once YAML "
                      "aliases are expanded (an alias inside its own anchor?)")
    mark = node.start_mark
    doc.value_pos[path] = (mark.line + 1, mark.column + 1)  # _mark, inline: once per node
    if depth > limits.MAX_DEPTH:
        raise _TooBig(path, "Y003", f"YAML nesting is too deep (more than {limits.MAX_DEPTH} levels; "
                      "an alias inside its own anchor?)")
    if isinstance(node, ScalarNode):
        return _scalar(node, path, doc, diags, budget)
    if isinstance(node, SequenceNode):
        return [_build(item, path + (i,), doc, diags, depth + 1, budget) for i, item in enumerate(node.value)]
    if isinstance(node, MappingNode):
        return _mapping(node, path, doc, diags, depth, budget)
    diags.error(doc.pos(path), "Y005", f"unsupported YAML node {type(node).__name__}")
    return None


def _mapping(node: MappingNode, path: DocPath, doc: Document, diags: Diagnostics, depth: int,
             budget: _Budget) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            merge = key_node.tag == "tag:yaml.org,2002:merge"
            budget.failed = True  # the data would be a guess: nothing else is checked
            diags.error(Position(doc.path, *_mark(key_node)), "Y004" if merge else "Y005",
                        "YAML merge keys ('<<') are not supported" if merge
                        else "a mapping key must be a plain scalar")
            continue
        key = _scalar(key_node, path, doc, diags, budget)
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            key = str(key)  # e.g. a date used as key; keep it hashable
        kpath = path + (key,)
        if key in result:
            first = doc.key_pos[kpath]
            diags.error(Position(doc.path, *_mark(key_node)), "Y002",
                        f"duplicate key '{key}' (first defined at line {first[0]})",
                        "keep one of the two: gen never picks one for you")
            continue
        doc.key_pos[kpath] = _mark(key_node)
        result[key] = _build(value_node, kpath, doc, diags, depth + 1, budget)
    return result


def load_text(text: str, display_path: str, diags: Diagnostics,
              max_nodes: int = limits.MAX_NODES) -> Document | None:
    """Parse YAML text: bound its events (at most ``max_nodes`` values), compose the nodes and
    walk them; on a problem record it (Y001 for malformed YAML, ...) and return None."""
    doc = Document(display_path, None)
    try:
        if not limits.prescan(text, display_path, diags, max_nodes):
            return None
        root = libyaml.compose(text)
    except MarkedYAMLError as exc:  # in plain words where the mistake is a known one (Y020-Y028)
        found = yaml_errors.explain(text, exc)
        diags.error(Position(display_path, found.line, found.col), found.code, found.message, found.fix)
        return None
    except ReaderError as exc:  # a character YAML does not allow (control characters)
        before = text[: exc.position]
        line, col = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        diags.error(Position(display_path, line, col), "Y001",
                    f"malformed YAML: character U+{ord(str(exc.character)[:1]) if isinstance(exc.character, str) else exc.character:04X} is not allowed ({exc.reason})")
        return None
    except (YAMLError, ValueError) as exc:
        diags.error(Position(display_path, 1, 1), "Y001", f"malformed YAML: {exc}")
        return None
    if root is None:
        diags.error(Position(display_path, 1, 1), "Y006", "the file is empty")
        return None
    budget = _Budget(max_nodes)
    try:
        doc.data = _build(root, (), doc, diags, 0, budget)
    except _TooBig as stop:
        diags.error(doc.pos(stop.path), stop.code, stop.message)
        return None
    except (YAMLError, ValueError, TypeError) as exc:  # not expected: scalars are handled above
        diags.error(Position(display_path, 1, 1), "Y001", f"malformed YAML: {exc}")
        return None
    return None if budget.failed else doc


def load_bytes(data: bytes, display_path: str, diags: Diagnostics,
               max_nodes: int = limits.MAX_NODES) -> Document | None:
    """Decode UTF-8 (a UTF-8 byte-order mark is allowed) and parse; other encodings are Y007."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        diags.error(Position(display_path, 1, 1), "Y007", "the file is UTF-16 or UTF-32: save it as UTF-8")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        diags.error(Position(display_path, line, col), "Y007",
                    f"not UTF-8 text: {exc.reason} at byte {exc.start}")
        return None
    return load_text(text.removeprefix("\ufeff"), display_path, diags, max_nodes)


def load_source(source: SourceFile, diags: Diagnostics) -> Document | None:
    """Parse a file read by :func:`generator.load.files.source_files` (or report why it was not)."""
    if source.error is not None or source.data is None:
        if source.error is not None:
            diags.add(source.error)
        return None
    return load_bytes(source.data, source.display, diags)


def load_file(path: Path, display_path: str, diags: Diagnostics,
              max_nodes: int = limits.MAX_NODES) -> Document | None:
    """Read (regular files only, bounded, no symlink) and parse one YAML file of at most ``max_nodes`` values."""
    data, error = read_file(path, display_path)
    if error is not None or data is None:
        if error is not None:
            diags.add(error)
        return None
    return load_bytes(data, display_path, diags, max_nodes)


def plain_data(data: Any) -> Any:
    """YAML data as plain dicts, lists and built-in scalars: ruamel's round-trip containers
    and string types (``CommentedMap``, ``DoubleQuotedScalarString``) and tuples dropped,
    keys as text. For comparing or printing what a file holds, whatever loaded it."""
    if isinstance(data, dict):
        return {str(k): plain_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [plain_data(v) for v in data]
    if isinstance(data, str):
        return str(data)
    return data
