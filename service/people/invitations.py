"""Inviting people an administrator added, and joining with the invitation's link.

`invite` sorts the persons named (`sort_invitees`, pure): those with no e-mail address,
those already in the organisation (they signed in themselves before, by any method: a
browser session of their own exists; or the inviter), and the others, each of whom gets a
new invitation (voiding their older ones) and its e-mail through the service's mail. The
mails are rate-limited (`rate_limit.INVITING_PEOPLE`, counted per invitation, and at most
`MAX_PER_PERSON_A_DAY` invitations per person a day), all or nothing.

The link (`/join/<invitation id>?token=...`) carries a random token that only the mail holds;
the row keeps its digest. Opening the link hands the token to the browser as a cookie
(`INVITATION_COOKIE`); `join(organisationId, invitationId)` then checks it, uses the
invitation once, and opens a browser session as the invited person.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.ids import new_id
from service import rate_limit
from service.errors import RuleViolation
from service.models import BrowserSession, Organisation, Person, ServiceMail
from service.people.invitation_models import Invitation
from service.people.join_mail import invite_mail
from service.signin import digest

INVITATION_VALID_MS = 7 * 86_400_000
INVITATION_COOKIE = "timebot_invitation"
MAX_PER_PERSON_A_DAY = 3
DAY_MS = 86_400_000

NO_LINK = (
    "No invitation link was opened in this browser: open the link of the invitation e-mail "
    "first."
)
NOT_VALID = "This invitation is not valid (unknown, or not the one of the link opened)."
USED = "This invitation was used already: sign in with your e-mail address instead."
VOIDED = "This invitation was replaced by a newer one: use the link of the latest e-mail."
ARCHIVED = "The invited person is archived: ask an administrator."


@dataclass
class Sorted:
    invite: list[Person]
    already: list[Person]
    no_email: list[Person]


@dataclass
class Invited:
    invited: list[Invitation]
    already: list[Person]
    no_email: list[Person]


def has_email(person: Person) -> bool:
    return "@" in (person.email or "")


def sort_invitees(persons: Sequence[Person], joined_ids: set[str], inviter_id: str) -> Sorted:
    """Who gets an invitation, who is already in, who has no address (in the given order)."""
    result = Sorted([], [], [])
    for person in persons:
        if not has_email(person):
            result.no_email.append(person)
        elif person.id in joined_ids or person.id == inviter_id:
            result.already.append(person)
        else:
            result.invite.append(person)
    return result


def expiry_label(expires_ms: int) -> str:
    return datetime.fromtimestamp(expires_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


async def joined_ids(session: AsyncSession, org_id: str, person_ids: list[str]) -> set[str]:
    """Those of `person_ids` who have signed in themselves (a browser session they own)."""
    if not person_ids:
        return set()
    rows = await session.scalars(
        select(BrowserSession.owner_id).distinct().where(
            BrowserSession.organisation_id == org_id,
            BrowserSession.owner_id.in_(bindparam("ids", expanding=True)),
        ),
        {"ids": person_ids},
    )
    return set(rows)


async def _check_per_person(session: AsyncSession, org_id: str, persons: list[Person],
                            now_ms: int) -> None:
    if not persons:
        return
    counts = dict((await session.execute(
        select(Invitation.person_id, func.count()).where(
            Invitation.organisation_id == org_id,
            Invitation.person_id.in_(bindparam("ids", expanding=True)),
            Invitation.created_ms > now_ms - DAY_MS,
        ).group_by(Invitation.person_id),
        {"ids": [p.id for p in persons]},
    )).tuples().all())
    for person in persons:
        if counts.get(person.id, 0) >= MAX_PER_PERSON_A_DAY:
            raise rate_limit.RateLimited(
                f"Rate limit: inviting people is allowed at most {MAX_PER_PERSON_A_DAY} "
                f"invitations a day per invited person ({person.name} <{person.email}> had "
                f"{counts[person.id]}); try again tomorrow"
            )


async def invite(session: AsyncSession, organisation: Organisation, inviter: Person,
                 persons: Sequence[Person], now_ms: int, public_url: str) -> Invited:
    """New invitations and their mails (written in the caller's transaction)."""
    joined = await joined_ids(session, organisation.id, [p.id for p in persons])
    chosen = sort_invitees(persons, joined, inviter.id)
    if chosen.invite:
        await _check_per_person(session, organisation.id, chosen.invite, now_ms)
        await rate_limit.count_durable(session, rate_limit.INVITING_PEOPLE, organisation.id,
                                       inviter.id, now_ms, amount=len(chosen.invite))
        ids = [p.id for p in chosen.invite]
        await session.execute(
            update(Invitation)
            .where(Invitation.organisation_id == organisation.id,
                   Invitation.person_id.in_(bindparam("ids", expanding=True)),
                   Invitation.used_ms.is_(None), Invitation.voided_ms.is_(None))
            .values(voided_ms=now_ms),
            {"ids": ids},
        )
    expires_ms = now_ms + INVITATION_VALID_MS
    invitations: list[Invitation] = []
    mails: list[dict[str, object]] = []
    for person in chosen.invite:
        token = secrets.token_urlsafe(32)
        invitation = Invitation(
            id=new_id(), organisation_id=organisation.id, person_id=person.id,
            email=person.email, token_digest=digest(token), invited_by_id=inviter.id,
            created_ms=now_ms, expires_ms=expires_ms,
        )
        invitations.append(invitation)
        text = invite_mail({
            "person_name": person.name,
            "organisation_name": organisation.name,
            "inviter_name": inviter.name,
            "link": f"{public_url}/join/{invitation.id}?token={token}",
            "expires": expiry_label(expires_ms),
        })
        mails.append({
            "id": new_id(), "organisation_id": organisation.id, "to_name": person.name,
            "to_address": person.email, "subject": text.subject, "body": text.body,
            "created_ms": now_ms, "attempts": 0, "next_attempt_ms": 0,
        })
    if invitations:
        session.add_all(invitations)
        await session.flush()
        await session.execute(insert(ServiceMail), mails)
    return Invited(invitations, chosen.already, chosen.no_email)


async def accept(session: AsyncSession, organisation_id: str, invitation_id: str,
                 token: str | None, now_ms: int) -> Person:
    """The invited person, the invitation then used (RuleViolation saying why not)."""
    if not token:
        raise RuleViolation(NO_LINK)
    invitation = await session.get(Invitation, invitation_id)
    if (
        invitation is None
        or invitation.organisation_id != organisation_id
        or not secrets.compare_digest(invitation.token_digest, digest(token))
    ):
        raise RuleViolation(NOT_VALID)
    if invitation.used_ms is not None:
        raise RuleViolation(USED)
    if invitation.voided_ms is not None:
        raise RuleViolation(VOIDED)
    if now_ms >= invitation.expires_ms:
        raise RuleViolation(
            f"This invitation expired on {expiry_label(invitation.expires_ms)}: ask an "
            "administrator to invite you again."
        )
    person = await session.get(Person, invitation.person_id)
    if person is None or person.archived or person.organisation_id != organisation_id:
        raise RuleViolation(ARCHIVED)
    claimed = await session.execute(
        update(Invitation)
        .where(Invitation.id == invitation.id, Invitation.used_ms.is_(None))
        .values(used_ms=now_ms)
    )
    if getattr(claimed, "rowcount", 1) != 1:  # a double submit: the other one joined
        raise RuleViolation(USED)
    return person


@dataclass
class LinkView:
    """What the link's page shows before joining."""

    invitation: Invitation | None
    organisation: Organisation | None
    person: Person | None
    problem: str | None


async def view_link(session: AsyncSession, invitation_id: str, token: str,
                    now_ms: int) -> LinkView:
    invitation = await session.get(Invitation, invitation_id)
    if invitation is None or not secrets.compare_digest(invitation.token_digest,
                                                        digest(token)):
        return LinkView(None, None, None, NOT_VALID)
    organisation = await session.get(Organisation, invitation.organisation_id)
    person = await session.get(Person, invitation.person_id)
    problem = None
    if invitation.used_ms is not None:
        problem = USED
    elif invitation.voided_ms is not None:
        problem = VOIDED
    elif now_ms >= invitation.expires_ms:
        problem = f"This invitation expired on {expiry_label(invitation.expires_ms)}."
    return LinkView(invitation, organisation, person, problem)
