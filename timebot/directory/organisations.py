"""The organisations of a hosted service that timebot serves, each with its own integration
key (#27): `timebot orgs add --integration-key KEY` checks the key with `currentOrganisation`
and stores it sealed with TIMEBOT_SECRET_KEY; the people directory then answers that
organisation's integration key from here. TIMEBOT_INTEGRATION_KEY still serves its one
organisation beside them (the one-organisation shortcut).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from timebot.client import ServiceClient, operation
from timebot.directory.recent import Recent
from timebot.errors import ServiceRequestError
from timebot.secret_key.crypto import SecretBox
from timebot.state.org_models import HostedOrganisation

WHICH_ORGANISATION = operation(
    "query WhichOrganisation { currentOrganisation { id name } }"
)
LOOKUP_TTL_S = 10.0


@dataclass(frozen=True)
class ServedOrganisation:
    organisation_id: str
    name: str
    added_ms: int


class OrganisationKeys:
    """The registered organisations and their sealed integration keys."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], client: ServiceClient,
                 box: SecretBox, clock: Clock) -> None:
        self.sessions = sessions
        self.client = client
        self.box = box
        self.clock = clock
        # A key is needed for every event and reminder: read once per LOOKUP_TTL_S (a key
        # added or removed by another process, the CLI, counts within it).
        self._recent: Recent[str, tuple[str | None]] = Recent(LOOKUP_TTL_S)

    async def add(self, integration_key: str) -> ServedOrganisation:
        """Register the key's organisation (its key replaced if it was registered), after
        the service said which organisation the key is of."""
        key = integration_key.strip()
        if not key:
            raise ServiceRequestError(["the integration key is empty"])
        data = await self.client.execute(WHICH_ORGANISATION, apikey=key)
        organisation = data.get("currentOrganisation") or {}
        if not organisation.get("id"):
            raise ServiceRequestError(["the service names no organisation for that key"])
        org_id, name = str(organisation["id"]), str(organisation.get("name") or "")
        try:
            added = await self._store(org_id, name, key)
        except IntegrityError:  # registered at the same moment by another process
            added = await self._store(org_id, name, key)
        self._recent.put(org_id, (key,))
        return added

    async def _store(self, org_id: str, name: str, key: str) -> ServedOrganisation:
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            row = await session.get(HostedOrganisation, org_id)
            if row is None:
                row = HostedOrganisation(organisation_id=org_id, added_ms=now)
                session.add(row)
            row.name = name
            row.integration_key_sealed = self.box.seal(key)
            row.updated_ms = now
            return ServedOrganisation(org_id, name, row.added_ms)

    async def remove(self, organisation_id: str) -> bool:
        """Forget the organisation and its key; False when it was not registered."""
        async with unit_of_work(self.sessions) as session:
            gone = await session.execute(delete(HostedOrganisation).where(
                HostedOrganisation.organisation_id == organisation_id))
        self._recent.put(organisation_id, (None,))
        return bool(getattr(gone, "rowcount", 0))

    async def served(self) -> list[ServedOrganisation]:
        async with self.sessions() as session:
            rows = await session.scalars(
                select(HostedOrganisation).order_by(HostedOrganisation.added_ms,
                                                    HostedOrganisation.organisation_id))
            return [ServedOrganisation(row.organisation_id, row.name, row.added_ms)
                    for row in rows]

    async def key_for(self, organisation_id: str) -> str | None:
        """The organisation's registered key, or None."""
        recent = self._recent.get(organisation_id)
        if recent is not None:
            return recent[0]
        async with self.sessions() as session:
            row = await session.get(HostedOrganisation, organisation_id)
            key = None if row is None else self.box.open(row.integration_key_sealed)
        self._recent.put(organisation_id, (key,))
        return key
