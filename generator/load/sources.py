"""Loading one file at a time: the models, each host file, and each host with its peers.

This is the only way the pipeline reads ``models/`` and ``hosts/`` (generator/pipeline):
:func:`source_files` lists a folder, :func:`load_models` loads every model manifest, and
:func:`load_host` loads one host file into a :class:`HostSources`, the host together with
the inventories of the hosts it shares a multi-node model with. Rendering never reads a
file; ``resolve.load_sources`` is these same pieces over a whole repository.

A file's bytes are read once (:class:`generator.load.files.SourceFile`: regular files only,
never through a symlink, bounded), and every later check sees exactly the bytes that were loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import Diagnostic, Diagnostics
from generator.load.files import SUFFIXES, SourceFile, case_collisions_of, source_files, unread_entries
from generator.load.names import group_collisions
from generator.secrecy import secret_values
from generator.load.limits import cap
from generator.load.manifests import Document, load_source
from generator.load.resolve import (
    Host,
    Model,
    Sources,
    check_host_refs,
    check_name_matches_file,
    host_from_doc,
    model_from_doc,
)
from generator.load.schema import HOST_SCHEMA, MODEL_SCHEMA, check_strings, validate
from generator.load.taint import taint

YAML_SUFFIXES = SUFFIXES


def load_document(sf: SourceFile, schema: dict[str, Any], kind: str, diags: Diagnostics) -> Document | None:
    """Parse, check the strings and numbers of, and validate one file; None when any failed.

    A document whose schema errors are all on leaves :mod:`generator.load.taint` may drop
    comes back without them (``Document.dropped``), its errors still in ``diags``.

    ``sf`` comes from :func:`generator.load.files.source_files` (regular files only, no
    symlinks, bounded; an unreadable entry carries its diagnostic). A file reports at most
    ``limits.MAX_DIAGNOSTICS`` findings, then one "and K more" line.
    """
    start = len(diags.items)
    doc = load_source(sf, diags)
    if doc is not None:
        doc.secrets = frozenset(secret_values(doc.data))
        diags.hide(doc.secrets)
    clean = doc is not None and check_strings(doc, diags)
    # Schema errors are worth reporting even when the strings were bad.
    valid = doc is not None and validate(doc, schema, diags) and clean
    if doc is not None and clean and not valid:
        # Errors only on leaves nothing structural needs: check the rest anyway (load/taint.py).
        doc = taint(doc, schema, kind)
        valid = doc is not None
    if valid and doc is not None:
        check_name_matches_file(doc, sf.stem, kind, diags)
    cap(diags, start, sf.display)
    return doc if valid else None


@dataclass(frozen=True)
class ModelSet:
    """Every model manifest, resolved: by name in name order, plus the files that failed."""

    models: dict[str, Model]
    broken: frozenset[str]  # stems of model files that did not load
    diagnostics: tuple[Diagnostic, ...]

    def peer_names(self, host: str) -> tuple[str, ...]:
        """Every host that a multi-node model lists together with ``host`` (itself included)."""
        names: set[str] = set()
        for model in self.models.values():
            if model.multinode is not None and host in model.multinode.hosts:
                names.update(model.multinode.hosts)
        return tuple(sorted(names))


def load_models(root: Path) -> ModelSet:
    """Load, validate and resolve every file of ``models/``; problems go into the set's diagnostics."""
    diags = Diagnostics()
    models: dict[str, Model] = {}
    broken: set[str] = set()
    files = source_files(root, "models")
    for sf in files:
        doc = load_document(sf, MODEL_SCHEMA, "model", diags)
        if doc is None:
            broken.add(sf.stem)
            continue
        model = model_from_doc(doc)
        models[model.name] = model
    # Names derived from model names stay distinct: files, Ansible groups (load/names.py).
    diags.items.extend(case_collisions_of(files))
    diags.items.extend(unread_entries(root, "models"))
    diags.items.extend(group_collisions([(m.name, m.pos("name")) for m in models.values() if m.multinode]))
    return ModelSet(dict(sorted(models.items())), frozenset(broken), tuple(diags.items))


@dataclass(frozen=True)
class PeerInventory:
    """Another node's inventory as a host's render sees it."""

    name: str
    display: str  # hosts/<name>.yaml (or .yml)
    exists: bool
    host: Host | None  # None: missing, invalid, or naming another host


