"""Write captured GPU facts into an inventory's text in place: ruamel.yaml's round trip.

:func:`update_inventory` takes ``hosts/<name>.yaml`` as written and the facts a capture read
(:class:`generator.live.facts.LiveFacts`), and returns the new text with:

* each GPU the host sees, found by its PCI bus id: ``memory_mib``, ``compute_cap``,
  ``numa_node`` (sysfs) and ``model`` (nvidia-smi's name, unless the written model is
  part of it: "RTX PRO 6000" names an "NVIDIA RTX PRO 6000 Blackwell Server Edition"); a ``memory_gb`` that disagrees with the
  measured memory is dropped; a GPU the inventory lacks is appended;
* ``numa``: each node's CPU list as sysfs gives it;
* ``facts``: driver, CUDA, the host torch's CUDA and arch list, the link matrix.

A value is assigned only where it differs, so every other scalar keeps its spelling, and
comments, key order, flow style, CRLF line ends, services, storage and everything else the
operator wrote stay; a new facts section goes after ``numa`` and the comment lines above the
key that followed ``numa`` stay above that key. Nothing that differs means the input text
back, byte for byte. A GPU the
inventory lists but the host does not show is left as written (a note says so; `gen
verify` fails on it): a GPU that fell off the bus is not a GPU to forget. GPUs given to
VMs are not visible to the host's driver; only their NUMA node is read.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import DoubleQuotedScalarString
from ruamel.yaml.tokens import CommentToken

from generator.errors import GenError
from generator.live.facts import LiveFacts, normalize_bus
from generator.load.resolve import MEMORY_AGREEMENT, Host

# Indentation styles tried, in order, for the one that reproduces the file (mapping, sequence, offset).
_STYLES = ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4), (4, 4, 0), (2, 4, 0), (4, 2, 0))
FACTS_COMMENT = ("Captured by `gen host snapshot {name}`; `gen verify --host {name}` fails when the host\n"
                 "no longer matches. Capture again rather than edit.")


class InventoryUpdateError(GenError, RuntimeError):
    """The updated inventory would not be one gen reads back the same way (a bug: exit 4)."""


@dataclass(frozen=True)
class Update:
    """The inventory's new text and what the operator should know about it."""

    text: str
    changed: bool
    notes: tuple[str, ...]


def model_names_gpu(written: str | None, live_name: str) -> bool:
    """True when the inventory's ``model`` names nvidia-smi's GPU (its words are part of that name)."""
    if not written:
        return False
    word = written.strip().lower().removeprefix("nvidia ").strip()
    return bool(word) and word in live_name.lower()


def _yaml(text: str) -> YAML:
    """A round-trip YAML whose indentation reproduces ``text`` exactly, when one of _STYLES does."""
    for mapping, sequence, offset in _STYLES:
        yaml = _new_yaml(mapping, sequence, offset)
        out = io.StringIO()
        yaml.dump(yaml.load(text), out)
        if out.getvalue() == text:
            return yaml
    return _new_yaml(*_STYLES[0])


def _new_yaml(mapping: int, sequence: int, offset: int) -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long flow mapping onto a second line
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _quoted(value: str) -> DoubleQuotedScalarString:
    return DoubleQuotedScalarString(value)


