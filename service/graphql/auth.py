"""From an `apikey` header to the organisation and person it authenticates. An archived
person's key is refused as an unknown one (`APIKeyError:InvalidKey`), from the row the one
statement already reads (no statement more), except an integration's own person's.

The one statement finds either kind of key (`service/people/models.py`): the account key as
offered, an integration key by the SHA-256 digest of what is offered. Nothing is cached: a
revoked or expired integration key is refused by the next request, in every process."""

from __future__ import annotations

import hashlib
from typing import cast

from sqlalchemy import Table, and_, bindparam, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import remember_untagged
from service.as_loaded import Columns
from service.errors import (
    AccountInactive,
    CantFindLinkedAccount,
    CantFindLinkedOrganisation,
    InvalidKey,
)
from service.models import ApiKey, Organisation, Person, PersonTag
from service.organisation.account_life import is_retired_key
from service.people import columns as person_columns
from service.people.columns import PERSONS, ROLE_OF_PERSON, ROLES
from service.people.models import ACCOUNT_KIND, INTEGRATION_KIND

_KEYS = cast(Table, ApiKey.__table__)
_ORGANISATIONS = cast(Table, Organisation.__table__)
_TAGS = cast(Table, PersonTag.__table__)
_ORGANISATION = Columns(Organisation, prefix="o_")

# Built once (it is the same for every request): only the key is a parameter. The
# organisation, the person and their role are read as Core columns and made entities by
# `as_loaded` (the ORM's loading of them cost more than the statement). Whether the person
# carries a tag comes along: most carry none, and then the checks of a write that cascade
# through the person's tags (access lists, settings) need not read them.
_BY_KEY = (
    select(
        _KEYS.c.key,
        exists()
        .where(
            _TAGS.c.organisation_id == _ORGANISATIONS.c.id,
            _TAGS.c.person_id == PERSONS.c.id,
        )
        .label("tagged"),
        _KEYS.c.kind,
        _KEYS.c.expire_ms,
        _KEYS.c.revoked_ms,
        *_ORGANISATION.labelled,
        *person_columns.LABELLED,
    )
    .select_from(_KEYS)
    .outerjoin(_ORGANISATIONS, _ORGANISATIONS.c.id == _KEYS.c.organisation_id)
    .outerjoin(
        PERSONS,
        and_(PERSONS.c.id == _KEYS.c.person_id,
             PERSONS.c.organisation_id == _ORGANISATIONS.c.id),
    )
    .outerjoin(ROLES, ROLE_OF_PERSON)
    .where(
        or_(
            and_(_KEYS.c.key == bindparam("apikey"), _KEYS.c.kind == ACCOUNT_KIND),
            and_(_KEYS.c.key == bindparam("digest"), _KEYS.c.kind == INTEGRATION_KIND),
        )
    )
)
_AT_ORGANISATION = 5
_AT_PERSON = _AT_ORGANISATION + _ORGANISATION.width


def key_digest(apikey: str) -> str:
    """How an integration key is stored."""
    return hashlib.sha256(apikey.encode("utf-8")).hexdigest()


async def authenticate(
    session: AsyncSession, apikey: str | None, now_ms: int
) -> tuple[Organisation, Person, str]:
    """One round trip: the key with its organisation and person (either may be gone), and
    the key's kind."""
    if not apikey:
        raise InvalidKey()
    offered = apikey.strip()
    row = (await session.execute(_BY_KEY, {"apikey": offered,
                                           "digest": key_digest(offered)})).first()
    if row is None:
        if await is_retired_key(session, apikey.strip()):
            raise CantFindLinkedOrganisation()  # its organisation was purged
        raise InvalidKey()
    if row.revoked_ms is not None or (row.expire_ms is not None and row.expire_ms <= now_ms):
        raise InvalidKey()
    organisation = _ORGANISATION.build(session, row, _AT_ORGANISATION)
    if organisation is None:
        raise CantFindLinkedOrganisation()
    person = person_columns.person_of(session, row, _AT_PERSON)
    if person is None:
        raise CantFindLinkedAccount()
    if not person.may_authenticate:  # archived: refused as an unknown key is
        raise InvalidKey()
    if not organisation.active:
        raise AccountInactive()
    if not row.tagged:
        remember_untagged(session, organisation.id, person.id)
    return organisation, person, row.kind
