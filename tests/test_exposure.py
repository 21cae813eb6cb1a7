"""R010: a listener beyond loopback without an API key is a warning (generator.load.exposure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import Diagnostics
from generator.load.files import SourceFile
from generator.load.exposure import check_listeners
from generator.load.resolve import host_from_doc
from generator.load.sources import load_document
from generator.load.schema import HOST_SCHEMA

HOST = ("name: h\naddress: h.lan\ngpus: [{index: 0, pci_bus_id: '00000000:01:00.0', memory_gb: 1, numa_node: 0}]\n"
        "numa: [{node: 0, cpus: '0'}]\nstorage: {model_root: /m}\nsglang: {pin: 0.5.9, python: /usr/bin/python3}\n"
        "services:\n  - {name: s, model: m, port: 30000, listen: '%s'}\n")


def _warnings(listen: str) -> list[str]:
    diags = Diagnostics()
    doc = load_document(SourceFile(Path("hosts/h.yaml"), "hosts/h.yaml", (HOST % listen).encode()),
                       HOST_SCHEMA, "host", diags)
    assert doc is not None, [str(d) for d in diags.items]
    check_listeners(host_from_doc(doc), diags)
    return [str(d) for d in diags.items]


@pytest.mark.parametrize("listen", ["0.0.0.0", "::", "192.168.1.5", "fe80::1"])
def test_beyond_loopback_without_a_key_warns(listen: str) -> None:
    assert _warnings(listen) == [
        f"hosts/h.yaml:8:46: warning[R010]: service 's' listens on {listen}, beyond loopback, with no API key: "
        "anyone who reaches port 30000 can use it (add --api-key to secret_args, or listen on 127.0.0.1 behind "
        "an authenticating proxy)"]


@pytest.mark.parametrize("listen", ["127.0.0.1", "127.0.0.53", "::1"])
def test_loopback_is_quiet(listen: str) -> None:
    assert _warnings(listen) == []
