"""E-mail sign-in codes: a single-use 6-digit code, valid 5 minutes, mailed to an active
person's address through the service's own mail (`ServiceMail`).

The browser that asked holds a random cookie naming its pending sign-in; `signin(pin)` checks
the code of that pending sign-in only. Five wrong codes void it. Requests are limited per
address and per client address, and an address that names nobody is answered exactly like
one that does (a pending sign-in is written, no mail is sent, no code will ever match).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import BadInput, RuleViolation
from service.models import Organisation, Person, ServiceMail
from service.signin.models import PendingSignin
from service.signin.sso import blocks_email_code, initiate_path
from service.signin.web import digest
from service.templated_mail import templated

CODE_VALID_MS = 5 * 60_000
MAX_WRONG_CODES = 5
RATE_WINDOW_MS = 15 * 60_000
MAX_REQUESTS_PER_EMAIL = 5
MAX_REQUESTS_PER_IP = 20
MAX_WRONG_CODES_PER_IP = 25

TOO_MANY = (
    "Too many sign-in attempts: wait 15 minutes, then request a new code (rate limit)."
)
NO_PENDING = "No sign-in is waiting for a code in this browser: request a code first."
WRONG = "Invalid argument \"pin\": this code is not valid (wrong, used or expired)."


@dataclass
class CodeRequested:
    cookie: str  # the browser's secret naming its pending sign-in
    expires_ms: int
    pin: int  # for debugPin (demo) only; never shown otherwise


def _code_digest(pending_id: str, pin: int) -> str:
    return digest(f"{pending_id}:{pin:06d}")


async def _recent(session: AsyncSession, column: object, value: str, since_ms: int) -> int:
    count = await session.scalar(
        select(func.count()).select_from(PendingSignin).where(
            column == value,  # type: ignore[arg-type]
            PendingSignin.created_ms >= since_ms,
        )
    )
    return int(count or 0)


async def _signin_person(
    session: AsyncSession, email: str, account_id: str | None
) -> Person | None:
    statement = (
        select(Person)
        .join(Organisation, Organisation.id == Person.organisation_id)
        .where(Person.email == email, Person.archived.is_(False))
        .order_by(Person.created_ms.desc())
        .limit(1)
    )
    if account_id is not None:
        statement = statement.where(Person.organisation_id == account_id)
    return (await session.scalars(statement)).first()


def normalise_email(email: str) -> str:
    value = (email or "").strip().lower()
    local, _, domain = value.partition("@")
    if not local or "." not in domain or any(ch.isspace() for ch in value) or len(value) > 320:
        raise BadInput("email", "not an e-mail address")
    return value


async def request_code(
    session: AsyncSession,
    email: str,
    account_id: str | None,
    client_ip: str,
    now_ms: int,
    public_url: str = "",
) -> CodeRequested:
    """Write a pending sign-in (and, for an active person, the mail with its code)."""
    address = normalise_email(email)
    since = now_ms - RATE_WINDOW_MS
    if (
        await _recent(session, PendingSignin.email, address, since) >= MAX_REQUESTS_PER_EMAIL
        or await _recent(session, PendingSignin.client_ip, client_ip, since)
        >= MAX_REQUESTS_PER_IP
    ):
        raise RuleViolation(TOO_MANY)
    person = await _signin_person(session, address, account_id)
    cookie = secrets.token_urlsafe(32)
    pin = 100_000 + secrets.randbelow(900_000)
    pending = PendingSignin(
        cookie_digest=digest(cookie),
        code_digest="",
        email=address,
        client_ip=client_ip,
        organisation_id=person.organisation_id if person else None,
        person_id=person.id if person else None,
        created_ms=now_ms,
        expires_ms=now_ms + CODE_VALID_MS,
        wrong_attempts=0,
    )
    session.add(pending)
    await session.flush()
    pending.code_digest = _code_digest(pending.id, pin)
    organisation = await session.get(Organisation, person.organisation_id) if person else None
    if person is not None and organisation is not None and blocks_email_code(organisation):
        # "Disable interactive sign-in": no code, a pointer to single sign-on instead (the
        # answer to the browser stays the same, and the code can never match).
        pending.person_id = None
        session.add(
            ServiceMail(
                organisation_id=person.organisation_id,
                to_name=person.name,
                to_address=person.email,
                subject="Sign in to timebot with single sign-on",
                body=(
                    f"Hello {person.name},\n\n{organisation.name} signs in with single "
                    f"sign-on, not with e-mail codes. Sign in at\n\n    "
                    f"{public_url}{initiate_path(organisation.id)}\n"
                ),
                created_ms=now_ms,
            )
        )
    elif person is not None and organisation is not None:
        subject, body = await templated(
            session, organisation, person, "signin",
            {"person": {"name": person.name, "email": person.email},
             "organisation": organisation.name, "code": str(pin),
             "link": f"{public_url}/signin", "minutes": CODE_VALID_MS // 60_000},
            f"Your timebot sign-in code: {pin}",
            f"Hello {person.name},\n\nyour sign-in code is\n\n    {pin}\n\n"
            "It is valid for 5 minutes and can be used once. If you did not ask to "
            "sign in, ignore this message: nobody can sign in without the code.\n")
        session.add(
            ServiceMail(
                organisation_id=person.organisation_id,
                to_name=person.name,
                to_address=person.email,
                subject=subject,
                body=body,
                created_ms=now_ms,
            )
        )
    await session.flush()
    return CodeRequested(cookie, pending.expires_ms, pin)


async def check_code(
    session: AsyncSession, cookie: str | None, pin: int, client_ip: str, now_ms: int
) -> Person:
    """The person of this browser's pending sign-in when `pin` is its code; the pending
    sign-in is then used up. A wrong code raises `WrongCode` (the caller counts it)."""
    if not cookie:
        raise RuleViolation(NO_PENDING)
    pending = (
        await session.scalars(
            select(PendingSignin).where(PendingSignin.cookie_digest == digest(cookie))
        )
    ).first()
    if pending is None:
        raise RuleViolation(NO_PENDING)
    wrong_from_ip = await session.scalar(
        select(func.coalesce(func.sum(PendingSignin.wrong_attempts), 0)).where(
            PendingSignin.client_ip == client_ip,
            PendingSignin.created_ms >= now_ms - RATE_WINDOW_MS,
        )
    )
    if int(wrong_from_ip or 0) >= MAX_WRONG_CODES_PER_IP:
        raise RuleViolation(TOO_MANY)
    if pending.wrong_attempts >= MAX_WRONG_CODES:
        raise RuleViolation(
            "Too many wrong codes: this code is void. Request a new code (rate limit)."
        )
    usable = pending.used_ms is None and now_ms < pending.expires_ms
    matches = hmac.compare_digest(pending.code_digest, _code_digest(pending.id, pin))
    if not (usable and matches and pending.person_id is not None):
        raise WrongCode(pending.id)
    claimed = await session.execute(
        update(PendingSignin)
        .where(PendingSignin.id == pending.id, PendingSignin.used_ms.is_(None))
        .values(used_ms=now_ms)
    )
    if getattr(claimed, "rowcount", 1) != 1:  # another request used it first
        raise WrongCode(pending.id)
    person = await session.get(Person, pending.person_id)
    if person is None or person.archived:
        raise WrongCode(pending.id)
    return person


class WrongCode(RuleViolation):
    """A wrong, used or expired code. The caller rolls its transaction back and then
    records the attempt (`count_wrong_code`) in a transaction of its own."""

    def __init__(self, pending_id: str) -> None:
        super().__init__(WRONG)
        self.pending_id = pending_id


async def count_wrong_code(session: AsyncSession, pending_id: str) -> None:
    await session.execute(
        update(PendingSignin)
        .where(PendingSignin.id == pending_id)
        .values(wrong_attempts=PendingSignin.wrong_attempts + 1)
    )
