"""Single sign-on (OpenID Connect) on the service's side: which methods an organisation's
settings leave open, and the person an identity provider's verified e-mail address names
(created on first login when the account links the address's domain and allows it).

Settings (`Organisation.sso`, edited by editGoogleSSO / editMicrosoftSSO / editCustomSSO):
each provider's `ssoOnly` is "Disable interactive sign-in": it blocks the e-mail code, and
for the custom OpenID provider every other method (passkeys). The linked domains and
"Automatically create new users on first SSO login" are the account's (stored with the
built-in provider's settings, where the reference schema puts them).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service import rate_limit
from service.errors import RuleViolation
from service.models import ROLE_EMPLOYEE, Organisation, Person
from service.organisation import add_person

SSO_ONLY_CODE = "This account signs in with single sign-on: use your organisation's sign-in link."
SSO_ONLY_ALL = "This account signs in with single sign-on only."


def _settings(organisation: Organisation) -> dict[str, Any]:
    return dict(organisation.sso or {})


def custom_provider(organisation: Organisation) -> dict[str, Any] | None:
    custom = _settings(organisation).get("custom")
    return dict(custom) if custom else None


def blocks_email_code(organisation: Organisation) -> bool:
    settings = _settings(organisation)
    return any(bool((settings.get(name) or {}).get("ssoOnly")) for name in
               ("google", "microsoft", "custom"))


def blocks_other_methods(organisation: Organisation) -> bool:
    return bool((_settings(organisation).get("custom") or {}).get("ssoOnly"))


def initiate_path(organisation_id: str) -> str:
    return f"/sso/{organisation_id}/custom/initiate"


def callback_path(organisation_id: str) -> str:
    return f"/sso/{organisation_id}/custom/callback"


async def person_for_login(
    session: AsyncSession, organisation: Organisation, email: str, name: str, now_ms: int
) -> Person:
    """The active person of the organisation with this (provider-verified) address."""
    address = email.strip().lower()
    person = (await session.scalars(
        select(Person).where(
            Person.organisation_id == organisation.id, Person.email == address
        )
    )).first()
    if person is not None:
        if person.archived:
            raise RuleViolation(f"{address} is archived in {organisation.name}.")
        return person
    if not creates_users_for(organisation, address):
        raise RuleViolation(
            f"Nobody in {organisation.name} has the address {address}: ask an administrator "
            "to add you (or to link your domain and create users on first login)."
        )
    return await create_on_first_login(session, organisation, address, name, now_ms)


def creates_users_for(organisation: Organisation, address: str) -> bool:
    """Whether the account links the address's domain and creates users on first login."""
    linked = _settings(organisation).get("google") or {}
    domain = address.rpartition("@")[2]
    return bool(linked.get("autoUser")) and domain in (linked.get("domains") or [])


async def create_on_first_login(
    session: AsyncSession, organisation: Organisation, address: str, name: str, now_ms: int
) -> Person:
    """A new employee (sign-up: rate-limited with the organisation's additions)."""
    await rate_limit.count_durable(session, rate_limit.ADDING_PEOPLE, organisation.id, None,
                                   now_ms)
    person, _key = await add_person(
        session, organisation.id, name.strip() or address.partition("@")[0], address,
        ROLE_EMPLOYEE, now_ms,
    )
    return person
