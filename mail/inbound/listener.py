"""Inbound SMTP and LMTP (aiosmtpd), in the application's event loop.

The protocol stays in aiosmtpd; our handler only refuses cheaply at RCPT time (unknown or
malformed addresses: 550 5.1.1) and answers DATA with 250 once the raw message is committed
to the durable inbox. Everything slow happens afterwards in the inbox worker.

The peer's address decides whether the message's Authentication-Results may count: only a
peer in TIMEBOT_MAIL_TRUSTED_NETWORKS (the MTA in front of timebot) vouches for them; mail
sent straight to the listener from anywhere else is stored with `headers_trusted=False`.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Sequence
from typing import Any

import structlog
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP, Envelope, Session

from mail.inbound.addresses import Refusal, TokenCheck, classify_recipient, sender_problem
from mail.queues.inbox import Inbox
from plumbing.urgency import interactive
from timebot.trusted_networks import (
    DEFAULT_TRUSTED_NETWORKS,
    Network,
    parse_networks,
    peer_in_networks,
)

log = structlog.get_logger("mail.listener")

DEFAULT_SIZE_LIMIT = 10 * 1024 * 1024


class InboundHandler:
    """aiosmtpd handler hooks: MAIL and RCPT (cheap checks), DATA (commit, then 250)."""

    def __init__(
        self,
        inbox: Inbox,
        mail_domain: str,
        token_check: TokenCheck,
        on_accepted: Callable[[], None] = lambda: None,
        source: str = "smtp",
        trusted_networks: Sequence[Network] = parse_networks(DEFAULT_TRUSTED_NETWORKS),
    ) -> None:
        self.inbox = inbox
        self.mail_domain = mail_domain
        self.token_check = token_check
        self.on_accepted = on_accepted
        self.source = source
        self.trusted_networks = tuple(trusted_networks)

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        problem = sender_problem(address)
        if problem is not None:
            log.info("mail_from_refused", reason=problem)
            return f"553 5.1.7 The sender address {problem}"
        envelope.mail_from = address  # (a MAIL hook sets what aiosmtpd would have)
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        verdict = classify_recipient(address, self.mail_domain, self.token_check)
        if isinstance(verdict, Refusal):
            log.info("rcpt_refused", address=address, reason=verdict.reason)
            return f"550 5.1.1 <{address}>: {verdict.reason}"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(
        self, server: SMTP, session: Session, envelope: Envelope
    ) -> str:
        raw = envelope.original_content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        trusted = peer_in_networks(session.peer, self.trusted_networks)
        try:
            with interactive():  # the sender's client waits on the answer
                new = await self.inbox.accept(
                    bytes(raw), envelope.mail_from or "", list(envelope.rcpt_tos),
                    self.source, headers_trusted=trusted,
                )
        except Exception:  # the database is unavailable: the sender must retry
            log.exception("inbox_commit_failed")
            return self._per_recipient(envelope, "451 4.3.0 Temporary failure, try again later")
        log.debug("mail_accepted", new=new, rcpt=envelope.rcpt_tos, source=self.source,
                 peer=str(session.peer[0]) if isinstance(session.peer, tuple) else None,
                 trusted_peer=trusted)
        if new:
            self.on_accepted()
        return self._per_recipient(envelope, "250 2.0.0 Message accepted")

    def _per_recipient(self, envelope: Envelope, status: str) -> str:
        if self.source != "lmtp":
            return status
        # LMTP answers DATA once per accepted recipient (RFC 2033 §4.2).
        return "\r\n".join([status] * max(1, len(envelope.rcpt_tos)))


async def start_listener(
    handler: InboundHandler,
    host: str,
    port: int,
    *,
    lmtp: bool = False,
    data_size_limit: int = DEFAULT_SIZE_LIMIT,
    hostname: str | None = None,
    sock: socket.socket | None = None,
) -> asyncio.base_events.Server:
    """Listen on host:port, or on `sock` when given (a listening socket bound by the parent
    of several worker processes, shared by all of them)."""
    protocol: Any = LMTP if lmtp else SMTP
    loop = asyncio.get_running_loop()

    def factory() -> Any:
        return protocol(
            handler,
            data_size_limit=data_size_limit,
            enable_SMTPUTF8=True,
            hostname=hostname,
            ident="timebot",
        )

    if sock is not None:
        return await loop.create_server(factory, sock=sock)
    return await loop.create_server(factory, host=host, port=port)
