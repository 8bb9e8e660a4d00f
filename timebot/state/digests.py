"""The daily digests sent to approvers (`mail_digests`): the items each one listed, in its
order, so that a reply to it ("approve all", "approve 1 3", "reject 2 <reason>") and the
digest's reply token (which signs only the digest's id) name the same timesheets. Written
before the digest is queued; kept while its reply address lives (`KEEP_MS`), then pruned
(every expired digest is removed whenever a new one is stored)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, BigInteger, String, delete
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from plumbing.db import unit_of_work
from plumbing.ids import new_id
from timebot.state.models import StateBase

DAY_MS = 86_400_000
KEEP_MS = 31 * DAY_MS  # the digest's reply address lives 30 days


class MailDigest(StateBase):
    """One digest: its approver and the timesheets it listed (`DigestItem` dicts, in order)."""

    __tablename__ = "mail_digests"

    id: Mapped[str] = mapped_column(String(24), primary_key=True, default=new_id)
    organisation_id: Mapped[str] = mapped_column(String(64))
    approver_id: Mapped[str] = mapped_column(String(64))
    items: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_ms: Mapped[int] = mapped_column(BigInteger, index=True)


@dataclass(frozen=True)
class DigestItem:
    """One listed timesheet: its submit event and stage, and whose it is, for which period."""

    submit_id: str
    stage: int
    person_id: str
    person_name: str
    start_ms: int
    end_ms: int
    time_zone: str = "UTC"  # the zone the digest showed the period in (its approver's)

    def as_json(self) -> dict[str, Any]:
        return {"submit_id": self.submit_id, "stage": self.stage, "person_id": self.person_id,
                "person_name": self.person_name, "start_ms": self.start_ms,
                "end_ms": self.end_ms, "time_zone": self.time_zone}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DigestItem:
        return cls(str(data["submit_id"]), int(data["stage"]), str(data["person_id"]),
                   str(data["person_name"]), int(data["start_ms"]), int(data["end_ms"]),
                   str(data.get("time_zone") or "UTC"))


@dataclass(frozen=True)
class StoredDigest:
    id: str
    organisation_id: str
    approver_id: str
    items: tuple[DigestItem, ...]


async def store_digest(
    sessions: async_sessionmaker[AsyncSession], organisation_id: str, approver_id: str,
    items: list[DigestItem], now_ms: int,
) -> str:
    """A new digest's id (24 hex), its items stored; expired digests pruned."""
    digest_id = new_id()
    async with unit_of_work(sessions) as session:
        await session.execute(delete(MailDigest).where(MailDigest.created_ms < now_ms - KEEP_MS))
        session.add(MailDigest(id=digest_id, organisation_id=organisation_id,
                               approver_id=approver_id,
                               items=[item.as_json() for item in items], created_ms=now_ms))
    return digest_id


async def forget_digest(sessions: async_sessionmaker[AsyncSession], digest_id: str) -> None:
    """A digest that was not queued after all (another process queued that day's)."""
    async with unit_of_work(sessions) as session:
        await session.execute(delete(MailDigest).where(MailDigest.id == digest_id))


async def load_digest(
    sessions: async_sessionmaker[AsyncSession], digest_id: str
) -> StoredDigest | None:
    async with sessions() as session:
        row = await session.get(MailDigest, digest_id)
        if row is None:
            return None
        return StoredDigest(row.id, row.organisation_id, row.approver_id,
                            tuple(DigestItem.from_json(item) for item in row.items or []))
