"""Network namespaces for the multi-node live tests: one per container, linked by a veth pair.

Two ranks of a multi-node deployment serve the same ``--host 0.0.0.0 --port P``; in one
network namespace rank 1's readiness check would reach rank 0's server (a false pass).
So each container gets its own namespace (``ip netns add``), the two joined by a veth
pair with addresses on 10.211.<n>.0/24. Only namespaces this module made are deleted,
by the names it recorded. ssh reaches a container through ``ProxyCommand`` running
:mod:`netns_relay` inside the namespace (``nsenter --net=...``).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

RELAY = Path(__file__).with_name("netns_relay.py")


@dataclass(frozen=True)
class Link:
    """Two namespaces joined by a veth pair: names, /run/netns paths and each side's address."""

    names: tuple[str, str]
    addresses: tuple[str, str]

    def path(self, i: int) -> Path:
        """The /run/netns path of side I (what nsenter --net= and test-host --netns take)."""
        return Path("/run/netns") / self.names[i]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


def make_link(tag: str, subnet: int) -> Link:
    """Create namespaces ``gen<tag>a``/``gen<tag>b`` with lo up and a veth pair 10.211.SUBNET.1/.2."""
    names = (f"gen{tag}a", f"gen{tag}b")
    addresses = (f"10.211.{subnet}.1", f"10.211.{subnet}.2")
    link = Link(names, addresses)
    made: list[str] = []
    try:
        for name in names:
            _ip("netns", "add", name)
            made.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
        veth = (f"v{tag}a", f"v{tag}b")
        _ip("link", "add", veth[0], "netns", names[0], "type", "veth", "peer", "name", veth[1], "netns", names[1])
        for name, dev, addr in zip(names, veth, addresses):
            _ip("-n", name, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", name, "link", "set", dev, "up")
    except BaseException:
        delete_link(Link(tuple(made) + ("",) * (2 - len(made)), addresses))  # type: ignore[arg-type]
        raise
    return link


def delete_link(link: Link) -> None:
    """Delete the namespaces LINK names (the veth pair goes with them); safe to repeat."""
    for name in link.names:
        if name and (Path("/run/netns") / name).exists():
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)


def proxy_command(netns: Path) -> str:
    """The ssh ProxyCommand that reaches %h:%p from inside NETNS."""
    return f"nsenter --net={netns} {os.environ.get('GEN_RELAY_PYTHON', 'python3')} {RELAY} %h %p"
