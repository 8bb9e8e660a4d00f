"""The token module: one personal legacy token per person, readable and replaceable."""

from __future__ import annotations

import base64
import binascii
import secrets

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.legacy.errors import AccountInactive, ApiCallsDisabled, AuthenticationFailed
from service.legacy.models import LegacyToken
from service.models import Organisation, Person

# The fixed password of HTTP basic authentication: the token is the user name.
PASSWORD = "x"


def new_legacy_token() -> str:
    return secrets.token_hex(20)


async def current_legacy_token(session: AsyncSession, person: Person) -> str | None:
    """The person's token, or None when none has been issued yet."""
    token: str | None = await session.scalar(
        select(LegacyToken.token).where(LegacyToken.person_id == person.id)
    )
    return token


async def ensure_legacy_token(session: AsyncSession, person: Person, now_ms: int) -> str:
    """The person's one legacy token, issued on first need."""
    existing = await current_legacy_token(session, person)
    if existing is not None:
        return existing
    token = LegacyToken(
        token=new_legacy_token(),
        person_id=person.id,
        organisation_id=person.organisation_id,
        created_ms=now_ms,
    )
    session.add(token)
    await session.flush()
    return token.token


async def reset_legacy_token(session: AsyncSession, person: Person, now_ms: int) -> str:
    """Revoke the person's token and issue a new one ("Get a new token")."""
    await session.execute(delete(LegacyToken).where(LegacyToken.person_id == person.id))
    await session.flush()
    return await ensure_legacy_token(session, person, now_ms)


def token_from_authorization(header: str | None) -> str:
    """The token of `Authorization: Basic base64(<token>:x)`; AuthenticationFailed otherwise."""
    if not header:
        raise AuthenticationFailed(
            "Authentication required: HTTP basic authentication with your token as user "
            "name and x as password"
        )
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded.strip():
        raise AuthenticationFailed("Authentication must be HTTP basic authentication")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise AuthenticationFailed("Malformed basic authentication credentials") from None
    token, separator, password = decoded.partition(":")
    if not separator or password != PASSWORD:
        raise AuthenticationFailed("The password of basic authentication must be x")
    if not token:
        raise AuthenticationFailed("Invalid token")
    return token


async def authenticate_token(session: AsyncSession, token: str) -> tuple[Organisation, Person]:
    """The organisation and person of a token, refusing disabled and inactive accounts."""
    row = await session.get(LegacyToken, token)
    if row is None:
        raise AuthenticationFailed("Invalid token")
    person = (
        await session.scalars(
            select(Person).where(
                Person.id == row.person_id, Person.organisation_id == row.organisation_id
            )
        )
    ).one_or_none()
    organisation = await session.get(Organisation, row.organisation_id)
    if person is None or organisation is None or not person.may_authenticate:
        raise AuthenticationFailed("Invalid token")  # archived people's tokens included
    if not organisation.active:
        raise AccountInactive()
    if not organisation.api_enabled:
        raise ApiCallsDisabled()
    return organisation, person