def _flow(items: list[Any]) -> CommentedSeq:
    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _plain(node: Any) -> Any:
    """A ruamel node as plain data (for comparing what was written with what was read)."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    return node


class _Editor:
    """Assignments that touch a mapping only where the value differs, counted."""

    def __init__(self) -> None:
        self.changes = 0

    def set(self, mapping: CommentedMap, key: str, value: Any, after: tuple[str, ...] = ()) -> None:
        """``mapping[key] = value`` unless equal; a new key goes after the first of ``after`` present."""
        if key in mapping:
            if _plain(mapping[key]) != _plain(value):
                mapping[key] = value
                self.changes += 1
            return
        anchor = next((k for k in after if k in mapping), None)
        position = list(mapping).index(anchor) + 1 if anchor is not None else len(mapping)
        mapping.insert(position, key, value)
        self.changes += 1

    def drop(self, mapping: CommentedMap, key: str) -> None:
        """Remove ``key`` if present."""
        if key in mapping:
            del mapping[key]
            self.changes += 1


def _update_gpus(data: CommentedMap, host: Host, live: LiveFacts, edit: _Editor, notes: list[str]) -> dict[str, int]:
    """Each visible GPU's facts into ``gpus``; returns bus id -> inventory index."""
    entries: CommentedSeq = data["gpus"]
    by_bus = {normalize_bus(str(e["pci_bus_id"])): e for e in entries}
    vm = {index for index, _ in host.vm_gpus}
    for gpu in live.gpus:
        entry = by_bus.get(gpu.pci_bus_id)
        if entry is None:
            entry = CommentedMap()
            entry.fa.set_flow_style()
            entry["index"] = max((int(e["index"]) for e in entries), default=-1) + 1
            entry["pci_bus_id"] = _quoted(gpu.pci_bus_id)
            entries.append(entry)
            by_bus[gpu.pci_bus_id] = entry
            edit.changes += 1
            notes.append(f"GPU {gpu.pci_bus_id} ({gpu.name}) is new: added as index {entry['index']} "
                         "(check it against PCI order, P012)")
        if gpu.memory_mib is not None:
            edit.set(entry, "memory_mib", gpu.memory_mib, after=("memory_gb", "pci_bus_id"))
            gb = entry.get("memory_gb")
            gib = gpu.memory_mib / 1024
            if gb is not None and abs(float(gb) - gib) > MEMORY_AGREEMENT * gib:
                edit.drop(entry, "memory_gb")
                notes.append(f"GPU {entry['index']}: memory_gb {gb} dropped, the host measures "
                             f"{gpu.memory_mib} MiB ({gib:.1f} GiB)")
        if gpu.compute_cap is not None:
            edit.set(entry, "compute_cap", _quoted(gpu.compute_cap), after=("memory_mib", "memory_gb", "pci_bus_id"))
        node = live.numa_node(gpu.pci_bus_id)
        if node is not None:
            edit.set(entry, "numa_node", node, after=("compute_cap", "memory_mib", "memory_gb"))
        if not model_names_gpu(entry.get("model"), gpu.name):
            if entry.get("model"):
                notes.append(f"GPU {entry['index']}: model '{entry['model']}' replaced by nvidia-smi's "
                             f"'{gpu.name}'")
            edit.set(entry, "model", gpu.name)
    for bus, entry in by_bus.items():
        index = int(entry["index"])
        if live.gpu(bus) is not None:
            continue
        if index in vm:
            node = live.numa_node(bus)  # the device is on the PCI bus even while a VM owns it
            if node is not None:
                edit.set(entry, "numa_node", node)
        else:
            notes.append(f"GPU {index} ({bus}) is not visible on the host: left as written (gen verify "
                         "fails on it); remove it if it is gone, or list it under vm_passthrough")
    return {bus: int(entry["index"]) for bus, entry in by_bus.items()}


def _update_numa(data: CommentedMap, live: LiveFacts, edit: _Editor, notes: list[str]) -> None:
    if not live.numa_cpus:
        notes.append("sysfs lists no NUMA node: numa left as written")
        return
    nodes: CommentedSeq = data["numa"]
    seen: set[int] = set()
    for entry in list(nodes):
        node = int(entry["node"])
        if node not in live.numa_cpus:
            nodes.remove(entry)
            edit.changes += 1
            notes.append(f"NUMA node {node} is not on the host: removed")
            continue
        seen.add(node)
        edit.set(entry, "cpus", _quoted(live.numa_cpus[node]))
    for node, cpus in live.numa_cpus.items():
        if node not in seen:
            entry = CommentedMap()
            entry.fa.set_flow_style()
            entry["node"] = node
            entry["cpus"] = _quoted(cpus)
            nodes.append(entry)
            edit.changes += 1


