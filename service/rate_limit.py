"""Rate limits of sensitive operations (the specification: sign-in, sign-up, inviting people,
loading public holidays). Sign-in codes are limited in `service/signin/codes.py`.

- `hit`: in-process, per organisation and person, a sliding minute on the request clock
  (loading public holidays, a read: each process counts on its own).
- `count_durable`: in the database (`RateLimitHit`), sliding windows per organisation and per
  acting person, shared by every process and kept across restarts (adding people with
  `addPerson` or `duplicatePerson`, users created on their first single sign-on). Counted in
  the caller's transaction: a call that fails is not counted. The organisation's row is locked first
  (PostgreSQL; SQLite writers are serialised anyway) so that concurrent calls cannot both
  take the last place.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.ids import new_id
from service.errors import RuleViolation
from service.models import Organisation
from service.models.rate_limit import RateLimitHit

HOLIDAY_LOADS_PER_MINUTE = 30
WINDOW_MS = 60_000
HOUR_MS = 3_600_000

_windows: dict[tuple[str, str, str], deque[int]] = {}


class RateLimited(RuleViolation):
    """Too many calls of a rate-limited operation."""


def hit(action: str, org_id: str, person_id: str, now_ms: int,
        limit: int = HOLIDAY_LOADS_PER_MINUTE) -> None:
    """Counts one call; RateLimited when the person already made `limit` in the last minute."""
    window = _windows.setdefault((action, org_id, person_id), deque())
    while window and window[0] <= now_ms - WINDOW_MS:
        window.popleft()
    if len(window) >= limit:
        wait = max(1, (window[0] + WINDOW_MS - now_ms + 999) // 1000)
        raise RateLimited(f"Rate limit: {action} is allowed at most {limit} times a minute "
                          f"per person; try again in {wait} s")
    window.append(now_ms)


@dataclass(frozen=True)
class Limit:
    action: str  # as the message names it, e.g. "adding people"
    per_organisation: int
    per_person: int | None = None  # None: the operation has no acting person
    window_ms: int = HOUR_MS
    unit: str = "times"  # what is counted, as the message names it

    @property
    def window_label(self) -> str:
        hours = self.window_ms / HOUR_MS
        return "an hour" if hours == 1 else f"{hours:g} hours"


# People added to an organisation: by one admin (addPerson, duplicatePerson), and in all
# (those and the users created on their first single sign-on, who have no acting person,
# share it).
ADDING_PEOPLE = Limit("adding people", per_organisation=200, per_person=50)
# Invitation e-mails (invitePersons counts one per invited person, so that the mails sent to
# addresses that have not signed in yet are what is limited, not the calls): an administrator
# brings in a large organisation in one call.
INVITING_PEOPLE = Limit("inviting people", per_organisation=2_000, per_person=1_000,
                        unit="invitations")


async def _used(session: AsyncSession, org_id: str, action: str, scope: str, since: int) -> int:
    await session.execute(delete(RateLimitHit).where(
        RateLimitHit.organisation_id == org_id, RateLimitHit.action == action,
        RateLimitHit.scope == scope, RateLimitHit.at_ms <= since,
    ))
    count = await session.scalar(select(func.count()).select_from(RateLimitHit).where(
        RateLimitHit.organisation_id == org_id, RateLimitHit.action == action,
        RateLimitHit.scope == scope, RateLimitHit.at_ms > since,
    ))
    return int(count or 0)


async def count_durable(session: AsyncSession, limit: Limit, org_id: str,
                        person_id: str | None, now_ms: int, amount: int = 1) -> None:
    """Counts `amount` (one call, or one call's invitations) of `limit.action`
    (RateLimited, counting nothing, when that would go over)."""
    await session.execute(
        select(Organisation.id).where(Organisation.id == org_id).with_for_update(key_share=True)
    )
    since = now_ms - limit.window_ms
    scopes: list[tuple[str, int, str]] = [
        ("organisation", limit.per_organisation, "per organisation")
    ]
    if person_id is not None and limit.per_person is not None:
        scopes.append((f"person:{person_id}", limit.per_person, "per person"))
    for scope, allowed, label in scopes:
        used = await _used(session, org_id, limit.action, scope, since)
        if used + amount > allowed:
            asked = "" if amount == 1 else f" ({amount} asked, {max(0, allowed - used)} left)"
            raise RateLimited(
                f"Rate limit: {limit.action} is allowed at most {allowed} {limit.unit} "
                f"{limit.window_label} {label}{asked}; try again later"
            )
    if amount == 1:
        for scope, _allowed, _label in scopes:
            session.add(RateLimitHit(organisation_id=org_id, action=limit.action, scope=scope,
                                     at_ms=now_ms))
        await session.flush()
        return
    await session.execute(insert(RateLimitHit), [
        {"id": new_id(), "organisation_id": org_id, "action": limit.action, "scope": scope,
         "at_ms": now_ms}
        for scope, _allowed, _label in scopes for _ in range(amount)
    ])
