"""Which SMTP/LMTP peers are our own MTA (TIMEBOT_MAIL_TRUSTED_NETWORKS)?

Authentication-Results headers are vouched for by the MTA that added them. A message that
reaches the SMTP listener straight from the internet carries whatever headers its sender
wrote, so those headers count only when the connection comes from a trusted network
(default: loopback, `127.0.0.0/8,::1`): the MTA in front of timebot.

`parse_networks` reads the comma-separated CIDR list (ValueError naming the bad item);
`peer_in_networks` answers for an asyncio peername (IPv4, IPv6 with or without scope,
IPv4-mapped IPv6); anything that is not an IP address is not trusted.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_TRUSTED_NETWORKS", "Network", "parse_networks", "peer_in_networks"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_TRUSTED_NETWORKS = "127.0.0.0/8,::1"


def parse_networks(value: str) -> tuple[Network, ...]:
    """`10.0.0.0/8, ::1` → networks; an empty list trusts no peer. ValueError on a bad item."""
    networks: list[Network] = []
    for item in value.split(","):
        text = item.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError as error:
            raise ValueError(f"{text!r} is not an IP network (e.g. 10.0.0.0/8 or ::1)") from error
    return tuple(networks)


def peer_address(peer: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address of an asyncio peername ((host, port) or (host, port, flow, scope))."""
    host = peer[0] if isinstance(peer, tuple | list) and peer else peer
    if not isinstance(host, str):
        return None
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def peer_in_networks(peer: Any, networks: Sequence[Network]) -> bool:
    address = peer_address(peer)
    if address is None:
        return False
    return any(address.version == network.version and address in network
               for network in networks)
