"""One machine, two inventories: refuse host files that reach the same ssh address and port.

Each inventory is rolled out as if it owned the machine: the playbook's dropped-services
step stops and removes every gen unit the host's list names that this inventory no
longer renders. Two inventories reaching one ``address`` + ssh port would therefore
remove each other's services. So that pair is an error (R011) at both files' ``address``,
unless both declare it, each naming the other in ``ssh: {shared_with: [...]}`` (an
alternative configuration of the same box, rolled out on its own).

Even a declared pair must not put the same file on the machine: two inventories rendering
one service name would write the same unit, environment file and secret paths, and each
would restart, roll back or remove the other's. That is R012, at both services' names.

Pure: the functions take the already loaded documents, or each one's :class:`Reach`
(computed where the host is loaded anyway, in the per-host pipeline, and returned with
its outcome, so the fleet runner never parses every host file a second time); nothing is
reported about a file whose address or ssh port is malformed (the schema check does that).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.errors import Diagnostic, Diagnostics, Position, Severity
if TYPE_CHECKING:  # a warm run never parses YAML: ruamel is imported where a file is read
    from generator.load.manifests import Document

CODE = "R011"
SAME_PATH_CODE = "R012"
SAME_FABRIC_CODE = "R017"
DEFAULT_SSH_PORT = 22

# What the controller's own loopback is called: ssh to any of these reaches this machine.
LOOPBACK = "127.0.0.1"
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052: the IPv4 host behind a NAT64
_INET_ATON_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")


def inet_aton(text: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address glibc's ``inet_aton`` (and so ``getaddrinfo``, ssh, Ansible) reads in
    ``text``, or None: 1 to 4 parts, each decimal, octal (leading 0) or hex (0x), the last
    filling the remaining bytes. ``10.1`` is 10.0.0.1, ``012.0.0.1`` is 10.0.0.1,
    ``0x0a000001`` and ``167772161`` are too."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(_INET_ATON_PART.fullmatch(p) for p in parts):
        return None
    values = [int(p, 16) if p[:2].lower() == "0x" else int(p, 8) if p.startswith("0") else int(p)
              for p in (q if q.lower() != "0x" else "0x0" for q in parts)]
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = 0
    for v in head:
        number = number << 8 | v
    return ipaddress.IPv4Address(number << 8 * (4 - len(head)) | last)


def machine_address(address: str) -> str:
    """The one spelling of the machine ``address`` reaches, for comparing two inventories.

    Every spelling of one address is one machine: IPv6 compressed and lowercase
    (``2001:DB8:0:0::10`` is ``2001:db8::10``), without brackets or a zone (``%eth0``);
    an IPv4-mapped (``::ffff:10.0.0.1``) or NAT64 (``64:ff9b::a00:1``) address is its IPv4
    address; IPv4 as ``inet_aton`` reads it (``10.1``, ``012.0.0.1``, ``0x0a000001`` are
    10.0.0.1); the controller's own loopback, whatever it is called (``localhost``, any
    ``*.localhost``, ``::1``, ``0.0.0.0`` and ``::``, which Linux connects to loopback), is
    127.0.0.1. A DNS name is lowercase without its trailing dot: gen never resolves one, so
    two names of one machine are two machines to this check. The ``rollout`` side uses it
    too (the host list on the machine records who wrote it).
    """
    text = address.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.split("%", 1)[0] if ":" in text else text
    text = text.rstrip(".") if not text.replace(".", "").isdigit() else text
    if text == "localhost" or text.endswith(".localhost"):
        return LOOPBACK
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(text)
    except ValueError:
        ip = inet_aton(text)
    if ip is None:
        return text
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.is_unspecified or ip == ipaddress.IPv6Address("::1") or str(ip) == LOOPBACK:
        return LOOPBACK
    return str(ip)


def machine(address: str, port: int) -> tuple[str, int]:
    """The machine and ssh port an inventory reaches (:func:`machine_address`)."""
    return machine_address(address), port


def shown_machine(target: tuple[str, int]) -> str:
    """``host:port``, an IPv6 address in brackets."""
    address, port = target
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


@dataclass(frozen=True)
class Reach:
    """Where one inventory's ssh goes, and whom it says it shares that with."""

    name: str
    path: str
    pos: Position
    target: tuple[str, int]
    shared_with: frozenset[str]
    # (name, position of its `name`) of each service the file declares (for R012).
    services: tuple[tuple[str, Position], ...] = ()
    # The machine its `network.address` names (what the other ranks dial), and where (R017).
    fabric: str | None = None
    fabric_pos: Position | None = None


