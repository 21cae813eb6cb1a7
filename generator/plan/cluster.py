"""Multi-node deployments: one model replica spread over several hosts, checked as a whole.

A model manifest's ``multinode: {hosts: [a, b], port: P}`` lists the hosts of one replica
in node-rank order (rank 0 first). Each listed host runs exactly one service with that
model; gen renders one unit per host with ``--nnodes``, ``--node-rank`` and
``--dist-init-addr`` (rank 0's ``network.address`` and P, IPv6 as ``[addr]:P``), and the
host's own ``network.interface`` as ``NCCL_SOCKET_IFNAME``/``GLOO_SOCKET_IFNAME``.
Every node gets the same SGLang flags except ``--node-rank``, the same pin, the same
environment, and ``tp x pp / nnodes`` GPUs (placement uses ``Model.gpus_per_node``).

Each host's render reports, at its own lines, every cluster problem that stops its unit,
naming the other place in the message. So ``gen render --host b`` is as strict as
``--all``, and no line is printed twice (a difference between two nodes is one line at
each node). Peer inventories are loaded with the host (``HostSources.peer``,
generator/load/sources.py); nothing here reads a file. A peer's own problems (its flags,
its GPUs) are reported by the peer's render, not repeated here.

Codes: P020 serves a multi-node model without being listed; P021 runs it in two
services; P022 no ``network`` in a member's inventory; P023 a listed host has no valid
inventory; P024 a listed host runs no service with the model; P025 a host listed twice;
P026 ``multinode.port`` is a service port on rank 0; P027 SGLang pins differ; P028 an
SGLang flag differs; P029 an environment variable differs.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace
from typing import Sequence

from generator.plan.argv import ServiceArgv, build_argv
from generator.sglang.catalog import Catalog
from generator.errors import Diagnostics, Position
from generator.load.resolve import Host, Model, ServiceSpec
from generator.load.sources import HostSources
from generator.plan.placement import ClusterNode, Placement, place_host, port_hint

# Flags that may differ between nodes: only the rank.
PER_NODE_DESTS = frozenset({"node_rank"})


@dataclass(frozen=True)
class Peer:
    """Another node of a deployment as this host's render sees it."""

    name: str
    rank: int
    host: Host | None  # None: no valid inventory
    services: tuple[ServiceSpec, ...]  # its services running the model


def load_peer(sources: HostSources, name: str) -> Host | None:
    """The valid inventory of host ``name`` (this host or a peer); None if it has none."""
    return sources.peer(name).host


def dist_init_addr(address: str, port: int) -> str:
    """``address:port``; an IPv6 literal in brackets, as SGLang and torch split it."""
    try:
        if isinstance(ipaddress.ip_address(address), ipaddress.IPv6Address):
            return f"[{address}]:{port}"
    except ValueError:
        pass  # a DNS name
    return f"{address}:{port}"


def _serving(host: Host, model: str) -> tuple[ServiceSpec, ...]:
    return tuple(s for s in host.services if s.model == model)


def _peers(sources: HostSources, model: Model) -> list[Peer]:
    """The nodes of ``model`` in rank order, as the group's members were loaded (once per
    group: every member asks, ``sources.nodes``)."""
    assert model.multinode is not None
    key = ("peers", model.name)
    if key not in sources.nodes:
        out = []
        for rank, name in enumerate(model.multinode.hosts):
            host = load_peer(sources, name)
            out.append(Peer(name, rank, host, _serving(host, model.name) if host else ()))
        sources.nodes[key] = out
    found: list[Peer] = sources.nodes[key]
    return found


def node_for(sources: HostSources, host: Host, model: Model) -> ClusterNode | None:
    """This host's node settings for ``model``, or None when they cannot be derived."""
    mn = model.multinode
    if mn is None or host.name not in mn.hosts or host.network is None:
        return None
    rank0 = load_peer(sources, mn.hosts[0])
    if rank0 is None or rank0.network is None:
        return None
    peers = tuple(sorted({rank0.doc.path} - {host.doc.path}))
    return ClusterNode(nnodes=len(mn.hosts), rank=mn.hosts.index(host.name),
                       dist_init_addr=dist_init_addr(rank0.network.address, mn.port),
                       interface=host.network.interface, peers=peers)


