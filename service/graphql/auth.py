"""From an `apikey` header to the organisation and person it authenticates."""

from __future__ import annotations

from sqlalchemy import and_, bindparam, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.account_life import is_retired_key
from service.approvals.settings import remember_untagged
from service.errors import (
    AccountInactive,
    CantFindLinkedAccount,
    CantFindLinkedOrganisation,
    InvalidKey,
)
from service.models import ApiKey, Organisation, Person, PersonTag

# Built once (it is the same for every request): only the key is a parameter. Whether the
# person carries a tag comes along: most carry none, and then the checks of a write that
# cascade through the person's tags (access lists, settings) need not read them.
_BY_KEY = (
    select(
        ApiKey.key,
        Organisation,
        Person,
        exists()
        .where(
            PersonTag.organisation_id == Organisation.id,
            PersonTag.person_id == Person.id,
        )
        .label("tagged"),
    )
    .outerjoin(Organisation, Organisation.id == ApiKey.organisation_id)
    .outerjoin(
        Person,
        and_(Person.id == ApiKey.person_id, Person.organisation_id == Organisation.id),
    )
    .where(ApiKey.key == bindparam("apikey"))
)


async def authenticate(session: AsyncSession, apikey: str | None) -> tuple[Organisation, Person]:
    """One round trip: the key with its organisation and person (either may be gone)."""
    if not apikey:
        raise InvalidKey()
    row = (await session.execute(_BY_KEY, {"apikey": apikey.strip()})).first()
    if row is None:
        if await is_retired_key(session, apikey.strip()):
            raise CantFindLinkedOrganisation()  # its organisation was purged
        raise InvalidKey()
    _key, organisation, person, tagged = row
    if organisation is None:
        raise CantFindLinkedOrganisation()
    if person is None:
        raise CantFindLinkedAccount()
    if not organisation.active:
        raise AccountInactive()
    if not tagged:
        remember_untagged(session, organisation.id, person.id)
    return organisation, person
