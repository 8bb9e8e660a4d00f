"""The mail benchmarks' load: DKIM-signed approval replies, and the SMTP clients that send them
from a process of their own (as a mail server in front would), so that the load does not take
CPU from the program measured."""

from __future__ import annotations

import asyncio
import base64
import multiprocessing
import socket
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import aiosmtplib
import dkim
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bench.common import at_rate
from bench.reply_mail import GMAIL, realistic_reply
from timebot.secret_key.tokens import reply_address

DOMAIN = "timebot.localhost"
SENDER_DOMAIN = "example.com"
CLIENTS = 8

Mail = tuple[str, bytes]  # (recipient, raw message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Key:
    private_pem: bytes
    txt_line: str


def new_key() -> Key:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.DER,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    line = f"s1._domainkey.{SENDER_DOMAIN} v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}"
    return Key(private, line)


def signed_reply(key: Key, sender: str, token: str, in_reply_to: str | None = None, *,
                 review: bytes | None = None, style: str = GMAIL, decision: str = "approve",
                 index: int = 0, sender_name: str = "Mia", domain: str = SENDER_DOMAIN) -> Mail:
    """The reply as a mail client writes it (bench.reply_mail: the decision, a comment, a
    signature, the review quoted), DKIM-signed with `key` for `domain`."""
    raw = realistic_reply(sender_name=sender_name, sender=sender,
                          to=reply_address(token, DOMAIN), in_reply_to=in_reply_to,
                          review=review, decision=decision, style=style, index=index)
    signature = dkim.sign(raw, b"s1", domain.encode(), key.private_pem,
                          include_headers=[b"from", b"to", b"subject", b"message-id", b"date"])
    return reply_address(token, DOMAIN), bytes(signature) + raw


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


class LoadGenerator:
    """The SMTP clients, in a separate process (spawned once, warmed before any timing)."""

    def __init__(self) -> None:
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))

    async def _call(self, function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)

    async def call(self, function: Any, *args: Any) -> Any:
        """`function(*args)` (picklable, module-level) in the load's process."""
        return await self._call(function, *args)

    async def warm(self) -> None:
        await self._call(_ready)

    async def send_all(self, port: int, mails: list[Mail], clients: int = CLIENTS
                       ) -> list[float]:
        """The SMTP transaction time of each mail (s)."""
        times: list[float] = await self._call(_send_all_sync, port, mails, clients)
        return times

    async def send_at_rate(self, port: int, mails: list[Mail], rate: int
                           ) -> dict[str, tuple[float, float]]:
        result: dict[str, tuple[float, float]] = await self._call(
            _send_at_rate_sync, port, mails, rate
        )
        return result

    def close(self) -> None:
        self.pool.shutdown()


def _ready() -> bool:
    return True


def _send_all_sync(port: int, mails: list[Mail], clients: int) -> list[float]:
    return asyncio.run(_send_all(port, mails, clients))


def _send_at_rate_sync(port: int, mails: list[Mail], rate: int
                       ) -> dict[str, tuple[float, float]]:
    return asyncio.run(_send_at_rate(port, mails, rate))


async def _send_all(port: int, mails: list[Mail], clients: int) -> list[float]:
    """Send every mail over `clients` connections; the SMTP transaction time of each (s)."""
    queue: asyncio.Queue[Mail] = asyncio.Queue()
    for mail in mails:
        queue.put_nowait(mail)
    times: list[float] = []

    async def client() -> None:
        smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, timeout=60, start_tls=False)
        async with smtp:
            while not queue.empty():
                rcpt, raw = queue.get_nowait()
                started = time.perf_counter()
                await smtp.sendmail(f"mia@{SENDER_DOMAIN}", [rcpt], raw)
                times.append(time.perf_counter() - started)

    await asyncio.gather(*(client() for _ in range(clients)))
    return times


async def _send_at_rate(port: int, mails: list[Mail], rate: int
                        ) -> dict[str, tuple[float, float]]:
    """One connection per mail, started every 1/rate s; {rcpt: (start, transaction s)}."""
    started_at: dict[str, tuple[float, float]] = {}

    async def one(rcpt: str, raw: bytes) -> None:
        started = time.time()
        clock = time.perf_counter()
        await aiosmtplib.send(raw, sender=f"mia@{SENDER_DOMAIN}", recipients=[rcpt],
                              hostname="127.0.0.1", port=port, start_tls=False, timeout=60)
        started_at[rcpt] = (started, time.perf_counter() - clock)

    await at_rate(len(mails), rate, lambda index: one(*mails[index]))
    return started_at
