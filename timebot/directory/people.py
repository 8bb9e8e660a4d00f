"""The people directory: which person of the service the bot may act for, with which key.

Every call the bot makes on someone's behalf uses that person's own API key, never an
administrator's. Keys come from a link (the person's own key, checked with `currentPerson`
and stored encrypted) or, against the embedded service, are provisioned on first need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from timebot.client import ServiceClient, operation
from timebot.directory.organisations import OrganisationKeys
from timebot.directory.recent import Recent
from timebot.errors import NotLinked, ServiceRequestError, UnknownPerson
from timebot.l10n.settings import ENGLISH, Localisation
from timebot.secret_key.crypto import SecretBox
from timebot.state.models import PersonLink

WHO_AM_I = operation(
    "query WhoAmI { currentPerson { id name email } currentOrganisation { id name } }"
)


@dataclass(frozen=True)
class DirectoryEntry:
    organisation_id: str
    person_id: str
    email: str
    name: str
    source: str
    slack_user_id: str | None = None


@dataclass(frozen=True)
class PersonDetails:
    """A person as a read of the service described them: what the owner's notice needs."""

    person_id: str
    name: str
    email: str | None
    time_zone: str
    archived: bool
    localisation: Localisation = ENGLISH  # their language and formats (#24)
    # The person's notificationSettings value (timebot.notify.person_notify.gets).
    notify: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ProvisionedPerson:
    organisation_id: str
    person_id: str
    email: str
    name: str
    apikey: str


class KeyProvisioner(Protocol):
    """Issues people's keys; only the embedded service can (shell.embedded_keys)."""

    async def by_email(self, email: str, organisation_id: str | None) -> list[ProvisionedPerson]:
        ...

    async def by_id(
        self, organisation_id: str | None, person_id: str
    ) -> ProvisionedPerson | None:
        ...

    async def integration_key(self, organisation_id: str) -> str:
        ...

    async def organisation_ids(self) -> list[str]:
        ...


def _entry(link: PersonLink) -> DirectoryEntry:
    return DirectoryEntry(
        link.organisation_id, link.person_id, link.email, link.name, link.source,
        link.slack_user_id,
    )


