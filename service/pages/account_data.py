"""What the account page shows of the service, read (and, for the API key and the legacy
token, created on first open) for the signed-in browser."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, or_, select

from plumbing.db import unit_of_work
from service.legacy.tokens import ensure_legacy_token
from service.models import Person
from service.organisation.provisioning import ensure_api_key
from service.pages.common import PageContext
from service.signin.models import BrowserSession, Passkey
from service.signin.passkeys import passkeys_of
from service.signin.sessions import SignedIn, sessions_of
from service.signin.sso import callback_path, initiate_path

TAKEOVER_LIST = 20


@dataclass
class AccountView:
    signed_in: SignedIn
    apikey: str | None
    legacy_token: str | None
    sessions: list[BrowserSession]
    is_admin: bool
    query: str = ""
    people: list[Person] = field(default_factory=list)
    deletion_due_ms: int | None = None
    passkeys: list[Passkey] = field(default_factory=list)
    sso: dict[str, Any] = field(default_factory=dict)


async def account_view(pages: PageContext, signed_in: SignedIn, query: str) -> AccountView:
    service = pages.service
    now = service.clock.now_ms()
    person = signed_in.person
    apikey = legacy = None
    if signed_in.took_over_by is None:  # an administrator acting as someone sees no key
        async with unit_of_work(service.sessions) as session:
            acting = await session.get(Person, person.id)
            assert acting is not None
            apikey = await ensure_api_key(session, acting, now)
            legacy = await ensure_legacy_token(session, acting, now)
    async with service.read_sessions() as session:
        sessions = await sessions_of(session, signed_in.owner, now)
        keys = await passkeys_of(session, person)
        is_admin = signed_in.owner.role.kind == "admin" and signed_in.took_over_by is None
        people: list[Person] = []
        if is_admin:
            statement = (
                select(Person)
                .where(
                    Person.organisation_id == signed_in.organisation.id,
                    Person.archived.is_(False),
                    Person.id != signed_in.owner.id,
                )
                .order_by(Person.name, Person.id)
                .limit(TAKEOVER_LIST)
            )
            if query:
                pattern = f"%{query.lower()}%"
                statement = statement.where(
                    or_(func.lower(Person.name).like(pattern), Person.email.like(pattern))
                )
            people = list(await session.scalars(statement))
    return AccountView(
        signed_in=signed_in,
        apikey=apikey,
        legacy_token=legacy,
        sessions=sessions,
        is_admin=is_admin,
        query=query,
        people=people,
        deletion_due_ms=signed_in.organisation.deletion_due_ms,
        passkeys=keys,
        sso=sso_panel(pages, signed_in) if is_admin else {},
    )


def sso_panel(pages: PageContext, signed_in: SignedIn) -> dict[str, Any]:
    """What the Single Sign-On panel shows (never the client secret)."""
    organisation = signed_in.organisation
    settings = dict(organisation.sso or {})
    custom = dict(settings.get("custom") or {})
    linked = dict(settings.get("google") or {})
    base = pages.config.public_url
    return {
        "issuer": custom.get("issuer", ""),
        "client_id": custom.get("clientId", ""),
        "has_secret": bool(custom.get("clientSecret")),
        "sso_only": bool(custom.get("ssoOnly")),
        "domains": ", ".join(linked.get("domains") or []),
        "auto_user": bool(linked.get("autoUser")),
        "initiate": f"{base}{initiate_path(organisation.id)}",
        "callback": f"{base}{callback_path(organisation.id)}",
    }


def template_values(view: AccountView, csrf: str, **extra: Any) -> dict[str, Any]:
    return {"view": view, "csrf": csrf, **extra}
