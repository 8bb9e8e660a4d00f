"""The columns every chat platform's durable send queue has (Slack's `slack_outgoing`, Teams'
`teams_outgoing`): one row a call to make, claimed with a lease, retried with backoff, in the
interactive lane or the bulk one, sent once under its dedupe key. A platform's table adds where
the call goes and what came back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from sqlalchemy import JSON, BigInteger, ColumnElement, String, Text, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, declarative_mixin, mapped_column

from plumbing.prefixes import starts_with
from timebot.state.db import unit_of_work
from timebot.state.lanes import lane_column
from timebot.state.leased_row import LeasedRow


@declarative_mixin
class ChatSendQueue(LeasedRow):
    seq: Mapped[int] = mapped_column(BigInteger, index=True)
    dedupe_key: Mapped[str | None] = mapped_column(String(400), unique=True, nullable=True)
    method: Mapped[str] = mapped_column(String(64))
    # timebot.state.lanes: an answer to someone who just acted goes ahead of DMs to many.
    priority: Mapped[int] = lane_column()
    ref: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    context: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    next_attempt_ms: Mapped[int] = mapped_column(BigInteger)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    sent_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    # When what the row shows was decided (an "outcome" in its context): the nudgers read
    # the request rows not settled, by index, not the queue's history (#40).
    settled_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    def add_context(self, context: Mapping[str, Any], now_ms: int) -> None:
        """`context` merged into the row's; an outcome settles the row."""
        self.context = {**self.context, **context}
        if context.get("outcome") and self.settled_ms is None:
            self.settled_ms = now_ms


SETTLE_BATCH = 500
Row = TypeVar("Row", bound=ChatSendQueue)


async def unsettled_with_ref(
    reads: async_sessionmaker[AsyncSession], writes: async_sessionmaker[AsyncSession],
    model: type[Row], ref_prefix: str, now_ms: int, *conditions: ColumnElement[bool],
) -> list[Row]:
    """The rows of `model` not settled whose ref starts with `ref_prefix` (and that meet
    `conditions`), oldest first, read by the `ix_*_waiting` index, not the queue's history.
    Those among them whose context holds an outcome (a release before `settled_ms` decided
    them) are settled now, in short statements, so that the next read skips them; they are
    still returned, for the caller to see the decision."""
    async with reads() as session:
        rows = list(await session.scalars(select(model).where(
            model.settled_ms.is_(None), starts_with(model.ref, ref_prefix), *conditions,
        ).order_by(model.seq)))
    decided = [row.id for row in rows if row.context.get("outcome")]
    if decided:
        async with unit_of_work(writes) as session:
            for start in range(0, len(decided), SETTLE_BATCH):
                await session.execute(update(model).where(
                    model.id.in_(decided[start:start + SETTLE_BATCH]),
                    model.settled_ms.is_(None),
                ).values(settled_ms=now_ms))
    return rows
