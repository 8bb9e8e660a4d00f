"""Key provisioning against the embedded service: the shell may reach into its database;
bot/ and mail/ never do (they go through the directory and the GraphQL client)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from service.models import Organisation, Person, Role
from service.organisation.provisioning import ensure_api_key
from service.people.models import INTEGRATION_SETTING, ROLE_ADMIN
from timebot.directory.people import ProvisionedPerson
from timebot.directory.recent import Recent


class EmbeddedKeys:
    INTEGRATION_KEY_TTL_S = 10.0
    """How long an integration key is reused without asking the database again: a reset key
    keeps being tried for at most this long."""

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], clock: Clock, bot_address: str
    ) -> None:
        self.sessions = sessions
        self.clock = clock
        self.bot_address = bot_address.strip().lower()
        self._integration_keys: Recent[str, str] = Recent(self.INTEGRATION_KEY_TTL_S)

    async def _provision(self, session: AsyncSession, person: Person) -> ProvisionedPerson:
        key = await ensure_api_key(session, person, self.clock.now_ms())
        return ProvisionedPerson(person.organisation_id, person.id, person.email, person.name, key)

    async def by_email(self, email: str, organisation_id: str | None) -> list[ProvisionedPerson]:
        """The person(s) with their key, created on first need. Two processes creating the
        same person's key at once (PostgreSQL): the loser of the race re-reads it."""
        try:
            return await self._by_email(email, organisation_id)
        except IntegrityError:
            return await self._by_email(email, organisation_id)

    async def _by_email(
        self, email: str, organisation_id: str | None
    ) -> list[ProvisionedPerson]:
        async with unit_of_work(self.sessions) as session:
            statement = select(Person).where(
                Person.email == email.strip().lower(), Person.archived.is_(False)
            )
            if organisation_id is not None:
                statement = statement.where(Person.organisation_id == organisation_id)
            persons = list((await session.scalars(statement)).unique())
            return [await self._provision(session, person) for person in persons]

    async def by_id(
        self, organisation_id: str | None, person_id: str
    ) -> ProvisionedPerson | None:
        """As `by_email`, by id."""
        try:
            return await self._by_id(organisation_id, person_id)
        except IntegrityError:
            return await self._by_id(organisation_id, person_id)

    async def _by_id(
        self, organisation_id: str | None, person_id: str
    ) -> ProvisionedPerson | None:
        async with unit_of_work(self.sessions) as session:
            statement = select(Person).where(Person.id == person_id)
            if organisation_id is not None:
                statement = statement.where(Person.organisation_id == organisation_id)
            person = (await session.scalars(statement)).unique().one_or_none()
            return None if person is None else await self._provision(session, person)

    async def organisation_ids(self) -> list[str]:
        async with self.sessions() as session:
            return list(await session.scalars(select(Organisation.id).order_by(Organisation.id)))

    async def integration_key(self, organisation_id: str) -> str:
        """timebot's own person in the organisation: an administrator, archived so that it is
        in no list, no workflow and no reminder, whose key is the integration key. Two
        workers asking at once both end with the one person (the loser of the race re-reads).
        Provisioning takes the service's write lock, so the key is kept for a few seconds."""
        cached = self._integration_keys.get(organisation_id)
        if cached is not None:
            return cached
        try:
            key = await self._integration_key(organisation_id)
        except IntegrityError:
            key = await self._integration_key(organisation_id)
        self._integration_keys.put(organisation_id, key)
        return key

    async def _integration_key(self, organisation_id: str) -> str:
        async with unit_of_work(self.sessions) as session:
            person = (
                await session.scalars(
                    select(Person).where(
                        Person.organisation_id == organisation_id,
                        Person.email == self.bot_address,
                    )
                )
            ).unique().one_or_none()
            if person is None:
                role = (
                    await session.scalars(
                        select(Role).where(
                            Role.organisation_id == organisation_id, Role.kind == ROLE_ADMIN
                        ).limit(1)
                    )
                ).one()
                now = self.clock.now_ms()
                person = Person(
                    organisation_id=organisation_id,
                    name="timebot",
                    email=self.bot_address,
                    role_id=role.id,
                    archived=True,
                    start_date_ms=now,
                    created_ms=now,
                    settings={INTEGRATION_SETTING: True},
                )
                session.add(person)
                await session.flush()
            return await ensure_api_key(session, person, self.clock.now_ms())
