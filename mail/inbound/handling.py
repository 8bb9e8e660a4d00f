"""What the processor and the handlers of inbound mail share, below both: the message being
processed (`InboundMail`), what a handler may ask of the processor (`Replier`) and the shape of
a handler (`Handler`).

The processor (mail.inbound.process) calls the handler it was given for a message's recipient kind
and imports none; a handler (mail.replies.approval_reply, mail.replies.time_entry) imports only
these types; mail's inbound component wires the two."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from mail.inbound.addresses import RecipientKind
from mail.inbound.loop_guard import LoopRefusal
from mail.inbound.sender_auth import SenderVerdict
from mail.outbound.receipts import Outcome
from mail.queues.inbox import InboundMessage
from mail.queues.parts import MailParts
from mail.reading.message import ReadMessage
from timebot.config import Settings
from timebot.process.runtime import Runtime
from timebot.read_batching import ReadBatcher


@dataclass(frozen=True)
class InboundMail:
    """One inbound message being processed."""

    inbound: InboundMessage
    read: ReadMessage
    key: str  # the inbox message key (Message-ID, or a hash of the bytes)
    kind: RecipientKind
    recipient: str | None  # the address of that kind it was sent to, when known


class Replier(Protocol):
    """What a handler may ask of the processor: the runtime and mail's queues, shared reads,
    the sender's authentication, and a receipt."""

    runtime: Runtime
    settings: Settings
    mail: MailParts
    reads: ReadBatcher  # the event and state reads of messages processed at once share requests

    async def authenticate(self, mail: InboundMail) -> SenderVerdict:
        """Is the From address authenticated (trusted Authentication-Results, or DKIM)?"""
        ...

    async def answer(
        self, mail: InboundMail, outcome: Outcome, *, token: str | None = None,
        record: Callable[[AsyncSession], Awaitable[None]] | None = None, last: bool = False,
    ) -> str:
        """Queue the receipt (once; error receipts at most hourly per sender); `record` runs in
        the same transaction. A sender who did not authenticate gets no receipt: it is logged
        and dropped (`record` still runs). `last`: the handler's last act (return its answer):
        the inbox message is marked processed in that transaction too."""
        ...


Handler = Callable[[Replier, InboundMail], Awaitable[str]]
"""Processes one inbound message of its recipient kind; answers what became of it (logged)."""

AutoReplyReader = Callable[[Replier, InboundMail, LoopRefusal], Awaitable[str]]
"""Reads an auto-reply sent to a reply address (the loop guard's verdict given) for the facts
it states, never answering it (mail.replies.away_notice); answers what became of it (logged)."""
