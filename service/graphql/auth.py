"""From an `apikey` header to the organisation and person it authenticates."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import (
    AccountInactive,
    CantFindLinkedAccount,
    CantFindLinkedOrganisation,
    InvalidKey,
)
from service.models import ApiKey, Organisation, Person


async def authenticate(session: AsyncSession, apikey: str | None) -> tuple[Organisation, Person]:
    if not apikey:
        raise InvalidKey()
    key = await session.get(ApiKey, apikey.strip())
    if key is None:
        raise InvalidKey()
    organisation = await session.get(Organisation, key.organisation_id)
    if organisation is None:
        raise CantFindLinkedOrganisation()
    person = (
        await session.scalars(
            select(Person).where(
                Person.id == key.person_id, Person.organisation_id == organisation.id
            )
        )
    ).one_or_none()
    if person is None:
        raise CantFindLinkedAccount()
    if not organisation.active:
        raise AccountInactive()
    return organisation, person
