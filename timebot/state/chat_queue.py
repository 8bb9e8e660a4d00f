"""The columns every chat platform's durable send queue has (Slack's `slack_outgoing`, Teams'
`teams_outgoing`): one row a call to make, claimed with a lease, retried with backoff, in the
interactive lane or the bulk one, sent once under its dedupe key. A platform's table adds where
the call goes and what came back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, String, Text
from sqlalchemy.orm import Mapped, declarative_mixin, mapped_column

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
