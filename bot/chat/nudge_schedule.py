"""When a chat nudges: pure schedule rules, no Slack or GraphQL calls.

Who a manager's reminder reaches, when an approver is nudged again, whether their nudges are
snoozed and until when, when staff are nudged to submit, and a local day's bounds.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Protocol

from bot.chat.approvals import status_word
from timebot.notify.period_timing import due_now, reminder_slots
from timebot.notify.periods import DAY_MS, local_date, zone
from timebot.timeentry.rules import Rules

DEFAULT_REMIND_DAYS = 2
MAX_INTERVAL_DAYS = 7
DIGEST_HOUR = 9
STAFF_HOUR = 16


def to_remind(states: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """(people to remind, names skipped): draft, rejected or empty periods are reminded; a
    submitted (waiting on someone else) or approved one never."""
    remind: list[dict[str, Any]] = []
    skipped: list[str] = []
    for state in states:
        person = state.get("person") or {}
        if status_word(state.get("status")) in ("submitted", "approved"):
            skipped.append(str(person.get("name", "")))
        else:
            remind.append(person)
    return remind, skipped


def approver_nudge_due(
    waiting_since_ms: int, count: int, last_ms: int | None, now_ms: int, after_days: int
) -> bool:
    """First after `after_days` of waiting, then after 1, 2, 4, 7, 7… more days."""
    if now_ms - waiting_since_ms < after_days * DAY_MS:
        return False
    if count == 0 or last_ms is None:
        return True
    interval_days: int = min(2 ** (count - 1), MAX_INTERVAL_DAYS)
    return now_ms - last_ms >= interval_days * DAY_MS


class NudgeSetting(Protocol):
    """An approver's nudges as stored by an adapter (Slack's, Teams' table): off until turned
    on again, or snoozed until a moment."""

    @property
    def off(self) -> bool: ...

    @property
    def snoozed_until_ms(self) -> int | None: ...


def snoozed(pref: NudgeSetting | None, now_ms: int) -> bool:
    """Nothing goes to the approver now: nudges off, or snoozed past `now_ms`."""
    return pref is not None and (
        pref.off or (pref.snoozed_until_ms is not None and pref.snoozed_until_ms > now_ms)
    )


def snooze_until(choice: str, now_ms: int, tz: str | None) -> int:
    """'1h' → an hour from now; 'tomorrow' → 09:00 tomorrow in their time zone."""
    if choice == "1h":
        return now_ms + 3_600_000
    tomorrow = local_date(now_ms, tz) + timedelta(days=1)
    moment = datetime.combine(tomorrow, time(DIGEST_HOUR), zone(tz))
    return int(moment.timestamp() * 1000)


def staff_nudge_due(now_ms: int, tz: str | None, period: tuple[int, int]) -> bool:
    """The last working day (Friday) of the period, from 16:00 local, before it ends."""
    local = datetime.fromtimestamp(now_ms / 1000, zone(tz))
    start, end = period
    last_day = datetime.fromtimestamp((end - 1) / 1000, UTC).date()
    friday = last_day - timedelta(days=(last_day.weekday() - 4) % 7)
    return local.date() == friday and local.hour >= STAFF_HOUR and start <= now_ms


def reminder_slot(now_ms: int, rules: Rules | None) -> tuple[tuple[int, int], bool] | None:
    """Where the person's `timesheetReminder` is set (timing, hour): the period its reminder
    is about now and whether it is due (the mail's moment: timebot/notify/period_timing.py);
    None where it is not set (the nudge then goes on the period's last working day, from
    16:00)."""
    if rules is None or rules.reminder is None:
        return None
    person = {"timeSettings": {"periodicity": {"value": rules.periodicity},
                               "timesheetReminder": {"value": dict(rules.reminder)}},
              "localisation": {"firstDayOfWeek": {"value": rules.first_day}}}
    period, due, _ = reminder_slots(now_ms, person, rules.zone.key)
    return (period.start_ms, period.end_ms), due_now(now_ms, due)


def local_day_bounds(day: date, tz: str | None) -> tuple[int, int]:
    start = datetime.combine(day, time(0), zone(tz))
    return int(start.timestamp() * 1000), int((start + timedelta(days=1)).timestamp() * 1000)

