"""Every fact that says an approver is away, as `timebot.state.away.Absence` records, so that
"is away?" stays one pure function (`timebot.state.away.is_away`) whatever the source:

- "auto-reply": an out-of-office reply to a review e-mail (mail.away_notice records it);
- "slack-status": a Slack status that says so (bot.away_status records it; read here by
  `slack_status_away`, pure);
- "time-off": an absence recorded in the service that covers today (getTimeRecords with
  `absence: true`, over GraphQL), until the last day of that run of days off;
- "schedule": today is a holiday or a non-working day of the approver's schedule (the
  service's `scheduledDays` extension), until the last such day in a row.

The last two are read, never stored: the service is their record. A run of days off or
non-working days continues over the other kind (Friday off, then the weekend: away until
Sunday), and a weekend alone is not an absence worth asking someone else about unless the
approver has time off too (`schedule` facts count only on a day the others work: the
organisation's weekdays)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from timebot.client import operation
from timebot.notify.periods import working_days
from timebot.runtime import Runtime
from timebot.state.away import Absence, absences

SLACK_STATUS = "slack-status"
TIME_OFF = "time-off"
SCHEDULE = "schedule"
LOOK_AHEAD_DAYS = 31
DAY_MS = 86_400_000

DAYS_OFF = operation(
    """query AwayDaysOff($ids: [SvcId], $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getTimeRecords(startTime: $s, endTime: $e, absence: true, filter: [{personIds: $ids}]) {
        person { id } startTime { ts } duration absence { id }
      }
    }"""
)
MAX_BATCH = 50


def scheduled_query(count: int) -> str:
    """One request for the planned days of `count` people (aliases p0, p1 …)."""
    params = "".join(f", $p{i}: SvcId!" for i in range(count))
    fields = " ".join(f"p{i}: getPerson(id: $p{i}) {{ scheduledDays(startTime: $s, "
                      f"endTime: $e) {{ date {{ ts }} workingDay }} }}" for i in range(count))
    return (f"query AwaySchedules($s: SvcTimestamp!, $e: SvcTimestamp!{params}) {{ {fields} }}")


_AWAY_EMOJI = {":palm_tree:", ":airplane:", ":beach_with_umbrella:", ":desert_island:",
               ":face_with_thermometer:", ":sick:", ":baby:", ":no_entry:", ":airplane_departure:"}
_AWAY_TEXT = re.compile(
    r"\b(out of (the )?office|ooo|on (vacation|holiday|leave|pto)|vacationing|on pto|"
    r"away (until|on|from)|off sick|sick leave|parental leave|congé|en vacances|absent|urlaub|"
    r"abwesend|vacaciones|fuera de la oficina)\b", re.IGNORECASE)


def slack_status_away(text: str | None, emoji: str | None, expiration_s: int | None,
                      today: date) -> tuple[bool, date | None]:
    """Pure: does a Slack status say its person is away, and until when (the status's
    expiration, the day before when it expires at midnight UTC; None: not stated)?"""
    words = (text or "").strip()
    away = (emoji or "").strip().lower() in _AWAY_EMOJI or bool(_AWAY_TEXT.search(words))
    if not away:
        return False, None
    if not expiration_s or expiration_s <= 0:
        return True, None
    moment = datetime.fromtimestamp(expiration_s, UTC)
    until = moment.date() - timedelta(days=1) if moment.time() == datetime.min.time() \
        else moment.date()
    if until < today:
        return False, None
    return True, until


def days_off(records: list[dict[str, Any]]) -> set[date]:
    """Pure: the UTC days the absence records (getTimeRecords) start on."""
    return {datetime.fromtimestamp(int(r["startTime"]["ts"]) / 1000, UTC).date()
            for r in records if r and r.get("absence") and (r.get("startTime") or {}).get("ts")}


def _run_end(today: date, counts: set[date], planned: dict[date, bool]) -> date:
    """The last day of the run from today of days in `counts` or not planned as working."""
    day = today
    while True:
        following = day + timedelta(days=1)
        if following in counts or not planned.get(following, following.weekday() < 5):
            if following > today + timedelta(days=LOOK_AHEAD_DAYS):
                return day
            day = following
            continue
        return day


def service_absences(organisation_id: str, person_id: str, off: set[date],
                     planned: dict[date, bool], today: date, now_ms: int) -> list[Absence]:
    """Pure: the time-off and schedule facts of one person today."""
    found: list[Absence] = []
    if today in off:
        found.append(Absence(organisation_id, person_id, TIME_OFF,
                             _run_end(today, off, planned), now_ms))
    elif not planned.get(today, True) and today.weekday() < 5:
        found.append(Absence(organisation_id, person_id, SCHEDULE,
                             _run_end(today, set(), planned), now_ms))
    return found


async def away_facts(
    runtime: Runtime, key: str, organisation_id: str, person_ids: list[str],
) -> dict[str, list[Absence]]:
    """Every fact of absence of these people at the runtime's clock: the recorded ones
    (auto-replies, Slack statuses) and what the service says of today (time off, schedule),
    by person id. Whether each is current is `is_away`'s to say."""
    now_ms = runtime.clock.now_ms()
    today = datetime.fromtimestamp(now_ms / 1000, UTC).date()
    start = int(datetime(today.year, today.month, today.day, tzinfo=UTC).timestamp() * 1000)
    end = start + (LOOK_AHEAD_DAYS + 1) * DAY_MS
    recorded = await absences(runtime.read_sessions, organisation_id)
    found = {pid: list(recorded.get(pid, [])) for pid in person_ids}
    if not person_ids:
        return found
    data = await runtime.client.execute(DAYS_OFF, {"ids": person_ids, "s": start, "e": end},
                                        apikey=key, allow_partial=True)
    off: dict[str, list[dict[str, Any]]] = {}
    for record in data.get("getTimeRecords") or []:
        if record and record.get("person"):
            off.setdefault(str(record["person"]["id"]), []).append(record)
    planned: dict[str, dict[date, bool]] = {}
    if await runtime.client.offers("SvcPerson", "scheduledDays", apikey=key):
        for first in range(0, len(person_ids), MAX_BATCH):
            batch = person_ids[first:first + MAX_BATCH]
            variables: dict[str, Any] = {"s": start, "e": end}
            variables.update({f"p{i}": pid for i, pid in enumerate(batch)})
            days = await runtime.client.execute(scheduled_query(len(batch)), variables,
                                                apikey=key, allow_partial=True)
            for i, pid in enumerate(batch):
                person = days.get(f"p{i}") or {}
                planned[pid] = working_days(person.get("scheduledDays") or [], "UTC")
    for pid in person_ids:
        found[pid].extend(service_absences(organisation_id, pid, days_off(off.get(pid, [])),
                                           planned.get(pid, {}), today, now_ms))
    return found
