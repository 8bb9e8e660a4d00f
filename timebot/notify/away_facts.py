"""Every fact that says an approver is away, as `timebot.state.away.Absence` records, so that
"is away?" stays one pure function (`timebot.state.away.is_away`) whatever the source:

- "auto-reply": an out-of-office reply to a review e-mail (mail.replies.away_notice records it);
- "slack-status": a Slack status that says so (bot.slack.away_status records it; read here by
  `slack_status_away`, pure);
- "teams-status": a Teams user's automatic replies or presence, read from Microsoft Graph
  (bot.teams.away_status records it; bot.teams.graph_away reads it, pure);
- "time-off": an absence recorded in the service that covers today (getTimeRecords with
  `absence: true`, over GraphQL), until the last day of that run of days off;
- "schedule": today is a holiday or a non-working day of the approver's schedule (the
  service's `scheduledDays` extension), until the last such day in a row.

"Today" and every day here are the approver's own: the dates of their time zone (the
person's `localisation.timeZone`, read over GraphQL with their time off, in one request for
up to MAX_BATCH people), so a Berlin approver's day off begins at midnight in Berlin and a
New York one's ends at midnight in New York, whatever the UTC date (`Absence.zone`,
`away_now`). The last two are read, never stored: the service is their
record. A run of days off or
non-working days continues over the other kind (Friday off, then the weekend: away until
Sunday), and a weekend alone is not an absence worth asking someone else about unless the
approver has time off too (`schedule` facts count only on a day the others work: the
organisation's weekdays)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from timebot.notify.approvals import time_zone_of
from timebot.notify.ground import Ground
from timebot.notify.periods import local_date, working_days, zone
from timebot.state.away import Absence, absences, is_away

SLACK_STATUS = "slack-status"
TEAMS_STATUS = "teams-status"
TIME_OFF = "time-off"
SCHEDULE = "schedule"
LOOK_AHEAD_DAYS = 31
DAY_MS = 86_400_000
MAX_BATCH = 50


_AWAY_EMOJI = {":palm_tree:", ":airplane:", ":beach_with_umbrella:", ":desert_island:",
               ":face_with_thermometer:", ":sick:", ":baby:", ":no_entry:", ":airplane_departure:"}
_AWAY_TEXT = re.compile(
    r"\b(out of (the )?office|ooo|on (vacation|holiday|leave|pto)|vacationing|on pto|"
    r"away (until|on|from)|off sick|sick leave|parental leave|congé|en vacances|absent|urlaub|"
    r"abwesend|vacaciones|fuera de la oficina)\b", re.IGNORECASE)


def away_now(absence: Absence, now_ms: int) -> bool:
    """Pure: `is_away` on the approver's today at `now_ms`, the date in their time zone."""
    return is_away(absence, local_date(now_ms, absence.zone), now_ms)


def slack_status_away(text: str | None, emoji: str | None, expiration_s: int | None,
                      today: date, time_zone: str | None = None) -> tuple[bool, date | None]:
    """Pure: does a Slack status say its person is away, and until when (the status's
    expiration as a date in the person's time zone — Slack's `tz` of the user — the day before
    when it expires at local midnight; None: not stated)? `today` is the person's local date."""
    words = (text or "").strip()
    away = (emoji or "").strip().lower() in _AWAY_EMOJI or bool(_AWAY_TEXT.search(words))
    if not away:
        return False, None
    if not expiration_s or expiration_s <= 0:
        return True, None
    moment = datetime.fromtimestamp(expiration_s, zone(time_zone))
    until = moment.date() - timedelta(days=1) if moment.time() == datetime.min.time() \
        else moment.date()
    if until < today:
        return False, None
    return True, until


def days_off(records: list[dict[str, Any]], time_zone: str) -> set[date]:
    """Pure: the days the absence records (getTimeRecords) start on, in the person's time zone
    (a day off recorded from 09:00 in Berlin is Berlin's day, whatever the UTC date)."""
    return {local_date(int(r["startTime"]["ts"]), time_zone)
            for r in records if r and r.get("absence") and (r.get("startTime") or {}).get("ts")}


def read_window(now_ms: int) -> tuple[int, int]:
    """Pure: the span read for the facts at `now_ms`: from the start of yesterday (UTC) to
    LOOK_AHEAD_DAYS after tomorrow, which holds every time zone's today (UTC-12 to UTC+14)
    and the days that follow it."""
    today = datetime.fromtimestamp(now_ms / 1000, UTC).date()
    start = int(datetime(today.year, today.month, today.day, tzinfo=UTC).timestamp() * 1000)
    return start - DAY_MS, start + (LOOK_AHEAD_DAYS + 2) * DAY_MS


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
                     planned: dict[date, bool], today: date, now_ms: int,
                     time_zone: str = "UTC") -> list[Absence]:
    """Pure: the time-off and schedule facts of one person on `today`, their own date (the
    days off, the planned days and `today` are all dates of `time_zone`)."""
    found: list[Absence] = []
    if today in off:
        found.append(Absence(organisation_id, person_id, TIME_OFF,
                             _run_end(today, off, planned), now_ms, time_zone))
    elif not planned.get(today, True) and today.weekday() < 5:
        found.append(Absence(organisation_id, person_id, SCHEDULE,
                             _run_end(today, set(), planned), now_ms, time_zone))
    return found


