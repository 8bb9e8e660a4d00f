"""What one end-of-period reminder reads from the service, in one request where the service
offers it: the person's working days from the period's start to now and the period's records
(the verdict's facts), and with them what the reminder's mail needs (notification settings,
templates, suggested time), which it read in a request of its own before (issue #40: two
requests and twelve statements a reminder, each request a fixed cost of authentication, a
transaction and the person read again).

The verdict's person and the mail's are one `getPerson` field (the same name and arguments
merge into one resolution: the person is read once). Where that request fails (an error, a
refused field), the verdict's facts are read alone and the mail reads its own, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import structlog

from timebot.client import ServiceClient, operation
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.notify.approvals import time_zone_of
from timebot.notify.periods import Period, weekdays, working_days
from timebot.notify.suggestions import (
    REMINDER_READ_FIELDS,
    ReminderReads,
    offers_reminder_reads,
    reminder_reads_of,
)
from timebot.person_pages import page_filter
from timebot.summary import (
    SUMMARY_PERSON_FIELDS,
    SUMMARY_RECORD_FIELDS,
    SUMMARY_SELECTION,
    TimesheetSummary,
    load_summary,
    summarise,
)

log = structlog.get_logger("timebot.notify.reminder_reads")

_VARIABLES = "$person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!, " \
    "$plannedEnd: SvcTimestamp!"
_PLANNED = "scheduledDays(startTime: $start, endTime: $plannedEnd) { date { ts } workingDay }"
VERDICT_READS_EXTENSION = operation(
    f"""query SchedulerVerdict({_VARIABLES}) {{
      {SUMMARY_SELECTION}
      getPerson(id: $person) {{ {_PLANNED} }}
    }}"""
)
VERDICT_AND_MAIL_READS_EXTENSION = operation(
    f"""query SchedulerVerdictAndMailReads({_VARIABLES}) {{
      {SUMMARY_SELECTION}
      getPerson(id: $person) {{ {_PLANNED}
        {REMINDER_READ_FIELDS} }}
    }}"""
)


# The same for a group of people due a reminder of one period, in one request: their
# persons (each one's working days and the mail's reads) and all their records.
GROUP_READS_EXTENSION = operation(
    f"""query SchedulerVerdicts($page: [SvcPersonFilter], $people: [SvcId],
        $start: SvcTimestamp!, $end: SvcTimestamp!, $plannedEnd: SvcTimestamp!) {{
      getPersons(filter: $page) {{ {SUMMARY_PERSON_FIELDS} {_PLANNED}
        {REMINDER_READ_FIELDS} }}
      getTimeRecords(startTime: $start, endTime: $end, filter: [{{personIds: $people}}]) {{
        {SUMMARY_RECORD_FIELDS} person {{ id }} }}
    }}"""
)


@dataclass(frozen=True)
class VerdictReads:
    planned: dict[date, bool]  # working day or not, from the period's start to now
    summary: TimesheetSummary
    mail: ReminderReads | None  # None: the mail reads its own


async def verdict_reads(client: ServiceClient, key: str, person_id: str, period: Period,
                        now: int, time_zone: str) -> VerdictReads:
    """The verdict's facts of `person_id` for `period` (working days from the service's
    schedules, or Monday to Friday), and the mail's reads where the service offers them."""
    if not await client.offers("SvcPerson", "scheduledDays", apikey=key):
        return VerdictReads(weekdays(period.start_ms, now + 1, time_zone),
                            await load_summary(client, key, person_id, period.start_ms,
                                               period.end_ms), None)
    variables = {"person": person_id, "start": period.start_ms, "end": period.end_ms,
                 "plannedEnd": now + 1}
    if await offers_reminder_reads(client, key):
        try:
            data = await client.execute(VERDICT_AND_MAIL_READS_EXTENSION, variables,
                                        apikey=key)
        except (ServiceRequestError, PermissionRefused) as error:
            log.warning("reminder_reads_apart", person=person_id, error=str(error))
        else:
            return _reads(data["getPerson"], data["getTimeRecords"], period, time_zone,
                          mail=True)
    data = await client.execute(VERDICT_READS_EXTENSION, variables, apikey=key)
    return _reads(data["getPerson"], data["getTimeRecords"], period, time_zone, mail=False)


async def group_verdict_reads(client: ServiceClient, key: str, people: list[dict[str, Any]],
                              period: Period, now: int) -> dict[str, VerdictReads]:
    """`verdict_reads` of each of `people` (as the scheduler's pages read them) for `period`,
    in one request: {person id: reads}. Empty where the service does not offer every field
    or the request fails, and without a person it no longer lists: those read alone."""
    if len(people) < 2 or not (await client.offers("SvcPerson", "scheduledDays", apikey=key)
                               and await offers_reminder_reads(client, key)):
        return {}
    zones = {str(person["id"]): time_zone_of(person) for person in people}
    ids = list(zones)
    try:
        data = await client.execute(GROUP_READS_EXTENSION, {
            "page": page_filter(ids), "people": ids, "start": period.start_ms,
            "end": period.end_ms, "plannedEnd": now + 1}, apikey=key)
    except (ServiceRequestError, PermissionRefused) as error:
        log.warning("reminder_group_reads_apart", people=len(ids), error=str(error))
        return {}
    records: dict[str, list[dict[str, Any]]] = {person_id: [] for person_id in ids}
    for record in data.get("getTimeRecords") or []:
        owner = str(((record or {}).get("person") or {}).get("id") or "")
        if owner in records:
            records[owner].append(record)
    found = {str(person["id"]): person for person in data.get("getPersons") or []
             if person and str(person.get("id")) in zones}
    return {person_id: _reads(person, records[person_id], period, zones[person_id], mail=True)
            for person_id, person in found.items()}


def _reads(person: dict[str, Any], records: list[dict[str, Any]], period: Period,
           time_zone: str, *, mail: bool) -> VerdictReads:
    """Pure: a person's reads out of any of the queries' answers."""
    return VerdictReads(
        working_days(person.get("scheduledDays") or [], time_zone),
        summarise(person, records, None, period.start_ms, period.end_ms),
        reminder_reads_of(person) if mail else None)
