"""Who can reach a service: a listener beyond loopback without an API key is a warning (R010).

SGLang serves every client that reaches its port unless it is given ``--api-key``; gen gives
it one only through the service's root-only credential (``secret_args``, issue 10 item 3).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from generator.errors import Diagnostics

if TYPE_CHECKING:  # resolve imports this module; the types are only annotations here
    from generator.load.resolve import Host, ServiceSpec


def has_api_key(svc: ServiceSpec) -> bool:
    """True when SGLang gets an API key for this service: ``--api-key`` among the flags it
    reads from its root-only credential (``secret_args``, issue 10 item 3)."""
    # getattr: secret_args arrives with the output-side branch; until then no service has one.
    return "--api-key" in getattr(svc, "secret_args", ())


def _loopback(listen: Any) -> bool | None:
    """Whether ``listen`` is a loopback address; None when it is no address at all."""
    try:
        return ipaddress.ip_address(listen).is_loopback
    except ValueError:
        return None


def check_listeners(host: Host, diags: Diagnostics) -> None:
    """Warn (R010) on a service listening beyond loopback without an API key: SGLang then
    serves anyone who reaches the port."""
    for svc in host.services:
        loopback = _loopback(svc.listen)
        if loopback is None:
            continue  # the schema reports it (S012)
        if not loopback and not has_api_key(svc):
            diags.warning(svc.pos("listen"), "R010",
                          f"service '{svc.name}' listens on {svc.listen}, beyond loopback, with no API key: "
                          f"anyone who reaches port {svc.port} can use it",
                          "add --api-key to secret_args, or listen on 127.0.0.1 behind an authenticating proxy")
