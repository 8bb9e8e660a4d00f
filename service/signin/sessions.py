"""Browser sessions: opened by a successful sign-in, stored as the digest of their cookie,
listed and revocable from the account page; an administrator's takeover ("Sign in as ...")
switches the person a session acts as, and Stop switches it back.

A session is not refused for an inactive subscription: only API keys are (the specification's
402 applies to keys).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import and_, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from service.errors import (
    CantFindLinkedAccount,
    InvalidKey,
    NotFound,
    PermissionDenied,
    RuleViolation,
)
from service.models import ROLE_ADMIN, Organisation, Person
from service.signin.models import BrowserSession
from service.signin.web import SESSION_DAYS, digest

SESSION_MS = SESSION_DAYS * 86_400_000


@dataclass
class SignedIn:
    """Who a browser session authenticates: `person` acts, `owner` signed in (the admin
    during a takeover, else the same person)."""

    row: BrowserSession
    organisation: Organisation
    person: Person
    owner: Person

    @property
    def took_over_by(self) -> Person | None:
        return self.owner if self.owner.id != self.person.id else None


@dataclass
class Opened:
    token: str
    signed_in: SignedIn


_Owner = aliased(Person)
_BY_TOKEN = (
    select(BrowserSession, Organisation, Person, _Owner)
    .join(Organisation, Organisation.id == BrowserSession.organisation_id)
    .outerjoin(
        Person,
        and_(Person.id == BrowserSession.person_id, Person.organisation_id == Organisation.id),
    )
    .outerjoin(
        _Owner,
        and_(_Owner.id == BrowserSession.owner_id, _Owner.organisation_id == Organisation.id),
    )
    .where(BrowserSession.token_digest == bindparam("digest"))
)


async def open_session(
    session: AsyncSession,
    person: Person,
    now_ms: int,
    user_agent: str = "",
    client_ip: str = "",
    method: str = "email",
) -> Opened:
    token = secrets.token_urlsafe(32)
    row = BrowserSession(
        token_digest=digest(token),
        organisation_id=person.organisation_id,
        owner_id=person.id,
        person_id=person.id,
        user_agent=user_agent[:255],
        client_ip=client_ip[:64],
        method=method,
        created_ms=now_ms,
        expires_ms=now_ms + SESSION_MS,
    )
    session.add(row)
    await session.flush()
    organisation = await session.get(Organisation, person.organisation_id)
    assert organisation is not None
    return Opened(token, SignedIn(row, organisation, person, person))


async def by_token(session: AsyncSession, token: str | None, now_ms: int) -> SignedIn:
    """The live session of a cookie; InvalidKey when there is none (expired, revoked)."""
    if not token:
        raise InvalidKey()
    row = (await session.execute(_BY_TOKEN, {"digest": digest(token)})).first()
    if row is None:
        raise InvalidKey()
    browser, organisation, person, owner = row
    if browser.revoked_ms is not None or browser.expires_ms <= now_ms:
        raise InvalidKey()
    if person is None or owner is None or owner.archived:
        raise CantFindLinkedAccount()
    return SignedIn(browser, organisation, person, owner)


async def sessions_of(session: AsyncSession, owner: Person, now_ms: int) -> list[BrowserSession]:
    """The person's live sessions, newest first."""
    return list(
        await session.scalars(
            select(BrowserSession)
            .where(
                BrowserSession.owner_id == owner.id,
                BrowserSession.organisation_id == owner.organisation_id,
                BrowserSession.revoked_ms.is_(None),
                BrowserSession.expires_ms > now_ms,
            )
            .order_by(BrowserSession.created_ms.desc(), BrowserSession.id)
        )
    )


async def revoke(session: AsyncSession, owner: Person, session_id: str, now_ms: int) -> None:
    """Revoke one of the person's own sessions (NotFound for anyone else's)."""
    done = await session.execute(
        update(BrowserSession)
        .where(
            BrowserSession.id == session_id,
            BrowserSession.owner_id == owner.id,
            BrowserSession.organisation_id == owner.organisation_id,
            BrowserSession.revoked_ms.is_(None),
        )
        .values(revoked_ms=now_ms)
    )
    if getattr(done, "rowcount", 1) != 1:
        raise NotFound("sessionId", session_id, "session")


async def start_takeover(session: AsyncSession, signed_in: SignedIn, target_id: str) -> Person:
    """The administrator who signed in acts as `target_id` until stopTakeover."""
    if signed_in.owner.role.kind != ROLE_ADMIN:
        raise PermissionDenied("only administrators may sign in as another person")
    target = await session.get(Person, target_id)
    if target is None or target.organisation_id != signed_in.organisation.id:
        raise NotFound("targetId", target_id, "person")
    if target.archived:
        raise RuleViolation("An archived person cannot be signed in as.")
    if target.id == signed_in.owner.id:
        raise RuleViolation("You are already signed in as yourself: choose another person.")
    signed_in.row.person_id = target.id
    signed_in.person = target
    await session.flush()
    return target


async def stop_takeover(session: AsyncSession, signed_in: SignedIn) -> Person:
    if signed_in.took_over_by is None:
        raise RuleViolation("No takeover to stop: you are signed in as yourself.")
    signed_in.row.person_id = signed_in.owner.id
    signed_in.person = signed_in.owner
    await session.flush()
    return signed_in.owner


async def sign_out(session: AsyncSession, signed_in: SignedIn, now_ms: int) -> None:
    signed_in.row.revoked_ms = now_ms
    await session.flush()
