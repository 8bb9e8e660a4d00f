"""Signing up: a new organisation with its first administrator, once the address is proven.

`requestSignup` writes a pending sign-up (the browser's cookie and the 6-digit code kept as
digests, valid 5 minutes) and mails the code; `signup(pin)` in the same browser creates the
organisation (its default roles) and the person as its administrator, and opens a browser
session. Requests are limited per address and per client address, and the organisations
made per client address per day (`SIGNUPS_PER_IP_A_DAY`); five wrong codes void one.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import BadInput, RuleViolation
from service.graphql.name_arguments import check_name
from service.models import ServiceMail
from service.people.invitation_models import PendingSignup
from service.people.join_mail import signup_mail
from service.rate_limit import RateLimited
from service.signin import digest, normalise_email

CODE_VALID_MS = 5 * 60_000
MAX_WRONG_CODES = 5
WINDOW_MS = 15 * 60_000
MAX_REQUESTS_PER_EMAIL = 5
MAX_REQUESTS_PER_IP = 10
SIGNUPS_PER_IP_A_DAY = 5
DAY_MS = 86_400_000
SIGNUP_COOKIE = "timebot_signup"
_COUNTRY = re.compile(r"^[A-Z]{2}$")

NO_PENDING = "No sign-up is waiting for a code in this browser: request a code first."
WRONG = 'Invalid argument "pin": this code is not valid (wrong, used or expired).'


@dataclass
class SignupRequested:
    cookie: str
    expires_ms: int
    pin: int


def _code_digest(pending_id: str, pin: int) -> str:
    return digest(f"signup:{pending_id}:{pin:06d}")


def check_country(country: object) -> str | None:
    if country is None:
        return None
    value = country.strip().upper() if isinstance(country, str) else ""
    if not _COUNTRY.match(value):
        raise BadInput("country", "an ISO 3166 two-letter country code, e.g. \"FR\"")
    return value


def _limited(what: str, allowed: int, window: str, per: str) -> RateLimited:
    return RateLimited(
        f"Rate limit: signing up is allowed at most {allowed} {what} {window} per {per}; "
        "try again later"
    )


async def _count(session: AsyncSession, *conditions: object) -> int:
    count = await session.scalar(
        select(func.count()).select_from(PendingSignup).where(*conditions)  # type: ignore[arg-type]
    )
    return int(count or 0)


async def request_signup(
    session: AsyncSession, organisation: str, name: str, email: str, country: object,
    client_ip: str, now_ms: int, public_url: str,
) -> SignupRequested:
    check_name("organisation", organisation)
    organisation_name, person_name = organisation.strip(), name.strip()
    if not organisation_name:
        raise BadInput("organisation", "the organisation needs a name")
    if not person_name:
        raise BadInput("name", "your name is needed")
    address = normalise_email(email)
    code_country = check_country(country)
    since = now_ms - WINDOW_MS
    if await _count(session, PendingSignup.email == address,
                    PendingSignup.created_ms >= since) >= MAX_REQUESTS_PER_EMAIL:
        raise _limited("codes", MAX_REQUESTS_PER_EMAIL, "every 15 minutes", "e-mail address")
    if await _count(session, PendingSignup.client_ip == client_ip,
                    PendingSignup.created_ms >= since) >= MAX_REQUESTS_PER_IP:
        raise _limited("codes", MAX_REQUESTS_PER_IP, "every 15 minutes", "client address")
    if await _count(session, PendingSignup.client_ip == client_ip,
                    PendingSignup.used_ms.is_not(None),
                    PendingSignup.used_ms > now_ms - DAY_MS) >= SIGNUPS_PER_IP_A_DAY:
        raise _limited("new organisations", SIGNUPS_PER_IP_A_DAY, "a day", "client address")
    cookie = secrets.token_urlsafe(32)
    pin = 100_000 + secrets.randbelow(900_000)
    pending = PendingSignup(
        cookie_digest=digest(cookie), code_digest="", organisation_name=organisation_name,
        name=person_name, email=address, country=code_country, client_ip=client_ip,
        created_ms=now_ms, expires_ms=now_ms + CODE_VALID_MS, wrong_attempts=0,
    )
    session.add(pending)
    await session.flush()
    pending.code_digest = _code_digest(pending.id, pin)
    text = signup_mail({"name": person_name, "organisation_name": organisation_name,
                        "code": f"{pin:06d}", "link": f"{public_url}/signup"})
    session.add(ServiceMail(organisation_id=None, to_name=person_name, to_address=address,
                            subject=text.subject, body=text.body, created_ms=now_ms))
    await session.flush()
    return SignupRequested(cookie, pending.expires_ms, pin)


class WrongSignupCode(RuleViolation):
    """A wrong, used or expired code: the caller counts it after its rollback."""

    def __init__(self, pending_id: str) -> None:
        super().__init__(WRONG)
        self.pending_id = pending_id


async def check_code(session: AsyncSession, cookie: str | None, pin: int,
                     now_ms: int) -> PendingSignup:
    """This browser's pending sign-up when `pin` is its code; it is then used."""
    if not cookie:
        raise RuleViolation(NO_PENDING)
    pending = (await session.scalars(
        select(PendingSignup).where(PendingSignup.cookie_digest == digest(cookie))
    )).first()
    if pending is None:
        raise RuleViolation(NO_PENDING)
    if pending.wrong_attempts >= MAX_WRONG_CODES:
        raise RuleViolation(
            "Too many wrong codes: this code is void. Request a new code (rate limit)."
        )
    usable = pending.used_ms is None and now_ms < pending.expires_ms
    if not (usable and hmac.compare_digest(pending.code_digest,
                                           _code_digest(pending.id, pin))):
        raise WrongSignupCode(pending.id)
    claimed = await session.execute(
        update(PendingSignup)
        .where(PendingSignup.id == pending.id, PendingSignup.used_ms.is_(None))
        .values(used_ms=now_ms)
    )
    if getattr(claimed, "rowcount", 1) != 1:
        raise WrongSignupCode(pending.id)
    return pending


async def count_wrong_code(session: AsyncSession, pending_id: str) -> None:
    await session.execute(
        update(PendingSignup)
        .where(PendingSignup.id == pending_id)
        .values(wrong_attempts=PendingSignup.wrong_attempts + 1)
    )