@dataclass(frozen=True)
class HostSources:
    """What one host's render reads: the host, every model, and its multi-node peers.

    ``nodes`` is shared by every member of one multi-node group (:func:`load_group`): how
    each node places and launches its service, worked out once per group rather than once
    per member and peer (generator/plan/cluster.py keeps it; n**2 of them took 51 s for 256).
    """

    root: Path
    models: dict[str, Model]
    host: Host
    peers: Mapping[str, PeerInventory]
    nodes: dict[tuple[str, ...], Any] = field(default_factory=dict, compare=False, repr=False)

    def peer(self, name: str) -> PeerInventory:
        """The inventory of host ``name`` (this host itself, or one it shares a model with)."""
        if name == self.host.name:
            return PeerInventory(name, self.host.doc.path, True, self.host)
        return self.peers.get(name) or PeerInventory(name, f"hosts/{name}.yaml", False, None)


def _load_peer(name: str, sf: SourceFile | None) -> PeerInventory:
    """A peer's inventory, loaded quietly: the peer's own render reports its problems."""
    if sf is None:
        return PeerInventory(name, f"hosts/{name}.yaml", False, None)
    doc = load_document(sf, HOST_SCHEMA, "host", Diagnostics())
    host = host_from_doc(doc) if doc is not None else None
    return PeerInventory(name, sf.display, True, host if host is not None and host.name == name else None)


def load_group(root: Path, members: Sequence[SourceFile], models: ModelSet,
               peer_files: Mapping[str, SourceFile | None]) -> list[tuple[HostSources | None, Diagnostics]]:
    """Load the host files of one multi-node group (its members, in order) once each.

    Each member's own findings go into its Diagnostics; a member that does not load has
    None. Every member sees the others as peers from the one load (the document, not a copy
    of it read again), and a peer outside ``members`` (a file of ``peer_files``, or none) is
    loaded once, quietly: its own render reports its problems. Before, every member loaded
    every peer again: n**2 host documents for a group of n.
    """
    inventories: dict[str, PeerInventory] = {}
    loaded: list[tuple[SourceFile, Host | None, Diagnostics]] = []
    for sf in members:
        diags = Diagnostics()
        doc = load_document(sf, HOST_SCHEMA, "host", diags)
        host = host_from_doc(doc) if doc is not None else None
        inventories[sf.stem] = PeerInventory(sf.stem, sf.display, True,
                                             host if host is not None and host.name == sf.stem else None)
        loaded.append((sf, host, diags))
    nodes: dict[tuple[str, ...], Any] = {}  # one per group: every member's sources share it
    out: list[tuple[HostSources | None, Diagnostics]] = []
    for sf, host, diags in loaded:
        if host is None:
            out.append((None, diags))
            continue
        check_host_refs(host, models.models, set(models.broken), diags)
        peers = {}
        for name in models.peer_names(sf.stem):
            if name == host.name:
                continue
            if name not in inventories:
                inventories[name] = _load_peer(name, peer_files.get(name))
            peers[name] = inventories[name]
        out.append((HostSources(root, models.models, host, peers, nodes), diags))
    return out


def load_host(root: Path, sf: SourceFile, models: ModelSet, peer_files: Mapping[str, SourceFile | None],
              diags: Diagnostics) -> HostSources | None:
    """Load one host file with its peers' inventories; None (problems in ``diags``) when it fails.

    ``peer_files`` maps each name of ``models.peer_names(sf.stem)`` to its file (None
    when there is none); only those are read. Peers follow the file's stem, not the name
    written inside it (a mismatch is R003 already), so they are known before anything is
    parsed. :func:`load_group` of one member.
    """
    [(sources, own)] = load_group(root, [sf], models, peer_files)
    diags.items.extend(own.items)
    return sources


def load_sources(root: Path, diags: Diagnostics) -> Sources:
    """Load, validate and resolve every model and host under ``root`` (no peers, no rendering).

    Invalid documents are reported in ``diags`` and left out, so every other file is
    still checked in the same run; hosts are keyed by name (a later file wins).
    """
    models = load_models(root)
    diags.items.extend(models.diagnostics)
    hosts: dict[str, Host] = {}
    files = source_files(root, "hosts")
    diags.items.extend(case_collisions_of(files))
    diags.items.extend(unread_entries(root, "hosts"))
    for sf in files:
        doc = load_document(sf, HOST_SCHEMA, "host", diags)
        if doc is not None:
            host = host_from_doc(doc)
            check_host_refs(host, models.models, set(models.broken), diags)
            hosts[host.name] = host
    return Sources(root=root, models=models.models, hosts=dict(sorted(hosts.items())))
