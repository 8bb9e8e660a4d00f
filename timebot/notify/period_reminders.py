"""Who is due an end-of-period reminder, in each person's own time zone.

Periods are the person's `periodicity` (weeks by default, from their `firstDayOfWeek`) in
their time zone (GraphQL `timeSettings { periodicity timesheetReminder }`, `localisation {
timeZone firstDayOfWeek }`). When a period's reminder is due (`timesheetReminder`: at its end
by default; timebot/notify/period_timing.py), and for REMINDER_GRACE_MS after, so that a
process that was down catches up, each active person whose timesheet for it is
draft, rejected or empty is reminded once: never when it is approved or submitted (waiting
for someone else), nor when the person was absent on every working day of their work schedule
(GraphQL `scheduledDays`: the schedule minus public holidays; Monday to Friday by default), nor
when the week had no working day for them. On a day that is not a working day for the person
(a public holiday, a day off in their schedule) the reminder waits for a later tick.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from timebot.client import operation
from timebot.l10n import LOCALISATION_FIELDS
from timebot.notify.approvals import time_zone_of
from timebot.notify.decisions import PeriodReminder, SentAmong
from timebot.notify.ground import Ground
from timebot.notify.period_timing import due_now, noun_of, reminder_slots
from timebot.notify.periods import Period, absent_whole_period, period_dedupe_key
from timebot.notify.reminder_reads import VerdictReads, group_verdict_reads, verdict_reads
from timebot.notify.scheduler_epoch import ended_before, first_seen_ms
from timebot.person_pages import page_query, person_pages

# The localisation too: the reminder is written in the person's language and formats.
PERSON_FIELDS = f"""id name email archived {LOCALISATION_FIELDS}
  timeSettings {{ periodicity {{ value }} timesheetReminder {{ value {{ timing hour }} }} }}"""
PEOPLE = page_query("SchedulerPeople", PERSON_FIELDS)
# An extension of the embedded service (a hosted service's schema has no autoSubmit): asked
# for only when the service offers it (ServiceClient.offers).
PEOPLE_AUTO_SUBMIT_EXTENSION = page_query(
    "SchedulerPeopleAutoSubmit", PERSON_FIELDS.replace(
        "timesheetReminder { value { timing hour } }",
        "timesheetReminder { value { timing hour } } autoSubmit { value }"))
TEAM_STATES = operation(
    """query SchedulerStates($ids: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getTeamApprovalStates(personIds: $ids, startTime: $s, endTime: $e) {
        person { id } status totalDuration
      }
    }"""
)


@dataclass(frozen=True)
class PeriodVerdict:
    """Whether `person` is reminded of `period` now: `reminder` when due, else `why_not`
    (what `timebot reminders preview` prints)."""

    person: dict[str, Any]
    period: Period | None
    reminder: PeriodReminder | None
    why_not: str = ""


async def due_period_reminders(
    runtime: Ground, organisation_id: str, sent_among: SentAmong,
    quiet: Quiet | None = None,
) -> AsyncGenerator[PeriodReminder, None]:
    """The end-of-period reminders due now in one organisation that `sent_among` does not
    know, one at a time (each is sent before the next is looked into)."""
    since = await first_seen_ms(runtime, organisation_id)
    verdicts = period_verdicts(runtime, organisation_id, sent_among, since, explain=False,
                               quiet=quiet)
    async with contextlib.aclosing(verdicts):
        async for verdict in verdicts:
            if verdict.reminder is not None:
                yield verdict.reminder


def _local_text(ms: int, time_zone: str) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).astimezone(ZoneInfo(time_zone)).strftime(
        "%a %d %b %H:%M %Z"
    )


@dataclass
class Quiet:
    """Until when no pass can find a reminder due that the last one did not: the earliest
    moment one of the people's reminders falls due, or the pass's own moment when someone's
    is due and not sent yet (each tick looks at them again). The scheduler skips its passes
    until then (a whole organisation's settings, a page at a time, cost 3.3 s of CPU a minute
    at 10,000 people)."""

    until_ms: int

    def at_most(self, ms: int) -> None:
        self.until_ms = min(self.until_ms, ms)


def _remindable(person: dict[str, Any], mail_from: str) -> bool:
    """Pure: active, with an address, and not timebot's own integration person."""
    email = str(person.get("email") or "")
    return not person.get("archived") and bool(email) and email.lower() != mail_from.lower()


