"""Is an HTTP request from this machine? What only a local user may see (the local outbox,
the demo's sign-in code) asks this of the ASGI scope.

Local means: the scope's client (the TCP peer, as the server saw it) is a loopback address,
AND the request names no other client in a forwarding header, AND the browser addressed this
machine by a loopback name.

- A reverse proxy on this machine connects from loopback on behalf of anyone, and says so in
  `X-Forwarded-For` / `Forwarded` / `X-Real-IP`; uvicorn puts a trusted proxy's
  `X-Forwarded-For` into the scope's client (with FORWARDED_ALLOW_IPS=* a remote client could
  name 127.0.0.1 there: its header is still there, and refused). A browser on this machine
  talking to the server directly sends none of them.
- A page of another site whose name it re-points at 127.0.0.1 (DNS rebinding) reaches us from
  the local browser as same-origin, but its requests carry that name in `Host`: only
  `localhost`, `*.localhost` and loopback address literals pass (a request without Host, not
  from a browser, does too).

No header ever makes a request local; a request without a known peer (a Unix socket) is not.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

FORWARDING_HEADERS = frozenset({b"x-forwarded-for", b"forwarded", b"x-real-ip"})


def is_loopback_address(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.strip("[]").partition("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def is_loopback_host(host: str) -> bool:
    """A Host header's name (port or not) that only ever means this machine."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    name = name.rstrip(".")
    return name == "localhost" or name.endswith(".localhost") or is_loopback_address(name)


def is_local_request(scope: Mapping[str, Any]) -> bool:
    """The scope's peer is loopback, no forwarding header names another client, and the
    Host header (if any) is a loopback name."""
    client = scope.get("client")
    if not client or not is_loopback_address(str(client[0])):
        return False
    headers: Iterable[tuple[bytes, bytes]] = scope.get("headers") or ()
    for name, value in headers:
        lowered = name.lower()
        if lowered in FORWARDING_HEADERS:
            return False
        if lowered == b"host" and not is_loopback_host(value.decode("latin-1")):
            return False
    return True