def _check_listed_without_service(sources: HostSources, host: Host, diags: Diagnostics) -> None:
    """P024 at this host: a model lists it as a node, but it runs no service with that model."""
    for model in sources.models.values():
        mn = model.multinode
        if mn is None or host.name not in mn.hosts or _serving(host, model.name):
            continue
        rank = mn.hosts.index(host.name)
        diags.error(host.pos("name"), "P024",
                    f"host '{host.name}' is rank {rank} of model '{model.name}' "
                    f"({model.pos('multinode', 'hosts', rank)}) but runs no service with it",
                    f"add a service with model: {model.name}, or remove '{host.name}' from multinode.hosts")


def _check_membership(sources: HostSources, host: Host, svc: ServiceSpec, model: Model,
                      diags: Diagnostics) -> None:
    """Whether this service and every other node of its deployment can take part."""
    mn = model.multinode
    assert mn is not None
    where = svc.pos("model")
    listed = model.pos("multinode", "hosts")
    if host.name not in mn.hosts:
        diags.error(where, "P020", f"service '{svc.name}' runs multi-node model '{model.name}', "
                    f"but host '{host.name}' is not in its multinode.hosts ({listed}: {', '.join(mn.hosts)})",
                    "add the host there, in rank order")
        return
    mine = _serving(host, model.name)
    if len(mine) > 1 and svc is not mine[0]:
        diags.error(where, "P021", f"service '{svc.name}' runs model '{model.name}' again on host "
                    f"'{host.name}' (also service '{mine[0].name}'); a multi-node deployment has one "
                    "service per node")
        return
    seen: dict[str, int] = {}
    for rank, name in enumerate(mn.hosts):
        if name in seen:
            diags.error(where, "P025", f"host '{name}' is listed twice in multinode.hosts of model "
                        f"'{model.name}' (ranks {seen[name]} and {rank}, {listed})")
        seen.setdefault(name, rank)
    if host.network is None:
        diags.error(where, "P022", f"host '{host.name}' runs multi-node model '{model.name}' but its "
                    "inventory has no network section",
                    "add network: {address: <IP other nodes reach>, interface: <NIC name>}")
    for peer in _peers(sources, model):
        if peer.name == host.name:
            continue
        if peer.host is None:
            inventory = sources.peer(peer.name)
            display = inventory.display
            state = "has errors" if inventory.exists else "does not exist"
            diags.error(where, "P023", f"host '{peer.name}' (rank {peer.rank} of model '{model.name}', "
                        f"{model.pos('multinode', 'hosts', peer.rank)}): its inventory {display} {state}")
        elif not peer.services:
            diags.error(where, "P024", f"host '{peer.name}' (rank {peer.rank} of model '{model.name}') "
                        f"runs no service with it ({peer.host.doc.path})")
        elif peer.rank == 0 and peer.host.network is None:
            diags.error(where, "P022", f"rank 0 host '{peer.name}' has no network section in "
                        f"{peer.host.doc.path}: --dist-init-addr takes its network.address")
    if mn.hosts[0] == host.name:
        for other in host.services:
            if other.port == mn.port:
                diags.error(other.pos("port"), "P026", f"port {mn.port} of service '{other.name}' is the "
                            f"--dist-init-addr port of model '{model.name}' ({model.pos('multinode', 'port')}) "
                            f"on its rank 0 host '{host.name}'", port_hint(host, mn.port, [mn.port]))


def join(sources: HostSources, host: Host, placements: Sequence[Placement], diags: Diagnostics) -> tuple[Placement, ...]:
    """The placements with their node settings; records every membership problem in ``diags``."""
    _check_listed_without_service(sources, host, diags)
    out = []
    for p in placements:
        if p.model.multinode is not None:
            _check_membership(sources, host, p.service, p.model, diags)
            node = node_for(sources, host, p.model)
            if node is not None:
                p = replace(p, cluster=node)
        out.append(p)
    return tuple(out)


@dataclass(frozen=True)
class _Launch:
    """What one node passes: its flags (dest -> words, where written) and its environment
    (name -> value, where written), and both without the positions, to compare nodes."""

    flags: dict[str, tuple[tuple[str, ...], Position]]
    env: dict[str, tuple[str, Position]]
    flag_words: dict[str, tuple[str, ...]]
    env_values: dict[str, str]


def _launch(p: Placement, argv: ServiceArgv) -> _Launch:
    flags = {g.action.dest: (g.words, g.pos) for g in argv.groups
             if g.words and g.action.dest not in PER_NODE_DESTS}
    env: dict[str, tuple[str, Position]] = {}
    for owner in (p.model, p.service):  # the service's own value wins, as in the rendering
        for name, value in owner.env:
            env[name] = (value, owner.pos("env", name))
    return _Launch(flags, env, {k: v[0] for k, v in flags.items()}, {k: v[0] for k, v in env.items()})