def _timing(now: int, person: dict[str, Any], since: int, zone_name: str
            ) -> tuple[Period, str, int]:
    """Pure: the period whose reminder is considered at `now`, why it is not due ("" when it
    is), and when the next one falls due."""
    period, due, upcoming = reminder_slots(now, person, zone_name)
    if not due_now(now, due):
        following = due if due > now else upcoming
        return period, f"none due now: the next is due from " \
            f"{_local_text(following, zone_name)}", following
    if ended_before(due, since):
        return period, f"the {noun_of(person)} ended before timebot first served the " \
            "organisation", upcoming
    return period, "", upcoming


async def period_verdicts(
    runtime: Ground, organisation_id: str, sent_among: SentAmong, since: int,
    *, explain: bool, quiet: Quiet | None = None,
) -> AsyncGenerator[PeriodVerdict, None]:
    """Each active person's verdict on the last ended week at the runtime's clock: the due
    ones always, and with `explain` also the others, with why not. `since`: when the
    scheduler first served the organisation (`scheduler_epoch`). `quiet`, when given, is
    brought down to when the next pass could find something new."""
    now = runtime.clock.now_ms()
    key = await runtime.directory.integration_key(organisation_id)
    query = PEOPLE_AUTO_SUBMIT_EXTENSION if await runtime.client.offers(
        "SvcTimeSettings", "autoSubmit", apikey=key) else PEOPLE
    async for page in person_pages(runtime.client, key, query):  # a page at a time (memory)
        timings = {str(person["id"]): _timing(now, person, since, time_zone_of(person))
                   for person in page if _remindable(person, runtime.settings.mail_from)}
        keys = {person_id: period_dedupe_key(organisation_id, person_id, period)
                for person_id, (period, why_not, _) in timings.items() if not why_not}
        sent = await sent_among(list(keys.values())) if keys else set()  # one read a page
        due: dict[Period, list[dict[str, Any]]] = {}
        for person in page:
            if person.get("archived"):
                if explain:
                    yield PeriodVerdict(person, None, None, "archived")
                continue
            timing = timings.get(str(person["id"]))
            if timing is None:
                continue  # no address, or timebot's own integration person
            period, why_not, following = timing
            if keys.get(str(person["id"])) in sent:
                why_not = "already sent"
            if quiet is not None:
                quiet.at_most(following if why_not else now)
            if why_not:
                if explain:
                    yield PeriodVerdict(person, period, None, why_not)
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
            read = await group_verdict_reads(runtime.client, key, [
                person for person in group
                if status_of.get(person["id"], "d") not in ("s", "a")], period, now)
            for person in group:
                verdict = await _verdict(runtime, key, organisation_id, person, period,
                                         status_of.get(person["id"], "d"), now,
                                         read.get(str(person["id"])))
                if explain or verdict.reminder is not None:
                    yield verdict


async def _verdict(
    runtime: Ground, key: str, organisation_id: str, person: dict[str, Any], period: Period,
    status: str, now: int, read: VerdictReads | None,
) -> PeriodVerdict:
    if status in ("s", "a"):
        return PeriodVerdict(person, period, None,
                             "timesheet submitted" if status == "s" else "timesheet approved")
    zone_name = time_zone_of(person)
    reads = read or await verdict_reads(runtime.client, key, person["id"], period, now,
                                        zone_name)
    planned, summary = reads.planned, reads.summary
    zone = ZoneInfo(zone_name)
    today = datetime.fromtimestamp(now / 1000, UTC).astimezone(zone).date()
    end_day = datetime.fromtimestamp(period.end_ms / 1000, UTC).astimezone(zone).date()
    if not planned.get(today, True):
        return PeriodVerdict(person, period, None,
                             "today is not a working day for them: a later tick sends it")
    working = {day for day, works in planned.items() if works and day < end_day}
    if not working:
        return PeriodVerdict(person, period, None, f"no working day in the {noun_of(person)}")
    records = [(entry.day, entry.absence is not None) for entry in summary.entries]
    if records and absent_whole_period(records, period, zone_name, working):
        return PeriodVerdict(person, period, None, "absent on every working day")
    return PeriodVerdict(person, period, PeriodReminder(
        organisation_id=organisation_id,
        person=person,
        period=period,
        status=status,
        entries=len(summary.entries),
        total_ms=summary.total_ms,
        dedupe_key=period_dedupe_key(organisation_id, person["id"], period),
        reads=reads.mail,
    ))
