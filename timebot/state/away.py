"""Approvers known to be away (`approver_absences`): one row per approver and source
("auto-reply": an out-of-office reply to a review e-mail, read by mail.replies.away_reply;
"slack-status": a Slack status that says so, bot.slack.away_status; "teams-status": a Teams
user's automatic replies or presence, bot.teams.away_status; the service's own facts, time
off and schedules, are read, not stored: timebot.notify.away_facts), with
the return date the source stated (None: not stated) and when it was seen.

A newer notice from the same source replaces the older one (the latest auto-reply tells the
current return date); the same notice again (a redelivery, a retry after a crash: the same
message key) changes nothing. Only facts: nothing here decides for anyone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy import BigInteger, Date, String, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from plumbing.db import insert_ignoring, unit_of_work
from plumbing.in_lists import in_lists
from timebot.state.models import StateBase

__all__ = ["AUTO_REPLY", "UNKNOWN_RETURN_DAYS", "Absence", "ApproverAbsence", "EscalationClaim",
           "absences", "claim_escalation", "clear_absence", "is_away", "record_absence",
           "release_escalation"]

AUTO_REPLY = "auto-reply"
UNKNOWN_RETURN_DAYS = 14
"""An absence without a return date counts this many days after it was last seen (an
out-of-office reply is sent again to each new review e-mail while it lasts)."""

_DAY_MS = 86_400_000


class ApproverAbsence(StateBase):
    __tablename__ = "approver_absences"

    organisation_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    approver_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(String(16), primary_key=True)
    until: Mapped[date | None] = mapped_column("away_until", Date, nullable=True)
    seen_ms: Mapped[int] = mapped_column(BigInteger)
    message_key: Mapped[str] = mapped_column(String(1000))


class EscalationClaim(StateBase):
    """One escalation's Journal message claimed (issue 28): written before the service's
    Journal is told, so two processes at the same instant tell it once."""

    __tablename__ = "escalation_claims"

    claim_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    claimed_ms: Mapped[int] = mapped_column(BigInteger)


@dataclass(frozen=True)
class Absence:
    organisation_id: str
    approver_id: str
    source: str
    until: date | None
    seen_ms: int
    zone: str = "UTC"
    """The approver's time zone (timebot.notify.away_facts reads it): `until` is a date of
    it, and so is the approver's today."""


def is_away(absence: Absence, today: date, now_ms: int) -> bool:
    """Pure: away on `today` (the approver's own date) — until the stated return date (that
    day included: the reply said "until"), or, with none stated, for UNKNOWN_RETURN_DAYS
    after it was last seen."""
    if absence.until is not None:
        return absence.until >= today
    return now_ms < absence.seen_ms + UNKNOWN_RETURN_DAYS * _DAY_MS


async def record_absence(
    sessions: async_sessionmaker[AsyncSession], *, organisation_id: str, approver_id: str,
    until: date | None, seen_ms: int, message_key: str, source: str = AUTO_REPLY,
) -> bool:
    """Record (or renew) an absence; False when this very notice was recorded already or a
    newer one is (nothing changed)."""
    key = message_key[:1000]
    row = {"organisation_id": organisation_id, "approver_id": approver_id, "source": source,
           "away_until": until, "seen_ms": seen_ms, "message_key": key}
    async with unit_of_work(sessions) as session:
        statement = insert_ignoring(session, ApproverAbsence,
                                    ("organisation_id", "approver_id", "source"))
        connection = await session.connection()
        if (await connection.execute(statement, row)).rowcount:
            return True
        # Lock the row (PostgreSQL) so that two notices at once are ordered.
        current = (await session.execute(
            select(ApproverAbsence.seen_ms, ApproverAbsence.message_key).where(
                ApproverAbsence.organisation_id == organisation_id,
                ApproverAbsence.approver_id == approver_id, ApproverAbsence.source == source,
            ).with_for_update()
        )).one()
        if current.message_key == key or current.seen_ms > seen_ms:
            return False
        await session.execute(update(ApproverAbsence).where(
            ApproverAbsence.organisation_id == organisation_id,
            ApproverAbsence.approver_id == approver_id, ApproverAbsence.source == source,
        ).values({ApproverAbsence.until: until, ApproverAbsence.seen_ms: seen_ms,
                  ApproverAbsence.message_key: key}))
        return True


async def absences(
    sessions: async_sessionmaker[AsyncSession], organisation_id: str,
    approver_ids: Sequence[str],
) -> dict[str, list[Absence]]:
    """The recorded absences of these approvers, by approver id (whether still current or
    not: `is_away` says). Read through the primary key, an IN list of approvers a statement:
    what a review request costs does not grow with the organisation's other absences."""
    found: dict[str, list[Absence]] = {}
    async with sessions() as session:
        for approvers in in_lists(approver_ids):
            rows = await session.scalars(select(ApproverAbsence).where(
                ApproverAbsence.organisation_id == organisation_id,
                ApproverAbsence.approver_id.in_(approvers)))
            for row in rows:
                found.setdefault(row.approver_id, []).append(Absence(
                    row.organisation_id, row.approver_id, row.source, row.until, row.seen_ms))
    return found


async def clear_absence(
    sessions: async_sessionmaker[AsyncSession], *, organisation_id: str, approver_id: str,
    source: str,
) -> bool:
    """The source no longer says the approver is away (a Slack status cleared); True when a
    record was removed."""
    async with unit_of_work(sessions) as session:
        result = await session.execute(delete(ApproverAbsence).where(
            ApproverAbsence.organisation_id == organisation_id,
            ApproverAbsence.approver_id == approver_id, ApproverAbsence.source == source))
        return bool(getattr(result, "rowcount", 0))


async def claim_escalation(sessions: async_sessionmaker[AsyncSession], key: str,
                           now_ms: int) -> bool:
    """Claim `key` (`journal:<submit>:<stage>`); False when it was claimed before."""
    async with unit_of_work(sessions) as session:
        statement = insert_ignoring(session, EscalationClaim, ("claim_key",))
        connection = await session.connection()
        result = await connection.execute(statement, {"claim_key": key[:300],
                                                      "claimed_ms": now_ms})
        return bool(result.rowcount)


async def release_escalation(sessions: async_sessionmaker[AsyncSession], key: str) -> None:
    """Give a claim back (the Journal call it was for failed: the next tick tries again)."""
    async with unit_of_work(sessions) as session:
        await session.execute(delete(EscalationClaim).where(
            EscalationClaim.claim_key == key[:300]))
