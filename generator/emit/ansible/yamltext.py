"""The one writer of the YAML gen puts into ``ansible/``: every value is data, never a template.

Ansible templates every string it reads from an inventory or a playbook's ``vars:``, on
the controller, with the operator's keys and permissions. A value from the repository
(``sglang.python``, a path, a name) holding ``{{ lookup('pipe', ...) }}`` would run there.
So every string value written into ``ansible/`` goes through this module:

* :func:`scalar` writes a string tagged ``!unsafe`` (Ansible's own "never template this"
  tag, honoured by its YAML loader in inventories and playbooks alike), JSON-quoted so
  YAML reads back exactly the same characters (JSON's string escapes are a subset of
  YAML's double-quoted ones). ansible-core 2.19 reads a tagged scalar as if it were
  plain, quotes ignored (``!unsafe "0644"`` is the integer 420, ``!unsafe ""`` is None),
  so a string whose plain form YAML 1.1 reads as another type (a number, a boolean,
  null, a date) is written quoted and untagged instead: such a string holds no
  template syntax (asserted), so Ansible has nothing to evaluate in it;
* :class:`GenJinja` marks the few strings that are gen's own Jinja (constants of gen's
  code, e.g. ``{{ inventory_dir }}/{{ gen_output_rel }}``): only these are written
  untagged, and they must never be built from repository text;
* :func:`dump` writes a whole data tree (mappings, lists, strings, numbers, booleans,
  None) in block style with :func:`scalar` for every value. Mapping keys are gen's
  variable names or the repository's validated host and group names: a key with
  template syntax is refused (no legitimate key has it), a key YAML could misread is
  JSON-quoted.

The text of ``site.yml`` and ``rollout.yml`` is gen's own; the values placed into it come
from :func:`scalar` too. ``tests/test_ansible_unsafe.py`` proves with ansible-core's own
Templar that every variable of the generated files renders to itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

UNSAFE_TAG = "!unsafe"
# What Jinja (and so Ansible) would start to evaluate; never in a key gen writes.
TEMPLATE_SYNTAX = re.compile(r"\{\{|\{%|\{#|\}\}|%\}|#\}")
# A key written plain: YAML reads it back as this very string (no tag, no number, no bool).
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_YAML_WORDS = frozenset({"y", "yes", "n", "no", "true", "false", "on", "off", "null"})
INDENT = 2
# Ansible's loader resolves plain scalars as YAML 1.1 does (PyYAML's resolver).
_RESOLVER = VersionedResolver(version=(1, 1))
_STR_TAG = "tag:yaml.org,2002:str"


class GenJinja(str):
    """A Jinja expression that is gen's own text (a constant of gen's code), written untagged."""

    __slots__ = ()


def scalar(value: Any) -> str:
    """VALUE as one YAML scalar: a string tagged ``!unsafe`` (GenJinja: untagged), else plain.

    >>> scalar("/opt/{{ x }}/python")
    '!unsafe "/opt/{{ x }}/python"'
    """
    if isinstance(value, GenJinja):
        return json.dumps(str(value))
    if isinstance(value, str):
        if _RESOLVER.resolve(ScalarNode, value, (True, False)) == _STR_TAG:
            return f"{UNSAFE_TAG} {json.dumps(value)}"
        # "0644", "", "22", "yes": read as another type under the tag; no template syntax in them.
        if TEMPLATE_SYNTAX.search(value):
            raise AssertionError(f"YAML reads {value!r} as a non-string yet it holds template syntax")
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return "null"
    raise TypeError(f"not a YAML scalar for ansible/: {type(value).__name__}")


def key(name: Any) -> str:
    """A mapping key: plain when YAML reads it back as written, else JSON-quoted; templates refused."""
    if not isinstance(name, str):
        raise TypeError(f"a key in ansible/ must be a string, got {type(name).__name__}")
    if TEMPLATE_SYNTAX.search(name):
        raise ValueError(f"template syntax in a key written into ansible/: {name!r}")
    if _PLAIN_KEY.fullmatch(name) and name.lower() not in _YAML_WORDS:
        return name
    return json.dumps(name)


def _empty(value: Any) -> str | None:
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, (list, tuple)) and not value:
        return "[]"
    return None


def _is_node(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple)) and bool(value)


def _mapping(data: Mapping[str, Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for name, value in data.items():
        empty = _empty(value)
        if empty is not None:
            out.append(f"{pad}{key(name)}: {empty}")
        elif _is_node(value):
            out.append(f"{pad}{key(name)}:")
            _node(value, indent + INDENT, out)
        else:
            out.append(f"{pad}{key(name)}: {scalar(value)}")


def _sequence(data: Sequence[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for value in data:
        empty = _empty(value)
        if empty is not None:
            out.append(f"{pad}- {empty}")
        elif isinstance(value, Mapping):
            # "- " then the mapping's first key on the same line, the others under it.
            inner: list[str] = []
            _mapping(value, indent + INDENT, inner)
            out.append(f"{pad}- {inner[0].lstrip()}")
            out.extend(inner[1:])
        elif _is_node(value):
            out.append(f"{pad}-")
            _node(value, indent + INDENT, out)
        else:
            out.append(f"{pad}- {scalar(value)}")


def _node(data: Any, indent: int, out: list[str]) -> None:
    if isinstance(data, Mapping):
        _mapping(data, indent, out)
    elif isinstance(data, (list, tuple)):
        _sequence(data, indent, out)
    else:
        out.append(" " * indent + scalar(data))


def dump(data: Any) -> str:
    """DATA as block-style YAML text, every string value through :func:`scalar`."""
    empty = _empty(data)
    if empty is not None:
        return empty + "\n"
    out: list[str] = []
    _node(data, 0, out)
    return "\n".join(out) + "\n"
