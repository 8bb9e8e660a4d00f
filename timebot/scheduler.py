"""The scheduler: end-of-period reminders in each person's own time zone, and daily digests.

Periods are weeks, Monday 00:00 to Monday 00:00 in the person's time zone (GraphQL
`localisation { timeZone { value } }`). When a week has ended (and for REMINDER_GRACE_MS after,
so that a process that was down catches up), each active person whose timesheet for it is
draft, rejected or empty is reminded once: never when it is approved or submitted (waiting
for someone else), nor when the person was absent on every working day of their work schedule
(GraphQL `scheduledDays`: the schedule minus public holidays; Monday to Friday by default), nor
when the week had no working day for them. On a day that is not a working day for the person
(a public holiday, a day off in their schedule) the reminder waits for a later tick.

Several timebot processes may share one database: a lease (`scheduler_leases`) lets one of
them run a tick at a time, and every mail carries a dedupe key (person, period), so each
reminder goes out exactly once even should two ticks overlap after a lease expired.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import structlog
from sqlalchemy import or_, update

from mail.digest import send_digests
from mail.reminders import send_timesheet_reminder
from mail.reviews import MailContext, already_queued, time_zone_of
from plumbing.db import unit_of_work
from timebot.client import operation
from timebot.scheduler_epoch import ended_before, first_seen_ms
from timebot.state.db import insert_ignoring
from timebot.state.models import SchedulerLease
from timebot.summary import load_summary
from timebot.worker import PollingWorker

if TYPE_CHECKING:
    from timebot.runtime import Runtime

log = structlog.get_logger("timebot.scheduler")

DAY_MS = 86_400_000
REMINDER_GRACE_MS = 2 * DAY_MS
LEASE_MS = 5 * 60_000
WORKING_DAYS = 5  # Monday to Friday

PEOPLE = operation(
    """query SchedulerPeople {
      getPersons {
        id name email archived
        localisation { timeZone { value } }
      }
    }"""
)
# Extensions of the embedded service (a hosted service's schema has neither): sent only when
# the service offers them (ServiceClient.offers).
PEOPLE_AUTO_SUBMIT_EXTENSION = operation(
    """query SchedulerAutoSubmit {
      getPersons { id timeSettings { autoSubmit { value } } }
    }"""
)
TEAM_STATES = operation(
    """query SchedulerStates($ids: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getTeamApprovalStates(personIds: $ids, startTime: $s, endTime: $e) {
        person { id } status totalDuration
      }
    }"""
)


PLANNED_DAYS_EXTENSION = operation(
    """query SchedulerPlannedDays($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getPerson(id: $p) { scheduledDays(startTime: $s, endTime: $e) { date { ts } workingDay } }
    }"""
)


@dataclass(frozen=True)
class Period:
    start_ms: int
    end_ms: int


def last_ended_week(now_ms: int, time_zone: str) -> Period:
    """Pure: the latest local week (Monday 00:00 to Monday 00:00) that has ended by now."""
    zone = ZoneInfo(time_zone)
    local = datetime.fromtimestamp(now_ms / 1000, UTC).astimezone(zone)
    monday = (local - timedelta(days=local.weekday())).date()
    end = datetime(monday.year, monday.month, monday.day, tzinfo=zone)
    start_day = monday - timedelta(days=7)
    start = datetime(start_day.year, start_day.month, start_day.day, tzinfo=zone)
    return Period(int(start.timestamp() * 1000), int(end.timestamp() * 1000))


def reminder_due(now_ms: int, period: Period) -> bool:
    """Pure: the period has ended, not longer ago than the grace."""
    return period.end_ms <= now_ms < period.end_ms + REMINDER_GRACE_MS


def absent_whole_period(
    records: list[tuple[date, bool]], period: Period, time_zone: str,
    working: set[date] | None = None,
) -> bool:
    """Pure: `records` = (local day, is absence). Absent on every working day (`working`, by
    default Monday to Friday) and nothing but absences."""
    zone = ZoneInfo(time_zone)
    absent_days = set()
    for day, is_absence in records:
        if not is_absence:
            return False
        absent_days.add(day)
    if working is None:
        first = datetime.fromtimestamp(period.start_ms / 1000, UTC).astimezone(zone).date()
        working = {first + timedelta(days=offset) for offset in range(WORKING_DAYS)}
    return working <= absent_days


def working_days(days: list[dict[str, Any]], time_zone: str) -> dict[date, bool]:
    """Pure: {local day: working} from GraphQL scheduledDays."""
    zone = ZoneInfo(time_zone)
    return {
        datetime.fromtimestamp(int(day["date"]["ts"]) / 1000, UTC).astimezone(zone).date():
            bool(day["workingDay"])
        for day in days
    }


def weekdays(start_ms: int, end_ms: int, time_zone: str) -> dict[date, bool]:
    """Pure: {local day: Monday to Friday} from start to end (inclusive), for a service that
    knows no schedules."""
    zone = ZoneInfo(time_zone)
    first = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    last = datetime.fromtimestamp(end_ms / 1000, UTC).astimezone(zone).date()
    days = {}
    while first <= last:
        days[first] = first.weekday() < WORKING_DAYS
        first += timedelta(days=1)
    return days


async def planned_days(
    runtime: Runtime, key: str, person_id: str, start_ms: int, end_ms: int, time_zone: str
) -> dict[date, bool]:
    """The person's working days from the service's schedules, or Monday to Friday."""
    if not await runtime.client.offers("SvcPerson", "scheduledDays", apikey=key):
        return weekdays(start_ms, end_ms, time_zone)
    data = await runtime.client.execute(
        PLANNED_DAYS_EXTENSION, {"p": person_id, "s": start_ms, "e": end_ms}, apikey=key
    )
    return working_days((data.get("getPerson") or {}).get("scheduledDays") or [], time_zone)


async def with_auto_submit(
    runtime: Runtime, key: str, people: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`people` with their auto-submit setting, where the service has one."""
    if not await runtime.client.offers("SvcTimeSettings", "autoSubmit", apikey=key):
        return people
    data = await runtime.client.execute(PEOPLE_AUTO_SUBMIT_EXTENSION, apikey=key)
    settings = {p["id"]: p.get("timeSettings") for p in data.get("getPersons") or [] if p}
    return [{**person, "timeSettings": settings.get(person["id"])} for person in people]


