"""Approval reminders: "Remind approvers after N days if not yet approved" (account, tag or
person setting, the most specific winning). Run by the webhook worker each time it wakes: a
timesheet waiting at one stage for N days or more is announced to the stage's pending
approvers as an `approvalReminder` webhook event, then again every N days."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.db import unit_of_work
from service.models import Organisation, Person
from service.organisation import APPROVAL_REMINDER, resolve
from service.timesheets.actor import Actor
from service.timesheets.autosubmit import auto_submit
from service.timesheets.models import SUBMITTED, Timesheet
from service.timesheets.notify import notify
from service.webhooks import EVENT_APPROVAL_REMINDER

DAY_MS = 86_400_000


def reminder_due(days: object, entered_ms: int, reminded_ms: int | None, now_ms: int) -> bool:
    """Pure: N days (N >= 1) after the stage was entered or the last reminder."""
    if not isinstance(days, int) or isinstance(days, bool) or days < 1:
        return False
    last = max(entered_ms, reminded_ms or 0)
    return now_ms - last >= days * DAY_MS


async def approval_reminders(sessions: async_sessionmaker[AsyncSession], now_ms: int) -> int:
    """Queue the reminders that are due; returns how many."""
    sent = 0
    async with unit_of_work(sessions) as session:
        rows = list(
            await session.scalars(
                select(Timesheet)
                .where(
                    Timesheet.status == SUBMITTED,
                    Timesheet.stage_entered_ms <= now_ms - DAY_MS,
                )
                .with_for_update(skip_locked=True)
            )
        )
        for timesheet in rows:
            organisation = await session.get(Organisation, timesheet.organisation_id)
            owner = await session.get(Person, timesheet.person_id)
            if organisation is None or owner is None or timesheet.stage_entered_ms is None:
                continue
            days = (await resolve(session, organisation, owner, APPROVAL_REMINDER)).value
            if not reminder_due(days, timesheet.stage_entered_ms, timesheet.reminded_ms, now_ms):
                continue
            timesheet.reminded_ms = now_ms
            await notify(Actor(session, organisation, None, now_ms), timesheet, "reminder",
                         event=EVENT_APPROVAL_REMINDER)
            sent += 1
    return sent


async def approval_sweeps(sessions: async_sessionmaker[AsyncSession], now_ms: int) -> None:
    """The approval workflow's timed work: auto-submission, then reminders."""
    await auto_submit(sessions, now_ms)
    await approval_reminders(sessions, now_ms)
