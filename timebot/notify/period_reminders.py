"""Who is due an end-of-period reminder, in each person's own time zone.

Periods are weeks, Monday 00:00 to Monday 00:00 in the person's time zone (GraphQL
`localisation { timeZone { value } }`). When a week has ended (and for REMINDER_GRACE_MS after,
so that a process that was down catches up), each active person whose timesheet for it is
draft, rejected or empty is reminded once: never when it is approved or submitted (waiting
for someone else), nor when the person was absent on every working day of their work schedule
(GraphQL `scheduledDays`: the schedule minus public holidays; Monday to Friday by default), nor
when the week had no working day for them. On a day that is not a working day for the person
(a public holiday, a day off in their schedule) the reminder waits for a later tick.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from timebot.client import operation
from timebot.notify.approvals import time_zone_of
from timebot.notify.decisions import AlreadySent, PeriodReminder
from timebot.notify.periods import (
    Period,
    absent_whole_period,
    last_ended_week,
    period_dedupe_key,
    reminder_due,
    weekdays,
    working_days,
)
from timebot.notify.scheduler_epoch import ended_before, first_seen_ms
from timebot.runtime import Runtime
from timebot.summary import load_summary

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


async def due_period_reminders(
    runtime: Runtime, organisation_id: str, already_sent: AlreadySent
) -> AsyncGenerator[PeriodReminder, None]:
    """The end-of-period reminders due now in one organisation that `already_sent` does not
    know, one at a time (each is sent before the next is looked into)."""
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
        if await already_sent(period_dedupe_key(organisation_id, person["id"], period)):
            continue
        due.setdefault(period, []).append(person)
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
            yield PeriodReminder(
                organisation_id=organisation_id,
                person=person,
                period=period,
                status=status,
                entries=len(summary.entries),
                total_ms=summary.total_ms,
                dedupe_key=period_dedupe_key(organisation_id, person["id"], period),
            )