def _peer_launch(sources: HostSources, peer: Host, model: Model, catalog: Catalog) -> _Launch | None:
    """How the peer's render would launch its node; None when placing or building it fails there.

    ``catalog`` is the one this host's render checks against (the shared pin, or the pin
    of ``gen check --sglang``), so both argvs are spelled by the same SGLang. Worked out
    once per group (``sources.nodes``, shared by its members): every member compares with
    every other, and placing each peer again for each member was n**2 placements.
    """
    key = ("launch", peer.name, model.name, catalog.pin, catalog.version)
    if key not in sources.nodes:
        sources.nodes[key] = _place_peer(sources, peer, model, catalog)
    found: _Launch | None = sources.nodes[key]
    return found


def _place_peer(sources: HostSources, peer: Host, model: Model, catalog: Catalog) -> _Launch | None:
    """:func:`_peer_launch`, worked out."""
    quiet = Diagnostics()
    placed = [p for p in place_host(peer, sources.models, quiet) if p.model.name == model.name]
    node = node_for(sources, peer, model)
    if len(placed) != 1 or node is None:
        return None
    p = replace(placed[0], cluster=node)
    argv = build_argv(p, peer.sglang.python, catalog, quiet)
    if quiet.has_errors:
        return None
    return _launch(p, argv)


def check_same_everywhere(sources: HostSources, host: Host, p: Placement, argv: ServiceArgv, catalog: Catalog,
                          diags: Diagnostics) -> None:
    """P027-P029: this node's pin, SGLang flags and environment against every other node's.

    ``argv`` was checked against ``catalog``; the peers' argvs are built against it too.
    """
    model = p.model
    if model.multinode is None or p.cluster is None:
        return
    fallback = p.service.pos("model")
    own = _launch(p, argv)
    mine_flags, mine_env = own.flags, own.env
    for peer in _peers(sources, model):
        if peer.name == host.name or peer.host is None or len(peer.services) != 1:
            continue  # reported as a membership problem
        same_pin = peer.host.sglang.pin == host.sglang.pin
        other = _peer_launch(sources, peer.host, model, catalog) if same_pin else None
        if same_pin and (other is None or (other.flag_words == own.flag_words
                                           and other.env_values == own.env_values)):
            continue  # the usual case, compared as a whole; or the peer's own render says why not
        them = f"host '{peer.name}' (rank {peer.rank})"
        if not same_pin:
            diags.error(host.pos("sglang", "pin"), "P027", f"host '{host.name}' runs SGLang "
                        f"{host.sglang.pin} but {them} runs {peer.host.sglang.pin} "
                        f"({peer.host.pos('sglang', 'pin')}); every node of model '{model.name}' "
                        "must run the same SGLang")
            continue  # flag spellings differ between pins: comparing them says nothing more
        assert other is not None
        their_flags = other.flags
        for dest in sorted(set(mine_flags) | set(their_flags)):
            mine, theirs = mine_flags.get(dest), their_flags.get(dest)
            if mine is not None and theirs is not None and mine[0] == theirs[0]:
                continue
            if mine is not None:
                pos, ours = mine[1], f"passes {' '.join(mine[0])}"
            else:
                assert theirs is not None
                pos, ours = fallback, f"does not pass {theirs[0][0]}"
            there = (f"{them} passes {' '.join(theirs[0])} ({theirs[1]})" if theirs is not None
                     else f"{them} does not pass it ({peer.host.doc.path})")
            diags.error(pos, "P028", f"service '{p.service.name}' {ours}, but {there}; the nodes of "
                        f"model '{model.name}' must pass the same flags except --node-rank")
        their_env = other.env
        for name in sorted(set(mine_env) | set(their_env)):
            a, b = mine_env.get(name), their_env.get(name)
            if a is not None and b is not None and a[0] == b[0]:
                continue
            pos = a[1] if a is not None else fallback
            ours = f"sets {name}={a[0]}" if a is not None else f"does not set {name}"
            there = f"{them} sets {name}={b[0]} ({b[1]})" if b is not None else f"{them} does not ({peer.host.doc.path})"
            diags.error(pos, "P029", f"service '{p.service.name}' {ours}, but {there}; the nodes of "
                        f"model '{model.name}' must run with the same environment")

