"""The columns of a durable work table's row that a worker claims with a lease
(`timebot.state.queue` claims and finishes them): its id, where it stands (`claim_choice`'s
statuses), how often it was claimed, and who holds it until when. A table adds what the work
is, when it is due (its `next_attempt_ms`, whose default differs from table to table) and
what came of it."""

from __future__ import annotations

from sqlalchemy import BigInteger, Integer, String
from sqlalchemy.orm import Mapped, declarative_mixin, mapped_column

from plumbing.ids import new_id
from timebot.state.claim_choice import QUEUED


@declarative_mixin
class LeasedRow:
    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    status: Mapped[str] = mapped_column(String(12), default=QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