def _detach_heading(node: Any) -> str | None:
    """Cut the whole-line comments (and blank lines) after ``node``'s last value and return them.

    In the file they stand above the next top-level key: its heading, which must stay with
    that key when the facts section goes in between. An end-of-line comment stays. ruamel.yaml
    keeps them on the deepest last value inside the block (a mapping's value slot 2, a
    sequence item's slot 0, after that line's own end-of-line comment) or in a block's
    ``ca.end``; both are searched along the path to the last value.
    """
    path: list[Any] = []
    while isinstance(node, (CommentedMap, CommentedSeq)) and len(node):
        path.append(node)
        node = node[next(reversed(node)) if isinstance(node, CommentedMap) else len(node) - 1]
    heading = ""
    for block in reversed(path):  # the deepest first: file order
        last: Any = next(reversed(block)) if isinstance(block, CommentedMap) else len(block) - 1
        tokens = block.ca.items.get(last)
        slot = 2 if isinstance(block, CommentedMap) else 0
        if tokens and len(tokens) > slot and tokens[slot] is not None:
            eol, newline, rest = tokens[slot].value.partition("\n")
            if newline and rest:
                heading += rest
                if eol.strip():
                    tokens[slot].value = eol + "\n"
                else:
                    tokens[slot] = None
        if block.ca.end:
            heading += "".join(token.value for token in block.ca.end)
            block.ca.end = []
    return heading or None


def _attach_heading(data: CommentedMap, key: str, heading: str) -> None:
    """Put ``heading`` (whole comment lines, as written) above the top-level ``key``."""
    slots = data.ca.items.setdefault(key, [None, [], None, None])
    if slots[1] is None:
        slots[1] = []
    slots[1].extend(CommentToken(line + "\n", CommentMark(0)) for line in heading.splitlines())


def _facts_map(data: CommentedMap, host: Host, edit: _Editor) -> CommentedMap:
    facts = data.get("facts")
    if facts is None:
        facts = CommentedMap()
        keys = list(data)
        position = keys.index("numa") + 1 if "numa" in keys else len(keys)
        # the comments after the key before the facts head the key after them: they move with it
        heading = _detach_heading(data[keys[position - 1]]) if 0 < position < len(keys) else None
        data.insert(position, "facts", facts)
        data.yaml_set_comment_before_after_key("facts", before=FACTS_COMMENT.format(name=host.name))
        if heading is not None:
            _attach_heading(data, keys[position], heading)
        edit.changes += 1
    return facts


def _update_facts(data: CommentedMap, host: Host, live: LiveFacts, index_of: dict[str, int],
                  edit: _Editor, notes: list[str]) -> None:
    facts = _facts_map(data, host, edit)
    if live.driver_version is not None:
        edit.set(facts, "driver_version", _quoted(live.driver_version))
    if live.cuda_version is not None:
        edit.set(facts, "cuda_version", _quoted(live.cuda_version), after=("driver_version",))
    if live.torch_arch_list is None:
        notes.append(f"the torch of {host.sglang.python} could not be read ({live.torch_error}): "
                     "facts.torch_cuda and torch_arch_list left as written")
    else:
        edit.set(facts, "torch_cuda", _quoted(live.torch_cuda) if live.torch_cuda else None,
                 after=("cuda_version", "driver_version"))
        edit.set(facts, "torch_arch_list", _flow(list(live.torch_arch_list)), after=("torch_cuda",))
    buses = sorted(live.links, key=lambda b: index_of[b])
    if buses:
        topology = CommentedMap()
        topology["gpus"] = _flow([index_of[b] for b in buses])
        topology["links"] = CommentedSeq([_flow([live.links[a].get(b, "X" if a == b else "SYS") for b in buses])
                                          for a in buses])
        edit.set(facts, "topology", topology)


def update_inventory(text: str, host: Host, live: LiveFacts) -> Update:
    """``text`` (``host``'s inventory as written) with the captured facts; see the module doc."""
    original = text
    # A file written with CRLF line ends (every one of them) is edited as LF text and
    # written back with CRLF: ruamel.yaml writes LF, which would change every line.
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    yaml = _yaml(text)
    data = yaml.load(text)
    edit = _Editor()
    notes: list[str] = []
    index_of = _update_gpus(data, host, live, edit, notes)
    _update_numa(data, live, edit, notes)
    _update_facts(data, host, live, index_of, edit, notes)
    if not edit.changes:
        return Update(original, False, tuple(notes))
    out = io.StringIO()
    yaml.dump(data, out)
    new = out.getvalue()
    return Update(new.replace("\n", "\r\n") if crlf else new, True, tuple(notes))
