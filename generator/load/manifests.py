"""Load YAML sources with the line and column of every node.

ruamel.yaml composes the node graph once; we build plain Python data from it and keep,
for every path into the document, where its key and its value were written. Later
passes (schema, resolve, flags) report problems at those positions. Malformed YAML and
duplicate keys become diagnostics here, never tracebacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import _DEFAULT_YAML_VERSION, VersionedResolver

try:
    from ruamel.yaml.main import CParser
except ImportError:  # no ruamel.yaml.clib: the pure parser reads %YAML itself
    CParser = None

from generator.errors import Diagnostics, Position

DocPath = tuple[Any, ...]
_STR_TAG = "tag:yaml.org,2002:str"

# One safe loader: the composer keeps marks; no arbitrary object construction.
_YAML = YAML(typ="safe")  # libyaml (ruamel.yaml.clib) when installed: same marks, ~6x faster


class _CParserResolver(VersionedResolver):
    """ruamel's resolver, minus two failing attribute lookups per scalar under libyaml.

    With the C parser there is no Python scanner to read a ``%YAML`` directive from, so
    ruamel's ``processing_version`` always ends at the loader's version (or YAML 1.2),
    after an AttributeError per call: a tenth of composing a host file. Same answer here.
    """

    @property
    def processing_version(self) -> Any:
        version = getattr(self.loadumper, "version", None) or self._loader_version
        return version if version is not None else _DEFAULT_YAML_VERSION


if CParser is not None and _YAML.Parser is CParser:
    _YAML.Resolver = _CParserResolver


@dataclass
class Document:
    """A loaded YAML file: plain data plus positions of every key and value."""

    path: str  # as displayed in diagnostics (relative to the repo root)
    data: Any
    value_pos: dict[DocPath, tuple[int, int]] = field(default_factory=dict)
    key_pos: dict[DocPath, tuple[int, int]] = field(default_factory=dict)

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


def _build(node: Node, path: DocPath, doc: Document, diags: Diagnostics, depth: int) -> Any:
    """Turn a composed node into plain data, recording positions and duplicate keys."""
    doc.value_pos[path] = _mark(node)
    if depth > 64:  # an alias loop or absurd nesting: refuse instead of recursing forever
        diags.error(doc.pos(path), "Y003", "YAML nesting is too deep (more than 64 levels)")
        return None
    if isinstance(node, ScalarNode):
        if node.tag == _STR_TAG:
            return node.value  # what the constructor returns for a string, without its dispatch
        if node.tag == "tag:yaml.org,2002:merge":
            diags.error(doc.pos(path), "Y004", "YAML merge keys ('<<') are not supported")
            return None
        return _YAML.constructor.construct_object(node, deep=True)
    if isinstance(node, SequenceNode):
        return [_build(item, path + (i,), doc, diags, depth + 1) for i, item in enumerate(node.value)]
    if isinstance(node, MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                diags.error(
                    Position(doc.path, *_mark(key_node)),
                    "Y004" if key_node.tag == "tag:yaml.org,2002:merge" else "Y005",
                    "YAML merge keys ('<<') are not supported"
                    if key_node.tag == "tag:yaml.org,2002:merge"
                    else "a mapping key must be a plain scalar",
                )
                continue
            key = key_node.value if key_node.tag == _STR_TAG else _YAML.constructor.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                key = str(key)  # e.g. a date used as key; keep it hashable
            kpath = path + (key,)
            if key in result:
                first = doc.key_pos[kpath]
                diags.error(
                    Position(doc.path, *_mark(key_node)),
                    "Y002",
                    f"duplicate key '{key}' (first defined at line {first[0]})",
                )
                continue
            doc.key_pos[kpath] = _mark(key_node)
            result[key] = _build(value_node, kpath, doc, diags, depth + 1)
        return result
    diags.error(doc.pos(path), "Y005", f"unsupported YAML node {type(node).__name__}")
    return None


def load_text(text: str, display_path: str, diags: Diagnostics) -> Document | None:
    """Parse YAML text; on malformed YAML record Y001 and return None."""
    doc = Document(display_path, None)
    try:
        root = _YAML.compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        problem = exc.problem or exc.context or "malformed YAML"
        diags.error(Position(display_path, line, col), "Y001", f"malformed YAML: {problem}")
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
    try:
        doc.data = _build(root, (), doc, diags, 0)
    except (YAMLError, ValueError, TypeError) as exc:  # e.g. an invalid timestamp scalar
        diags.error(Position(display_path, 1, 1), "Y001", f"malformed YAML: {exc}")
        return None
    return doc


def load_file(path: Path, display_path: str, diags: Diagnostics) -> Document | None:
    """Read and parse one YAML file; unreadable or non-UTF-8 files become diagnostics."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.error(Position(display_path, 0, 0), "Y007", f"not UTF-8 text: {exc.reason} at byte {exc.start}")
        return None
    except OSError as exc:
        diags.error(Position(display_path, 0, 0), "Y008", f"cannot read file: {exc.strerror}")
        return None
    return load_text(text, display_path, diags)