def period_dedupe_key(organisation_id: str, person_id: str, period: Period) -> str:
    return f"period-reminder:{organisation_id}:{person_id}:{period.start_ms}"


async def acquire_lease(ctx: MailContext, name: str, owner: str, lease_ms: int) -> bool:
    """Take or renew the named lease; False when another process holds it."""
    now = ctx.runtime.clock.now_ms()
    async with unit_of_work(ctx.runtime.state_sessions) as session:
        created: Any = await session.execute(
            insert_ignoring(session, SchedulerLease, ("name",)),
            {"name": name, "owner": owner, "until_ms": now + lease_ms},
        )
        if created.rowcount:
            return True
        taken: Any = await session.execute(
            update(SchedulerLease)
            .where(
                SchedulerLease.name == name,
                or_(SchedulerLease.owner == owner, SchedulerLease.until_ms <= now),
            )
            .values(owner=owner, until_ms=now + lease_ms)
        )
        return bool(taken.rowcount)


async def release_lease(ctx: MailContext, name: str, owner: str) -> None:
    async with unit_of_work(ctx.runtime.state_sessions) as session:
        await session.execute(
            update(SchedulerLease)
            .where(SchedulerLease.name == name, SchedulerLease.owner == owner)
            .values(until_ms=0)
        )


