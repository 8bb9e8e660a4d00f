"""The tenants organisations connected and the Teams users matched to people
(timebot.state.teams_models), and the claims that take a key once.

One tenant serves one organisation: `connect` refuses a tenant already serving another one
(and an organisation already served by another tenant). A removed tenant or user is kept, with
since when: nothing is sent to it until it is connected (or writes to the bot) again."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.teams_models import TeamsClaim, TeamsTenant, TeamsUser


class TakenOver(Exception):
    """The tenant (or the organisation) is connected to another organisation (tenant)."""


@dataclass(frozen=True)
class Tenant:
    tenant_id: str
    organisation_id: str
    service_url: str | None
    active: bool


@dataclass(frozen=True)
class LinkedUser:
    tenant_id: str
    aad_object_id: str
    organisation_id: str
    person_id: str
    teams_user_id: str
    conversation_id: str | None
    service_url: str | None


class TeamsTenants:
    def __init__(self, sessions: async_sessionmaker[AsyncSession],
                 reads: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.sessions, self.reads, self.clock = sessions, reads, clock

    async def tenant(self, tenant_id: str) -> Tenant | None:
        async with self.reads() as session:
            row = await session.get(TeamsTenant, tenant_id)
        if row is None:
            return None
        return Tenant(row.tenant_id, row.organisation_id, row.service_url,
                      row.removed_at_ms is None)

    async def tenant_of(self, organisation_id: str) -> Tenant | None:
        async with self.reads() as session:
            row = (await session.execute(select(TeamsTenant).where(
                TeamsTenant.organisation_id == organisation_id))).scalar_one_or_none()
        if row is None:
            return None
        return Tenant(row.tenant_id, row.organisation_id, row.service_url,
                      row.removed_at_ms is None)

    async def connect(self, tenant_id: str, organisation_id: str, person_id: str) -> None:
        """Record the admin consent: the tenant serves the organisation (again)."""
        async with unit_of_work(self.sessions) as session:
            row = await session.get(TeamsTenant, tenant_id)
            other = (await session.execute(select(TeamsTenant).where(
                TeamsTenant.organisation_id == organisation_id))).scalar_one_or_none()
            if row is not None and row.organisation_id != organisation_id:
                raise TakenOver("the tenant serves another organisation")
            if other is not None and other.tenant_id != tenant_id:
                if other.removed_at_ms is None:
                    raise TakenOver("the organisation is connected to another tenant")
                await session.delete(other)
                await session.flush()
            now = self.clock.now_ms()
            if row is None:
                session.add(TeamsTenant(tenant_id=tenant_id, organisation_id=organisation_id,
                                        consented_by=person_id, consented_at_ms=now))
            else:
                row.consented_by, row.consented_at_ms, row.removed_at_ms = person_id, now, None

    async def note_service_url(self, tenant_id: str, service_url: str) -> None:
        """The connector a verified activity of the tenant named (proactive sends go there)."""
        async with unit_of_work(self.sessions) as session:
            await session.execute(update(TeamsTenant).where(
                TeamsTenant.tenant_id == tenant_id,
                TeamsTenant.service_url.is_distinct_from(service_url),
            ).values(service_url=service_url))

    async def remove_tenant(self, tenant_id: str) -> None:
        async with unit_of_work(self.sessions) as session:
            await session.execute(update(TeamsTenant).where(
                TeamsTenant.tenant_id == tenant_id, TeamsTenant.removed_at_ms.is_(None),
            ).values(removed_at_ms=self.clock.now_ms()))

    async def user(self, tenant_id: str, aad_object_id: str) -> LinkedUser | None:
        """The linked user (None: unknown, or removed the bot)."""
        async with self.reads() as session:
            row = await session.get(TeamsUser, (tenant_id, aad_object_id))
        if row is None or row.removed_at_ms is not None:
            return None
        return _linked(row)

    async def user_of_person(self, organisation_id: str, person_id: str) -> LinkedUser | None:
        """Where to reach a person in Teams (None: not linked, removed, or the tenant is not
        connected any more)."""
        async with self.reads() as session:
            row = (await session.execute(
                select(TeamsUser).join(TeamsTenant, TeamsTenant.tenant_id == TeamsUser.tenant_id)
                .where(TeamsUser.organisation_id == organisation_id,
                       TeamsUser.person_id == person_id, TeamsUser.removed_at_ms.is_(None),
                       TeamsTenant.organisation_id == organisation_id,
                       TeamsTenant.removed_at_ms.is_(None))
                .limit(1))).scalar_one_or_none()
        return _linked(row) if row is not None else None

    async def ever_linked(self, tenant_id: str, organisation_id: str, person_id: str) -> bool:
        """Whether the person has a Teams user of the organisation in the tenant, even one
        that removed the bot (never installed for again: removing it stops sending)."""
        async with self.reads() as session:
            return (await session.execute(select(TeamsUser.aad_object_id).where(
                TeamsUser.tenant_id == tenant_id, TeamsUser.organisation_id == organisation_id,
                TeamsUser.person_id == person_id).limit(1))).first() is not None

    async def link(self, user: LinkedUser) -> None:
        async with unit_of_work(self.sessions) as session:
            row = await session.get(TeamsUser, (user.tenant_id, user.aad_object_id))
            if row is None:
                row = TeamsUser(tenant_id=user.tenant_id, aad_object_id=user.aad_object_id)
                session.add(row)
            row.organisation_id, row.person_id = user.organisation_id, user.person_id
            row.teams_user_id = user.teams_user_id
            row.conversation_id, row.service_url = user.conversation_id, user.service_url
            row.linked_at_ms, row.removed_at_ms = self.clock.now_ms(), None

    async def remove_user(self, tenant_id: str, aad_object_id: str) -> None:
        async with unit_of_work(self.sessions) as session:
            await session.execute(update(TeamsUser).where(
                TeamsUser.tenant_id == tenant_id, TeamsUser.aad_object_id == aad_object_id,
                TeamsUser.removed_at_ms.is_(None),
            ).values(removed_at_ms=self.clock.now_ms()))

    async def claim(self, key: str) -> bool:
        """True for the first caller with this key, False for every other (a retry)."""
        async with unit_of_work(self.sessions) as session:
            result = await session.execute(
                insert_ignoring(session, TeamsClaim, ("key",)),
                {"key": key[:300], "created_ms": self.clock.now_ms()})
            return bool(getattr(result, "rowcount", 0))

    async def claimed(self, key: str) -> bool:
        async with self.reads() as session:
            return await session.get(TeamsClaim, key[:300]) is not None


def _linked(row: TeamsUser) -> LinkedUser:
    return LinkedUser(row.tenant_id, row.aad_object_id, row.organisation_id, row.person_id,
                      row.teams_user_id, row.conversation_id, row.service_url)