def reach(doc: Document) -> Reach | None:
    """The ssh target of DOC, or None when its fields are not well-formed (schema's job)."""
    data = doc.data if isinstance(doc.data, dict) else {}
    address, ssh = data.get("address"), data.get("ssh") or {}
    if not isinstance(address, str) or not address or not isinstance(ssh, dict):
        return None
    port = ssh.get("port", DEFAULT_SSH_PORT)
    shared = ssh.get("shared_with") or []
    if not isinstance(port, int) or isinstance(port, bool) or not isinstance(shared, list):
        return None
    name = data.get("name") if isinstance(data.get("name"), str) else doc.path
    key = machine(address, port)  # every spelling of one address is one machine
    listed = data.get("services")
    services = listed if isinstance(listed, list) else []
    named = tuple((s["name"], doc.pos(("services", i, "name"))) for i, s in enumerate(services)
                  if isinstance(s, dict) and isinstance(s.get("name"), str))
    network = data.get("network")
    fabric = network.get("address") if isinstance(network, dict) else None
    return Reach(str(name), doc.path, doc.pos(("address",)), key,
                 frozenset(s for s in shared if isinstance(s, str)), named,
                 machine_address(fabric) if isinstance(fabric, str) and fabric else None,
                 doc.pos(("network", "address")) if isinstance(fabric, str) and fabric else None)


def _same_files(a: Reach, b: Reach) -> list[Diagnostic]:
    """R012 at both of two sharing inventories' services of one name (same unit, same files)."""
    out: list[Diagnostic] = []
    theirs = dict(b.services)
    for service, pos in a.services:
        if service not in theirs:
            continue
        unit = f"/etc/systemd/system/sglang-{service}.service"
        for this, here, other, there in ((a, pos, b, theirs[service]), (b, theirs[service], a, pos)):
            out.append(Diagnostic(
                here, SAME_PATH_CODE,
                f"service '{service}' of host '{this.name}' renders {unit} and /etc/sglang/{service}.env, "
                f"and so does host '{other.name}' ({there}), which shares this machine; "
                "each rollout would restart, roll back or remove the other's",
                Severity.ERROR, "give the service another name in one of the two inventories"))
    return out


def shared_address_errors(docs: Sequence[Document]) -> list[Diagnostic]:
    """R011 at each of two inventories that reach the same address+port without both declaring it.

    A declared pair gets R012 for each service name both render (same unit and files).
    """
    return reach_errors([r for r in (reach(d) for d in docs) if r is not None])


def _fabric_errors(reaches: Sequence[Reach]) -> list[Diagnostic]:
    """R017 at both of two inventories whose ``network.address`` is one machine (every
    spelling of one address is one, as for R011), unless both declare the machine shared:
    the ranks of a multi-node model dial rank 0 there, so two hosts claiming it put two
    ranks, or two models' rendezvous, on one box while the inventories say two."""
    out: list[Diagnostic] = []
    seen: dict[str, Reach] = {}
    for b in reaches:
        if b.fabric is None or b.fabric_pos is None:
            continue
        a = seen.setdefault(b.fabric, b)
        if a is b or (b.name in a.shared_with and a.name in b.shared_with):
            continue
        for this, other in ((a, b), (b, a)):
            assert this.fabric_pos is not None and other.fabric_pos is not None
            out.append(Diagnostic(
                this.fabric_pos, SAME_FABRIC_CODE,
                f"host '{this.name}' gives network.address {b.fabric}, and so does host '{other.name}' "
                f"({other.fabric_pos}): one address is one machine, so the ranks dialling it "
                "would reach one of the two",
                Severity.ERROR,
                f"write each host's own fabric address in network.address, or declare both as one "
                f"machine: ssh: {{shared_with: [{other.name}]}} in {this.path} and "
                f"ssh: {{shared_with: [{this.name}]}} in {other.path}"))
    return out


def reach_errors(reaches: Sequence[Reach]) -> list[Diagnostic]:
    """:func:`shared_address_errors` over each file's :func:`reach` (in file order), and R017
    for two files whose ``network.address`` is one machine."""
    out: list[Diagnostic] = _fabric_errors(reaches)
    # Only files with the same target can clash: bucket them (a fleet of 1,000 hosts is
    # 1,000 lookups, not half a million pairs), then visit each pair in file order as before.
    later: dict[tuple[str, int], list[Reach]] = {}
    for r in reaches:
        later.setdefault(r.target, []).append(r)
    for a in reaches:
        same = later[a.target]
        same.pop(0)  # a itself: what is left are the files after it with its target
        for b in same:
            if b.name in a.shared_with and a.name in b.shared_with:
                out.extend(_same_files(a, b))
                continue
            where = shown_machine(a.target)
            for this, other in ((a, b), (b, a)):
                out.append(Diagnostic(
                    this.pos, CODE,
                    f"host '{this.name}' reaches {where} over ssh, and so does host '{other.name}' "
                    f"({other.pos}); rolling out one would remove the other's services",
                    Severity.ERROR,
                    f"give each machine one inventory, or declare both as one machine: "
                    f"ssh: {{shared_with: [{other.name}]}} in {this.path} and "
                    f"ssh: {{shared_with: [{this.name}]}} in {other.path}"))
    return out


def documents(files: Sequence[tuple[str, bytes]]) -> list[Document]:
    """Parse host files given as (displayed path, bytes); a file that does not parse is left out.

    Its parse error is reported by the normal load, so the diagnostics here are dropped.
    """
    from generator.load.manifests import load_text

    out = []
    for display, data in files:
        try:
            doc = load_text(data.decode("utf-8"), display, Diagnostics())
        except UnicodeDecodeError:
            continue
        if doc is not None:
            out.append(doc)
    return out