async def period_reminders(ctx: MailContext, organisation_id: str) -> int:
    """The end-of-period reminders due now in one organisation; returns how many were queued."""
    runtime = ctx.runtime
    now = runtime.clock.now_ms()
    key = await runtime.directory.integration_key(organisation_id)
    people = (await runtime.client.execute(PEOPLE, apikey=key)).get("getPersons") or []
    people = await with_auto_submit(runtime, key, [p for p in people if p])
    since = await first_seen_ms(runtime, organisation_id)
    due: dict[Period, list[dict[str, Any]]] = {}
    for person in people:
        if person.get("archived") or not person.get("email"):
            continue
        if str(person["email"]).lower() == runtime.settings.mail_from.lower():
            continue  # timebot's own integration person
        period = last_ended_week(now, time_zone_of(person))
        if not reminder_due(now, period) or ended_before(period.end_ms, since):
            continue
        if await already_queued(runtime, period_dedupe_key(organisation_id, person["id"], period)):
            continue
        due.setdefault(period, []).append(person)
    sent = 0
    for period, group in due.items():
        states = (
            await runtime.client.execute(
                TEAM_STATES,
                {"ids": [p["id"] for p in group], "s": period.start_ms, "e": period.end_ms},
                apikey=key,
            )
        ).get("getTeamApprovalStates") or []
        status_of = {s["person"]["id"]: s.get("status") or "d" for s in states}
        for person in group:
            status = status_of.get(person["id"], "d")
            if status in ("s", "a"):
                continue
            zone_name = time_zone_of(person)
            planned = await planned_days(
                runtime, key, person["id"], period.start_ms, now + 1, zone_name
            )
            zone = ZoneInfo(zone_name)
            today = datetime.fromtimestamp(now / 1000, UTC).astimezone(zone).date()
            end_day = datetime.fromtimestamp(period.end_ms / 1000, UTC).astimezone(zone).date()
            if not planned.get(today, True):
                continue  # a holiday or a day off for them: a later tick sends it
            working = {day for day, works in planned.items() if works and day < end_day}
            if not working:
                continue  # nothing was expected of them that week
            summary = await load_summary(
                runtime.client, key, person["id"], period.start_ms, period.end_ms
            )
            records = [(entry.day, entry.absence is not None) for entry in summary.entries]
            if records and absent_whole_period(records, period, zone_name, working):
                continue
            sent += await send_timesheet_reminder(
                ctx,
                organisation_id=organisation_id,
                person=person,
                start_ms=period.start_ms,
                end_ms=period.end_ms,
                status=status,
                entries=len(summary.entries),
                total_ms=summary.total_ms,
                dedupe_key=period_dedupe_key(organisation_id, person["id"], period),
            )
    return sent


class Scheduler(PollingWorker):
    """Ticks every `poll_seconds` (wall clock); each tick does what is due by the runtime's
    clock (a test clock that jumps ahead is honoured at the next tick)."""

    name = "scheduler"
    LEASE = "scheduler"

    def __init__(self, ctx: MailContext, poll_seconds: float = 60.0) -> None:
        super().__init__(poll_seconds)
        self.ctx = ctx
        # True when it runs as one of the process's singleton jobs (timebot/state/singleton.py):
        # that lease already makes it the only one, and is taken over within seconds of its
        # holder's death, where this tick lease would wait LEASE_MS.
        self.gated = False

    async def run_once(self) -> int:
        if not self.gated and not await acquire_lease(self.ctx, self.LEASE, self.owner, LEASE_MS):
            return 0
        sent = 0
        for organisation_id in await self.ctx.runtime.directory.organisation_ids():
            try:
                sent += await period_reminders(self.ctx, organisation_id)
            except Exception:  # one organisation's failure does not stop the others
                log.exception("period_reminders_failed", organisation=organisation_id)
        sent += await send_digests(self.ctx)
        return sent

    async def _loop(self) -> None:  # a tick, then wait: run_once never asks for more
        while True:
            try:
                await self.run_once()
            except Exception:
                log.exception("scheduler_tick_failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_seconds)
