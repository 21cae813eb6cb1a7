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
(computed where the host is loaded anyway, in the per-host pipeline, and cached with its
outcome, so the fleet runner never parses every host file a second time); nothing is
reported about a file whose address or ssh port is malformed (the schema check does that).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from generator.errors import Diagnostic, Diagnostics, Position, Severity
if TYPE_CHECKING:  # a warm run never parses YAML: ruamel is imported where a file is read
    from generator.load.manifests import Document

CODE = "R011"
SAME_PATH_CODE = "R012"
DEFAULT_SSH_PORT = 22


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
    # DNS names are case-insensitive; a trailing dot names the same host.
    key = (address.lower().rstrip("."), port)
    listed = data.get("services")
    services = listed if isinstance(listed, list) else []
    named = tuple((s["name"], doc.pos(("services", i, "name"))) for i, s in enumerate(services)
                  if isinstance(s, dict) and isinstance(s.get("name"), str))
    return Reach(str(name), doc.path, doc.pos(("address",)), key,
                 frozenset(s for s in shared if isinstance(s, str)), named)


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


def reach_errors(reaches: Sequence[Reach]) -> list[Diagnostic]:
    """:func:`shared_address_errors` over each file's :func:`reach` (in file order)."""
    out: list[Diagnostic] = []
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
            where = f"{a.target[0]}:{a.target[1]}"
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
