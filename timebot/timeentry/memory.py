"""The bot's memory of quick time entry (its own database): what each person created, for
`/time undo`, and the numbered list they saw last, for `edit <n>` / `delete <n>`."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.db import once_more_on_conflict, unit_of_work
from timebot.state.models import QuickEntry, QuickListing


class Memory:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def remember(self, org_id: str, person_id: str, record_id: str, reading: str,
                       source: str, now_ms: int, source_key: str | None = None) -> None:
        async with unit_of_work(self.sessions) as session:
            session.add(QuickEntry(
                organisation_id=org_id, person_id=person_id, record_id=record_id,
                reading=reading, source=source, source_key=source_key, created_ms=now_ms,
            ))

    async def by_source_key(self, source_key: str) -> QuickEntry | None:
        async with self.sessions() as session:
            return (await session.scalars(
                select(QuickEntry).where(QuickEntry.source_key == source_key)
            )).one_or_none()

    async def last_creation(self, org_id: str, person_id: str) -> QuickEntry | None:
        async with self.sessions() as session:
            return (await session.scalars(
                select(QuickEntry)
                .where(QuickEntry.organisation_id == org_id, QuickEntry.person_id == person_id,
                       QuickEntry.undone_ms.is_(None))
                .order_by(QuickEntry.created_ms.desc(), QuickEntry.id.desc())
                .limit(1)
            )).first()

    async def forget_record(self, record_id: str, now_ms: int) -> None:
        """The record is gone (undone, deleted or replaced): undo no longer names it."""
        async with unit_of_work(self.sessions) as session:
            rows = await session.scalars(
                select(QuickEntry).where(QuickEntry.record_id == record_id,
                                         QuickEntry.undone_ms.is_(None))
            )
            for row in rows:
                row.undone_ms = now_ms

    async def replace_record(self, org_id: str, person_id: str, old_id: str, new_id: str,
                             reading: str) -> None:
        """An edit replaced the record: its creation (and the listing) now name the new one."""
        async with unit_of_work(self.sessions) as session:
            for row in await session.scalars(
                select(QuickEntry).where(QuickEntry.record_id == old_id)
            ):
                row.record_id, row.reading = new_id, reading
            listing = await session.get(QuickListing, (org_id, person_id))
            if listing is not None and old_id in listing.record_ids:
                listing.record_ids = [new_id if r == old_id else r for r in listing.record_ids]

    async def save_listing(self, org_id: str, person_id: str, record_ids: list[str],
                           now_ms: int) -> None:
        async def save() -> None:  # two listings of one person may race: see plumbing.db
            async with unit_of_work(self.sessions) as session:
                listing = await session.get(QuickListing, (org_id, person_id))
                if listing is None:
                    listing = QuickListing(organisation_id=org_id, person_id=person_id)
                    session.add(listing)
                listing.record_ids = list(record_ids)
                listing.created_ms = now_ms

        await once_more_on_conflict(save)

    async def listing(self, org_id: str, person_id: str) -> list[str] | None:
        async with self.sessions() as session:
            listing = await session.get(QuickListing, (org_id, person_id))
            return list(listing.record_ids) if listing is not None else None
