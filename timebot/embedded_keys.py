"""Key provisioning against the embedded service: the shell may reach into its database;
bot/ and mail/ never do (they go through the directory and the GraphQL client)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service.clock import Clock
from service.db import unit_of_work
from service.models import Person
from service.provisioning import ensure_api_key
from timebot.directory import ProvisionedPerson


class EmbeddedKeys:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.sessions = sessions
        self.clock = clock

    async def _provision(self, session: AsyncSession, person: Person) -> ProvisionedPerson:
        key = await ensure_api_key(session, person, self.clock.now_ms())
        return ProvisionedPerson(person.organisation_id, person.id, person.email, person.name, key)

    async def by_email(self, email: str, organisation_id: str | None) -> list[ProvisionedPerson]:
        async with unit_of_work(self.sessions) as session:
            statement = select(Person).where(
                Person.email == email.strip().lower(), Person.archived.is_(False)
            )
            if organisation_id is not None:
                statement = statement.where(Person.organisation_id == organisation_id)
            persons = list((await session.scalars(statement)).unique())
            return [await self._provision(session, person) for person in persons]

    async def by_id(self, organisation_id: str, person_id: str) -> ProvisionedPerson | None:
        async with unit_of_work(self.sessions) as session:
            person = (
                await session.scalars(
                    select(Person).where(
                        Person.id == person_id, Person.organisation_id == organisation_id
                    )
                )
            ).unique().one_or_none()
            return None if person is None else await self._provision(session, person)
