"""Creating organisations and keys outside GraphQL (the CLI, the demo, the bot's own needs)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.graphql.name_arguments import plain_name
from service.models import (
    ACCOUNT_KIND,
    ROLE_ADMIN,
    ROLE_EMPLOYEE,
    ROLE_MANAGER,
    ApiKey,
    Organisation,
    Person,
    Role,
)

DEFAULT_ROLES = (("Admin", ROLE_ADMIN), ("Manager", ROLE_MANAGER), ("Employee", ROLE_EMPLOYEE))


@dataclass
class NewOrganisation:
    organisation: Organisation
    admin: Person
    apikey: str
    roles: dict[str, Role]


def new_api_key() -> str:
    return secrets.token_hex(20)


async def create_organisation(
    session: AsyncSession, name: str, admin_name: str, admin_email: str, now_ms: int
) -> NewOrganisation:
    organisation = Organisation(name=plain_name(name), created_ms=now_ms, sso={}, settings={})
    session.add(organisation)
    await session.flush()
    roles: dict[str, Role] = {}
    for role_name, kind in DEFAULT_ROLES:
        role = Role(organisation_id=organisation.id, name=role_name, kind=kind)
        session.add(role)
        roles[kind] = role
    await session.flush()
    admin = Person(
        organisation_id=organisation.id,
        name=plain_name(admin_name),
        email=admin_email.strip().lower(),
        role_id=roles[ROLE_ADMIN].id,
        start_date_ms=now_ms,
        created_ms=now_ms,
        settings={},
    )
    session.add(admin)
    await session.flush()
    apikey = await ensure_api_key(session, admin, now_ms)
    return NewOrganisation(organisation, admin, apikey, roles)


async def ensure_api_key(session: AsyncSession, person: Person, now_ms: int) -> str:
    """The person's one API key, created on first need."""
    existing = (
        await session.scalars(select(ApiKey).where(ApiKey.person_id == person.id,
                                      ApiKey.kind == ACCOUNT_KIND))
    ).one_or_none()
    if existing is not None:
        return existing.key
    key = ApiKey(
        key=new_api_key(),
        person_id=person.id,
        organisation_id=person.organisation_id,
        created_ms=now_ms,
    )
    session.add(key)
    await session.flush()
    return key.key


async def reset_api_key(session: AsyncSession, person: Person, now_ms: int) -> str:
    """Revoke the person's key and issue a new one."""
    existing = (
        await session.scalars(select(ApiKey).where(ApiKey.person_id == person.id,
                                      ApiKey.kind == ACCOUNT_KIND))
    ).one_or_none()
    if existing is not None:
        await session.delete(existing)
        await session.flush()
    return await ensure_api_key(session, person, now_ms)


async def persons_by_email(
    session: AsyncSession, email: str, org_id: str | None = None
) -> list[Person]:
    statement = select(Person).where(Person.email == email.strip().lower())
    if org_id is not None:
        statement = statement.where(Person.organisation_id == org_id)
    return list((await session.scalars(statement)).unique())


def new_person(org_id: str, name: str, email: str, role: Role, now_ms: int,
               color: str | None = None) -> Person:
    """A person as addPerson makes one (no settings of their own, starting now); the caller
    adds it to the session. `timebot service import` makes its people with it too."""
    person = Person(
        organisation_id=org_id,
        name=name,
        email=email,
        role_id=role.id,
        color=color,
        start_date_ms=now_ms,
        created_ms=now_ms,
        settings={},
    )
    person.role = role
    return person


async def add_person(
    session: AsyncSession,
    org_id: str,
    name: str,
    email: str,
    role_kind: str,
    now_ms: int,
) -> tuple[Person, str]:
    """A person with the organisation's role of that kind, and their API key."""
    role = (
        await session.scalars(
            select(Role).where(Role.organisation_id == org_id, Role.kind == role_kind).limit(1)
        )
    ).one()
    # plain_name: e.g. from an identity provider's claims
    person = new_person(org_id, plain_name(name), email.strip().lower(), role, now_ms)
    session.add(person)
    await session.flush()
    return person, await ensure_api_key(session, person, now_ms)