class PeopleDirectory:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        client: ServiceClient,
        box: SecretBox,
        clock: Clock,
        provisioner: KeyProvisioner | None = None,
        integration_key: str | None = None,
        organisations: OrganisationKeys | None = None,
    ) -> None:
        self.sessions = sessions
        self.client = client
        self.box = box
        self.clock = clock
        self.provisioner = provisioner
        self._integration_key = integration_key
        # A hosted service's organisations registered with `timebot orgs add` (#27).
        self.organisations = organisations
        # Recent look-ups, reused for LOOKUP_TTL_S: a reply or a click needs the same person
        # and key several times within a second. Links stored by this process replace them
        # at once; by another process (the CLI), within the TTL.
        self._recent_people: Recent[str, DirectoryEntry] = Recent(self.LOOKUP_TTL_S)
        self._recent_keys: Recent[tuple[str, str], str] = Recent(self.LOOKUP_TTL_S)
        self._recent_details: Recent[str, PersonDetails] = Recent(self.LOOKUP_TTL_S)

    LOOKUP_TTL_S = 10.0

    def note_details(self, details: PersonDetails) -> None:
        """Keep what a read just found about a person for LOOKUP_TTL_S: the owner's notice
        that follows a reply's decision within a second needs no read of its own."""
        self._recent_details.put(details.person_id, details)

    def recent_details(self, person_id: str) -> PersonDetails | None:
        return self._recent_details.get(person_id)

    async def integration_key(self, organisation_id: str) -> str:
        """The key for directory look-ups and approval states of that organisation: its key
        registered with `timebot orgs add`, TIMEBOT_INTEGRATION_KEY, or one the embedded
        service provisions for timebot."""
        if self.organisations is not None and organisation_id:
            registered = await self.organisations.key_for(organisation_id)
            if registered is not None:
                return registered
        if self._integration_key is not None:
            return self._integration_key
        if self.provisioner is not None:
            return await self.provisioner.integration_key(organisation_id)
        raise NotLinked("TIMEBOT_INTEGRATION_KEY is not set and no organisation is "
                        f"registered for {organisation_id or 'this service'} (timebot orgs add)")

    async def organisation_ids(self) -> list[str]:
        """The organisations timebot serves: every embedded one, or those registered with
        `timebot orgs add` and the one of TIMEBOT_INTEGRATION_KEY."""
        if self.provisioner is not None and self._integration_key is None:
            return await self.provisioner.organisation_ids()
        ids = ([served.organisation_id for served in await self.organisations.served()]
               if self.organisations is not None else [])
        if self._integration_key is None:
            if self.organisations is None:
                raise NotLinked("TIMEBOT_INTEGRATION_KEY is not set and no organisation is "
                                "registered (timebot orgs add)")
            return ids
        data = await self.client.execute(
            "query { currentOrganisation { id } }", apikey=self._integration_key
        )
        own = str(data["currentOrganisation"]["id"])
        return [own, *(org_id for org_id in ids if org_id != own)]

    async def link(
        self, email: str, apikey: str, *, organisation_id: str | None = None
    ) -> DirectoryEntry:
        """Link a person's own key, after checking with the service that it is theirs (and,
        given `organisation_id`, of that organisation: a Slack workspace serves one)."""
        data = await self.client.execute(WHO_AM_I, apikey=apikey)
        person, organisation = data["currentPerson"], data["currentOrganisation"]
        if person["email"].strip().lower() != email.strip().lower():
            raise ServiceRequestError(
                [f"that key belongs to {person['email']}, not to {email.strip().lower()}"]
            )
        if organisation_id is not None and str(organisation["id"]) != organisation_id:
            raise ServiceRequestError(
                ["that key is of another organisation than the one this workspace serves"])
        return await self._store(
            str(organisation["id"]), person["id"], person["email"], person["name"], apikey,
            "linked",
        )

    async def _store(
        self, org_id: str, person_id: str, email: str, name: str, apikey: str, source: str
    ) -> DirectoryEntry:
        try:
            entry = await self._store_once(org_id, person_id, email, name, apikey, source)
        except IntegrityError:
            # Another task or process linked the same person first (several replies of a new
            # approver processed at once): update the link it made.
            entry = await self._store_once(org_id, person_id, email, name, apikey, source)
        self._recent_people.forget(person_id)
        self._recent_keys.put((org_id, person_id), apikey)
        return entry

    async def _store_once(
        self, org_id: str, person_id: str, email: str, name: str, apikey: str, source: str
    ) -> DirectoryEntry:
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            link = (
                await session.scalars(
                    select(PersonLink).where(
                        PersonLink.organisation_id == org_id, PersonLink.person_id == person_id
                    )
                )
            ).one_or_none()
            if link is None:
                link = PersonLink(organisation_id=org_id, person_id=person_id, created_ms=now)
                session.add(link)
            link.email = email.strip().lower()
            link.name = name
            link.apikey_sealed = self.box.seal(apikey)
            link.source = source
            link.updated_ms = now
            await session.flush()
            return _entry(link)

    async def entries(self) -> list[DirectoryEntry]:
        async with self.sessions() as session:
            links = await session.scalars(
                select(PersonLink).order_by(PersonLink.organisation_id, PersonLink.email)
            )
            return [_entry(link) for link in links]

    async def apikey_for(self, organisation_id: str, person_id: str) -> str:
        """The person's own key: linked, or provisioned by the embedded service."""
        recent_key = self._recent_keys.get((organisation_id, person_id))
        if recent_key is not None:
            return recent_key
        async with self.sessions() as session:
            link = (
                await session.scalars(
                    select(PersonLink).where(
                        PersonLink.organisation_id == organisation_id,
                        PersonLink.person_id == person_id,
                    )
                )
            ).one_or_none()
            if link is not None:
                key = self.box.open(link.apikey_sealed)
                self._recent_keys.put((organisation_id, person_id), key)
                return key
        if self.provisioner is not None:
            provisioned = await self.provisioner.by_id(organisation_id, person_id)
            if provisioned is not None:
                await self._remember(provisioned)
                return provisioned.apikey
            raise UnknownPerson(f"no person {person_id} in organisation {organisation_id}")
        raise NotLinked(f"person {person_id} has not linked an API key")

    async def find_by_person_id(self, person_id: str) -> DirectoryEntry:
        """The person with that id, whatever the organisation (ids are unique across them):
        what a reply token or a one-click link names."""
        recent = self._recent_people.get(person_id)
        if recent is not None:
            return recent
        async with self.sessions() as session:
            link = (
                await session.scalars(select(PersonLink).where(PersonLink.person_id == person_id))
            ).first()
        if link is not None:
            entry = _entry(link)
            self._recent_people.put(person_id, entry)
            return entry
        if self.provisioner is not None:
            provisioned = await self.provisioner.by_id(None, person_id)
            if provisioned is not None:
                return await self._remember(provisioned)
        raise UnknownPerson(f"no person {person_id} is known to timebot")

    async def find_by_email(
        self, email: str, organisation_id: str | None = None
    ) -> DirectoryEntry:
        """The person with that e-mail; in the embedded default, provisioned on first need."""
        address = email.strip().lower()
        async with self.sessions() as session:
            statement = select(PersonLink).where(PersonLink.email == address)
            if organisation_id is not None:
                statement = statement.where(PersonLink.organisation_id == organisation_id)
            links = list(await session.scalars(statement))
        if len(links) == 1:
            return _entry(links[0])
        if self.provisioner is not None:
            found = await self.provisioner.by_email(address, organisation_id)
            if len(found) == 1:
                return await self._remember(found[0])
            if len(found) > 1:
                raise UnknownPerson(f"{address} is in several organisations; name one")
        if links:
            raise UnknownPerson(f"{address} is in several organisations; name one")
        raise UnknownPerson(f"no person with e-mail {address} is known to timebot")

    async def _remember(self, person: ProvisionedPerson) -> DirectoryEntry:
        return await self._store(
            person.organisation_id, person.person_id, person.email, person.name, person.apikey,
            "provisioned",
        )
