"""Requests the service makes to addresses an administrator chose (webhooks, a custom OpenID
provider's discovery, token, keys and userinfo endpoints) reach public addresses only.

An administrator must not be able to make the server call itself or its neighbours (the
database on loopback, the cloud's metadata service on 169.254.169.254, the private network).
The check is made where the connection is made: `OutboundPolicy.client()` is an httpx client
whose connection pool resolves the host name itself, refuses the connection unless every
address the name resolves to is public (or inside a network the operator allowed,
TIMEBOT_OUTBOUND_ALLOWED_NETWORKS), and connects to the very address it checked, so a name
that resolves differently a moment later (DNS rebinding) cannot switch it. TLS still names
the original host (SNI, certificate check) and the request keeps its Host header. Every
connection is checked, so a redirect (not followed by default) could not escape either.

Not public: loopback, private, link-local, multicast, reserved, unspecified, shared (CGNAT
100.64/10), documentation and benchmarking ranges, and the IPv6 forms that carry such an IPv4
address (IPv4-mapped, 6to4, NAT64; IPv4-compatible ones are reserved).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOW_VARIABLE = "TIMEBOT_OUTBOUND_ALLOWED_NETWORKS"
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class AddressRefused(httpcore.ConnectError):
    """The connection was not made: the host is (or resolves to) an address that is not
    public. httpx reports it as an `httpx.ConnectError` carrying this message."""


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64)."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def why_not_public(address: Address) -> str | None:
    """Pure: what kind of non-public address this is, or None when it is public."""
    inner = embedded_ipv4(address)
    if inner is not None:
        why = why_not_public(inner)
        return f"{why}: it stands for {inner}" if why else None
    for kind, flag in (
        ("unspecified", address.is_unspecified), ("loopback", address.is_loopback),
        ("link-local", address.is_link_local), ("multicast", address.is_multicast),
        ("private", address.is_private), ("reserved", address.is_reserved),
    ):
        if flag:
            return kind
    if not address.is_global:
        return "not public"  # CGNAT 100.64/10, 192.0.0/24, documentation ranges…
    return None


@dataclass(frozen=True)
class OutboundPolicy:
    """Which addresses outbound requests chosen by an administrator may reach: public ones,
    and those in `allowed` (the operator's TIMEBOT_OUTBOUND_ALLOWED_NETWORKS)."""

    allowed: tuple[Network, ...] = ()

    def refusal(self, address: Address) -> str | None:
        """Pure: why a connection to `address` is refused, or None."""
        candidates = [address] + ([inner] if (inner := embedded_ipv4(address)) else [])
        if any(candidate in network for candidate in candidates for network in self.allowed
               if candidate.version == network.version):
            return None
        why = why_not_public(address)
        if why is None:
            return None
        return (f"{address} is not a public address ({why}); the operator may allow it "
                f"with {ALLOW_VARIABLE}")

    async def resolve(self, host: str, port: int) -> list[str]:
        """The addresses of `host`, every one checked; AddressRefused when any is refused
        (a name with one private address among public ones is refused as a whole)."""
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host.strip("[]"), port, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError) as error:
            raise httpcore.ConnectError(f"cannot resolve {host}: {error}") from error
        found: list[str] = []
        for info in infos:
            text = str(info[4][0]).split("%", 1)[0]
            why = self.refusal(ipaddress.ip_address(text))
            if why is not None:
                raise AddressRefused(f"refused to connect to {host}: {why}")
            if text not in found:
                found.append(text)
        if not found:
            raise httpcore.ConnectError(f"cannot resolve {host}")
        return found

    def transport(self) -> httpx.AsyncHTTPTransport:
        return GuardedTransport(self)

    def client(self, timeout: float = 10.0) -> httpx.AsyncClient:
        """An httpx client whose every connection obeys the policy (redirects not followed;
        no proxy from the environment: a proxy would make the connection on our behalf)."""
        return httpx.AsyncClient(transport=self.transport(), timeout=timeout,
                                 follow_redirects=False, trust_env=False)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses the policy checked."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None,  # noqa: ASYNC109 (httpcore)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        failure: Exception | None = None
        for address in await self.policy.resolve(host, port):
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as error:
                failure = error
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None,  # noqa: ASYNC109 (httpcore)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused("unix sockets are not reachable by outbound requests")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """The verifying TLS context of every guarded transport in this process: made once (it
    reads the CA bundle, 30 ms each time), shared (an SSLContext serves any number of
    connections, from any thread)."""
    return httpx.create_ssl_context()


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a connection pool with the guarded backend (TLS names the
    original host: httpcore passes it as the server name, not the address)."""

    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(verify=_ssl_context(), trust_env=False)  # (its pool is replaced)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0,
            network_backend=_GuardedBackend(policy),
        )
