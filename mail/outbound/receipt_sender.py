"""Queueing receipts (mail.outbound.receipts says what they say and writes them):

- a receipt is queued once per reply: its outbox dedupe key is derived from the reply's inbox
  message key (`receipt_dedupe_key`), so a retry after a crash or the same reply received twice
  queues nothing more;
- error receipts (every "Nothing changed" that reports a refusal) go to a sender at most once
  an hour (`error_receipt_allowed`, the rate rule: pure, given that sender's earlier error-receipt
  times; the last one per sender is kept in `mail_error_receipts`, claimed with a compare-and-set
  so that two workers cannot both send).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from mail.outbound.receipts import Outcome, compose_receipt
from mail.queues.outbox import Outbox
from mail.reading.message import ReadMessage
from plumbing.clock import Clock
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import MailErrorReceipt, OutboxMessage

__all__ = [
    "ERROR_RECEIPT_WINDOW_MS",
    "ReceiptSender",
    "error_receipt_allowed",
    "next_error_receipt_at",
    "receipt_dedupe_key",
]


def receipt_dedupe_key(message_key: str) -> str:
    return f"receipt:{message_key}"[:400]


# --- the rate rule for error receipts ----------------------------------------------------------

ERROR_RECEIPT_WINDOW_MS = 3_600_000


def next_error_receipt_at(
    previous_ms: Iterable[int], *, window_ms: int = ERROR_RECEIPT_WINDOW_MS
) -> int | None:
    """When the next error receipt to this sender may go out (Unix ms); None: no earlier one."""
    latest = max(previous_ms, default=None)
    return None if latest is None else latest + window_ms


def error_receipt_allowed(
    previous_ms: Iterable[int], now_ms: int, *, window_ms: int = ERROR_RECEIPT_WINDOW_MS
) -> bool:
    """At most one error receipt per sender per `window_ms` (an hour).

    `previous_ms`: when the earlier error receipts to this sender went out. A receipt whose
    time lies in the future (clock skew) counts as recent."""
    next_at = next_error_receipt_at(previous_ms, window_ms=window_ms)
    return next_at is None or now_ms >= next_at


Extra = Callable[[AsyncSession], Awaitable[None]]
Then = Callable[[AsyncSession, str], Awaitable[None]]


class ReceiptSender:
    """Queues receipts in the outbox: once per reply, error receipts once per sender per hour."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        outbox: Outbox,
        clock: Clock,
        *,
        mail_from: str,
        mail_domain: str,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.sessions = sessions
        self.outbox = outbox
        self.clock = clock
        self.mail_from = mail_from
        self.mail_domain = mail_domain
        self.wake = wake

    async def send(
        self,
        outcome: Outcome,
        reply: ReadMessage,
        message_key: str,
        *,
        token: str | None = None,
        also: Extra | None = None,
        then: Then | None = None,
    ) -> str:
        """Queue the receipt; returns what happened ("queued", "already queued",
        "rate-limited", "no sender"). `also` runs first in the same transaction (it records the
        reply's outcome), so a receipt is queued exactly when the reply is marked done; `then`
        runs last in it, told what happened (it marks the inbox message processed)."""
        to = reply.from_address
        dedupe = receipt_dedupe_key(message_key)
        async with unit_of_work(self.sessions) as session:
            if also is not None:
                await also(session)
            sent = await self._queue(session, outcome, reply, to, dedupe, token)
            if then is not None:
                await then(session, sent)
        if sent == "queued":
            self.wake()
        return sent

    async def _queue(self, session: AsyncSession, outcome: Outcome, reply: ReadMessage,
                     to: str | None, dedupe: str, token: str | None) -> str:
        if to is None:
            return "no sender"
        if outcome.is_error:
            # The outbox's dedupe key refuses a second receipt for the reply (below); an
            # error receipt is looked for first, so that it does not spend the sender's
            # error slot.
            known = await session.scalar(_QUEUED_RECEIPT, {"dedupe": dedupe})
            if known is not None:
                return "already queued"
            if not await self._claim_error_slot(session, to):
                return "rate-limited"
        message = compose_receipt(
            outcome, reply, to=to, mail_from=self.mail_from, mail_domain=self.mail_domain,
            token=token,
        )
        queued = await self.outbox.enqueue(
            message, kind="receipt", envelope_from="", rcpt_tos=[to], dedupe_key=dedupe,
            session=session,
        )
        return "queued" if queued else "already queued"

    async def _claim_error_slot(self, session: AsyncSession, sender: str) -> bool:
        """Compare-and-set on the sender's last error receipt; True: this one may go out."""
        now = self.clock.now_ms()
        key = sender.lower()[:320]
        last = await session.scalar(_LAST_ERROR_RECEIPT, {"sender": key})
        result: Any
        if last is None:
            result = await session.execute(
                insert_ignoring(session, _ERROR_RECEIPTS, ("sender",)),
                {"sender": key, "last_sent_ms": now},
            )
            return bool(result.rowcount)
        if not error_receipt_allowed([last], now):
            return False
        result = await session.execute(
            _NEXT_ERROR_RECEIPT, {"sender_key": key, "last_ms": last, "new_last_sent_ms": now}
        )
        return bool(result.rowcount)


# The statements of `ReceiptSender.send`, built once (Core, bound parameters).
_OUTBOX = cast(Table, OutboxMessage.__table__)
_ERROR_RECEIPTS = cast(Table, MailErrorReceipt.__table__)
_QUEUED_RECEIPT = select(_OUTBOX.c.id).where(_OUTBOX.c.dedupe_key == bindparam("dedupe"))
_LAST_ERROR_RECEIPT = select(_ERROR_RECEIPTS.c.last_sent_ms).where(
    _ERROR_RECEIPTS.c.sender == bindparam("sender")
)
_NEXT_ERROR_RECEIPT = (
    update(_ERROR_RECEIPTS)
    .where(_ERROR_RECEIPTS.c.sender == bindparam("sender_key"),
           _ERROR_RECEIPTS.c.last_sent_ms == bindparam("last_ms"))
    .values(last_sent_ms=bindparam("new_last_sent_ms"))
)
