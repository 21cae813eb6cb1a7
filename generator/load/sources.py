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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import Diagnostic, Diagnostics
from generator.load.files import SUFFIXES, SourceFile, source_files
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
    for sf in source_files(root, "models"):
        doc = load_document(sf, MODEL_SCHEMA, "model", diags)
        if doc is None:
            broken.add(sf.stem)
            continue
        model = model_from_doc(doc)
        models[model.name] = model
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
    """What one host's render reads: the host, every model, and its multi-node peers."""

    root: Path
    models: dict[str, Model]
    host: Host
    peers: Mapping[str, PeerInventory]

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


def load_host(root: Path, sf: SourceFile, models: ModelSet, peer_files: Mapping[str, SourceFile | None],
              diags: Diagnostics) -> HostSources | None:
    """Load one host file with its peers' inventories; None (problems in ``diags``) when it fails.

    ``peer_files`` maps each name of ``models.peer_names(sf.stem)`` to its file (None
    when there is none); only those are read. Peers follow the file's stem, not the name
    written inside it (a mismatch is R003 already), so they are known before anything is
    parsed.
    """
    doc = load_document(sf, HOST_SCHEMA, "host", diags)
    if doc is None:
        return None
    host = host_from_doc(doc)
    check_host_refs(host, models.models, set(models.broken), diags)
    peers = {name: _load_peer(name, peer_files.get(name))
             for name in models.peer_names(sf.stem) if name != host.name}
    return HostSources(root, models.models, host, peers)


def load_sources(root: Path, diags: Diagnostics) -> Sources:
    """Load, validate and resolve every model and host under ``root`` (no peers, no rendering).

    Invalid documents are reported in ``diags`` and left out, so every other file is
    still checked in the same run; hosts are keyed by name (a later file wins).
    """
    models = load_models(root)
    diags.items.extend(models.diagnostics)
    hosts: dict[str, Host] = {}
    for sf in source_files(root, "hosts"):
        doc = load_document(sf, HOST_SCHEMA, "host", diags)
        if doc is not None:
            host = host_from_doc(doc)
            check_host_refs(host, models.models, set(models.broken), diags)
            hosts[host.name] = host
    return Sources(root=root, models=models.models, hosts=dict(sorted(hosts.items())))
