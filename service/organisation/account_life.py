"""The account's life: scheduled deletion with its grace period, the purge, the subscription.

An administrator schedules the deletion; every administrator is told by e-mail, and any of
them may cancel until the grace period ends. When it has ended, `purge_due` removes every row
of the organisation (each tenant table cascades from `organisations`; API keys, which have no
foreign key on purpose, become digests in `retired_keys`). The operator may end the grace
early with `timebot service purge`. Each function runs in the caller's unit of work.
"""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import insert_ignoring
from service.models import KEY_INTEGRATION, ROLE_ADMIN, ApiKey, Organisation, Person, Role
from service.organisation.account_models import RetiredKey, ServiceMail

GRACE_MS = 7 * 86_400_000


class AccountLifeError(Exception):
    """The account is not in the state the operation needs (the message says which)."""


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Notice:
    subject: str
    body: str


async def _administrators(session: AsyncSession, org_id: str) -> list[Person]:
    statement = (
        select(Person)
        .join(Role, Role.id == Person.role_id)
        .where(Person.organisation_id == org_id, Role.kind == ROLE_ADMIN, ~Person.archived)
        .order_by(Person.name)
    )
    return list((await session.scalars(statement)).unique())


async def _tell_administrators(
    session: AsyncSession, organisation: Organisation, notice: Notice, now_ms: int
) -> None:
    for admin in await _administrators(session, organisation.id):
        session.add(
            ServiceMail(
                organisation_id=organisation.id,
                to_name=admin.name,
                to_address=admin.email,
                subject=notice.subject,
                body=notice.body,
                created_ms=now_ms,
            )
        )


def _utc(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


async def schedule_deletion(
    session: AsyncSession, organisation: Organisation, by: Person, now_ms: int
) -> Organisation:
    """Schedule the deletion (idempotent: a repeated request keeps the first date and sends no
    second notice)."""
    if organisation.deletion_due_ms is not None:
        return organisation
    organisation.deletion_due_ms = now_ms + GRACE_MS
    organisation.deletion_by_id = by.id
    due = _utc(organisation.deletion_due_ms)
    notice = Notice(
        subject=f"{organisation.name} is scheduled for deletion on {due}",
        body=(
            f"{by.name} <{by.email}> scheduled the account {organisation.name} for deletion.\n\n"
            f"On {due} every record of it is deleted permanently: people, projects, time,\n"
            "expenses, approvals and the audit trail. Until then any administrator can cancel\n"
            "the deletion (cancelOrganisationDeletion), and everything stays as it is.\n"
        ),
    )
    await _tell_administrators(session, organisation, notice, now_ms)
    return organisation


async def cancel_deletion(
    session: AsyncSession, organisation: Organisation, by: Person, now_ms: int
) -> Organisation:
    if organisation.deletion_due_ms is None:
        raise AccountLifeError("the organisation is not scheduled for deletion")
    if organisation.deletion_due_ms <= now_ms:
        raise AccountLifeError(
            "the grace period has ended; the deletion can no longer be cancelled"
        )
    organisation.deletion_due_ms = None
    organisation.deletion_by_id = None
    notice = Notice(
        subject=f"The deletion of {organisation.name} was cancelled",
        body=(
            f"{by.name} <{by.email}> cancelled the scheduled deletion of the account "
            f"{organisation.name}.\nNothing will be deleted.\n"
        ),
    )
    await _tell_administrators(session, organisation, notice, now_ms)
    return organisation


async def purge_organisation(session: AsyncSession, org_id: str, now_ms: int) -> None:
    """Delete every row of a scheduled organisation, now (the operator's early end of grace
    included). Refuses an organisation that is not scheduled for deletion."""
    organisation = await session.get(Organisation, org_id)
    if organisation is None:
        raise AccountLifeError(f"no organisation {org_id}")
    if organisation.deletion_due_ms is None:
        raise AccountLifeError(
            f"organisation {org_id} is not scheduled for deletion; an administrator schedules "
            "it first (scheduleOrganisationDeletion)"
        )
    keys = (await session.execute(
        select(ApiKey.key, ApiKey.kind).where(ApiKey.organisation_id == org_id)
    )).all()
    for key, kind in keys:
        # An integration key is stored as its digest already.
        digest = key if kind == KEY_INTEGRATION else key_digest(key)
        await session.execute(
            insert_ignoring(session, RetiredKey, ("key_digest",)),
            {"key_digest": digest, "retired_ms": now_ms},
        )
    await session.execute(delete(ApiKey).where(ApiKey.organisation_id == org_id))
    # Rows that point at the organisation's own rows are removed by their cascades; the
    # organisation goes last, with a plain DELETE so that the database runs them.
    await session.execute(delete(Organisation).where(Organisation.id == org_id))


async def due_for_purge(session: AsyncSession, now_ms: int) -> list[str]:
    statement = select(Organisation.id).where(
        Organisation.deletion_due_ms.is_not(None), Organisation.deletion_due_ms <= now_ms
    )
    return list((await session.scalars(statement)).all())


async def set_subscription(session: AsyncSession, org_id: str, active: bool) -> None:
    result = await session.execute(
        update(Organisation).where(Organisation.id == org_id).values(active=active)
    )
    if result.rowcount == 0:  # type: ignore[attr-defined]
        raise AccountLifeError(f"no organisation {org_id}")


async def is_retired_key(session: AsyncSession, key: str) -> bool:
    return await session.get(RetiredKey, key_digest(key)) is not None