def person_facts(organisation_id: str, person_id: str, recorded: list[Absence],
                 records: list[dict[str, Any]], person: dict[str, Any] | None,
                 now_ms: int) -> list[Absence]:
    """Pure: one person's facts from what the service answered (`records`: their time off;
    `person`: their getPerson, localisation and, where offered, scheduledDays), each dated
    in the person's time zone (`Absence.zone`: their today is `is_away`'s today)."""
    time_zone = zone(time_zone_of(person or {})).key  # unknown to this machine: UTC
    today = local_date(now_ms, time_zone)
    planned = working_days((person or {}).get("scheduledDays") or [], time_zone)
    return [*(replace(absence, zone=time_zone) for absence in recorded),
            *service_absences(organisation_id, person_id, days_off(records, time_zone),
                              planned, today, now_ms, time_zone)]


@dataclass(frozen=True)
class Rider:
    """A read of the caller's own that goes in the first facts request (`away_facts_with`):
    its variables' definitions (`$id: SvcId!`), its root selection, its variables' values.
    Its names must not be the facts query's (ids, s, e, p<n>, getTimeRecords, p<n>)."""

    definitions: str
    selection: str
    variables: dict[str, Any]


def facts_query(count: int, schedules: bool, rider: Rider | None = None) -> str:
    """One request for the time off of `count` people (`$ids`) and each one's time zone and,
    with `schedules`, planned days (aliases p0, p1 …); with `rider`, its read too."""
    params = "".join(f", $p{i}: SvcId!" for i in range(count))
    if rider is not None:
        params += f", {rider.definitions}"
    days = " scheduledDays(startTime: $s, endTime: $e) { date { ts } workingDay }" \
        if schedules else ""
    people = " ".join(f"p{i}: getPerson(id: $p{i}) {{ localisation {{ timeZone {{ value }} }}"
                      f"{days} }}" for i in range(count))
    return (f"query AwayFacts($ids: [SvcId], $s: SvcTimestamp!, $e: SvcTimestamp!{params}) {{ "
            "getTimeRecords(startTime: $s, endTime: $e, absence: true, filter: [{personIds: "
            f"$ids}}]) {{ person {{ id }} startTime {{ ts }} absence {{ id }} }} {people}"
            f"{' ' + rider.selection if rider is not None else ''} }}")


async def away_facts(
    runtime: Ground, key: str, organisation_id: str, person_ids: list[str],
) -> dict[str, list[Absence]]:
    """Every fact of absence of these people at the runtime's clock: the recorded ones
    (auto-replies, Slack statuses) and what the service says of each one's own today (time
    off, schedule), by person id, each dated in the person's time zone. Whether each is
    current is `is_away`'s to say (`away_now`). One request per MAX_BATCH people: their
    time off, time zones and planned days together."""
    return (await away_facts_with(runtime, key, organisation_id, person_ids))[0]


async def away_facts_with(
    runtime: Ground, key: str, organisation_id: str, person_ids: list[str],
    rider: Rider | None = None,
) -> tuple[dict[str, list[Absence]], dict[str, Any]]:
    """`away_facts`, and the answer to `rider` read in the first request (its root fields;
    an error in it is the caller's to see there, as `allow_partial` leaves it; empty when
    there are no people to ask about, and so no request)."""
    now_ms = runtime.clock.now_ms()
    start, end = read_window(now_ms)
    recorded = await absences(runtime.read_sessions, organisation_id, person_ids)
    schedules = await runtime.client.offers("SvcPerson", "scheduledDays", apikey=key)
    found: dict[str, list[Absence]] = {}
    carried: dict[str, Any] = {}
    for first in range(0, len(person_ids), MAX_BATCH):
        batch = person_ids[first:first + MAX_BATCH]
        variables: dict[str, Any] = {"ids": batch, "s": start, "e": end}
        variables.update({f"p{i}": pid for i, pid in enumerate(batch)})
        riding = rider if first == 0 else None
        if riding is not None:
            variables.update(riding.variables)
        data = await runtime.client.execute(facts_query(len(batch), schedules, riding),
                                            variables, apikey=key, allow_partial=True)
        if riding is not None:
            carried = data
        off: dict[str, list[dict[str, Any]]] = {}
        for record in data.get("getTimeRecords") or []:
            if record and record.get("person"):
                off.setdefault(str(record["person"]["id"]), []).append(record)
        for i, pid in enumerate(batch):
            found[pid] = person_facts(organisation_id, pid, recorded.get(pid, []),
                                      off.get(pid, []), data.get(f"p{i}"), now_ms)
    return found, carried
