"""``gen host snapshot NAME``: read the host's GPU facts over ssh and write them into its inventory.

The host is reached the way every live command reaches it (:mod:`generator.live.target`,
one shared ssh connection); :func:`generator.live.facts.capture` reads the facts and
:func:`generator.live.inventory_update.update_inventory` puts them into the text of
``hosts/NAME.yaml``. The new text must load as an inventory again before anything is
written; the file is replaced atomically and keeps its mode.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.emit.writer import atomic_write
from generator.errors import Diagnostics, InputError
from generator.live.facts import LiveFacts, capture, testinfra_runner
from generator.live.inventory_update import InventoryUpdateError, Update, update_inventory
from generator.live.target import HostUnreachableError, shared_connection, target_for_host
from generator.load.files import read_file
from generator.load.manifests import load_text
from generator.load.resolve import Host, host_from_doc
from generator.load.schema import HOST_SCHEMA, check_strings, validate
from generator.pipeline.fleet import load_inventory_host


@dataclass(frozen=True)
class Snapshot:
    """One host's capture: the inventory file, its text before and after, and the notes."""

    host: str
    path: Path
    display: str
    live: LiveFacts
    before: str
    update: Update

    @property
    def diff(self) -> str:
        """The change as a unified diff (empty when nothing changed)."""
        return "".join(difflib.unified_diff(self.before.splitlines(keepends=True),
                                            self.update.text.splitlines(keepends=True),
                                            f"a/{self.display}", f"b/{self.display}"))


def _loads_back(text: str, display: str) -> None:
    """The new text must be an inventory gen reads without a finding of its own making."""
    diags = Diagnostics()
    doc = load_text(text, display, diags)
    if doc is None or not check_strings(doc, diags) or not validate(doc, HOST_SCHEMA, diags):
        raise InventoryUpdateError("the updated inventory does not validate:\n"
                                   + "\n".join(str(d) for d in diags.sorted()))
    host_from_doc(doc)


def read_host(root: Path, name: str) -> tuple[Host, str]:
    """The inventory ``name`` (exit 1 with its findings when it does not load) and its text."""
    host, own = load_inventory_host(root, name)
    if host is None or any(d.is_error for d in own):
        raise InputError(own)
    data, error = read_file(root / host.doc.path, host.doc.path)
    if error is not None or data is None:
        raise InputError([error] if error else [])
    return host, data.decode("utf-8")


def snapshot_host(root: Path, name: str, ssh_config: Path | None = None,
                  ssh_args: Sequence[str] = ()) -> Snapshot:
    """Capture host ``name`` and compute its updated inventory (nothing is written)."""
    host, text = read_host(root, name)
    target = target_for_host(host, ssh_config, ssh_args)
    with shared_connection(target) as infra:
        try:
            infra.run("true")
        except RuntimeError as exc:  # testinfra raises on ssh's 255
            raise HostUnreachableError(f"cannot reach {host.name} at {target.address} over ssh: {exc}") from exc
        vm_buses = [g.pci_bus_id for g in host.gpus if any(g.index == i for i, _ in host.vm_gpus)]
        live = capture(testinfra_runner(infra), host.sglang.python, vm_buses)
    update = update_inventory(text, host, live)
    if update.changed:
        _loads_back(update.text, host.doc.path)
    return Snapshot(host.name, root / host.doc.path, host.doc.path, live, text, update)


def write_snapshot(snap: Snapshot) -> None:
    """Replace the inventory file with the updated text (atomically, same mode)."""
    mode = os.stat(snap.path, follow_symlinks=False).st_mode & 0o7777
    atomic_write(snap.path, snap.update.text, mode)
