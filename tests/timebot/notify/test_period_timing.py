"""When period reminders go (timebot/notify/period_timing.py, pure): the person's periodicity
and first day of the week decide the period, `timesheetReminder` the moment; and the rules the
fronts know (timebot/timeentry/rules.py, pure) refuse with the setting's name."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from timebot import l10n
from timebot.notify.period_timing import due_now, reminder_slots
from timebot.timeentry.rules import refusal, rules_of, shown_duration

BERLIN = ZoneInfo("Europe/Berlin")


def at(day: str, hour: int = 0) -> int:
    y, m, d = map(int, day.split("-"))
    return int(datetime(y, m, d, hour, tzinfo=BERLIN).timestamp() * 1000)


def person(periodicity: str | None = None, reminder: dict[str, Any] | None = None,
           first_day: int | None = None) -> dict[str, Any]:
    return {"timeSettings": {"periodicity": {"value": periodicity},
                             "timesheetReminder": {"value": reminder}},
            "localisation": {"firstDayOfWeek": {"value": first_day}}}


def test_default_weekly_reminder_at_the_end_of_the_week() -> None:
    period, due, upcoming = reminder_slots(at("2026-11-23", 10), person(), "Europe/Berlin")
    assert (period.start_ms, period.end_ms) == (at("2026-11-16"), at("2026-11-23"))
    assert due == at("2026-11-23") and upcoming == at("2026-11-30")
    assert due_now(at("2026-11-23", 10), due)
    # Sunday-start weeks end on Saturday night.
    period, due, _ = reminder_slots(at("2026-11-23", 10), person(first_day=0), "Europe/Berlin")
    assert (period.start_ms, due) == (at("2026-11-15"), at("2026-11-22"))


def test_monthly_with_next_start_and_current_end() -> None:
    monthly_next = person("monthly", {"timing": "nextStart", "hour": 9})
    period, due, _ = reminder_slots(at("2026-12-01", 8), monthly_next, "Europe/Berlin")
    # At 08:00 on 1 December, November's reminder is not yet due (09:00): October's was.
    assert period.start_ms == at("2026-10-01") and not due_now(at("2026-12-01", 8), due)
    period, due, upcoming = reminder_slots(at("2026-12-01", 9), monthly_next, "Europe/Berlin")
    assert (period.start_ms, period.end_ms, due) == (at("2026-11-01"), at("2026-12-01"),
                                                     at("2026-12-01", 9))
    assert upcoming == at("2027-01-01", 9)
    monthly_end = person("monthly", {"timing": "currentEnd", "hour": 15})
    period, due, _ = reminder_slots(at("2026-11-30", 16), monthly_end, "Europe/Berlin")
    assert (period.start_ms, due) == (at("2026-11-01"), at("2026-11-30", 15))
    assert due_now(at("2026-11-30", 16), due)


def test_the_rules_the_fronts_know() -> None:
    rules = rules_of({
        "getPerson": {
            "timeSettings": {"lockDate": {"value": {"ts": at("2026-11-01")}},
                             "forceComment": {"value": True},
                             "turnOffPeriodAfter": {"value": 2},
                             "periodicity": {"value": "semiMonthly"},
                             "durationFormat": {"value": 1, "path": [{"id": "x"}]}},
            "localisation": {"timeZone": {"value": "Europe/Berlin"},
                             "firstDayOfWeek": {"value": 1}}},
        "getProjects": [{"id": "open", "timeSettings": {"lockDate": {"value": None},
                                                        "forceComment": {"value": False}}},
                        {"id": "plain", "timeSettings": {}}],
    })
    now = at("2026-11-19", 12)
    assert refusal(rules, at("2026-10-30", 9), 3_600_000, "x", [], now) == (
        "Entries before Sun 1 Nov 2026 are locked (lockDate): log time on Sun 1 Nov 2026 or "
        "later.")
    assert refusal(rules, at("2026-11-18", 9), 3_600_000, " ", ["plain"], now) == (
        "A comment is required (forceComment): say what you did after the entry, e.g. /time 2h"
        " @acme what you did")
    # A project's own value beats the person's: none required there.
    assert refusal(rules, at("2026-11-18", 9), 3_600_000, "", ["open"], now) is None
    assert refusal(rules, at("2026-11-10", 9), 3_600_000, "x", [], now) == (
        "The half-month of 2026-11-01 to 2026-11-15 is closed (turnOffPeriodAfter: 2 days after"
        " it ends): log time from Mon 16 Nov 2026 on.")
    assert rules.duration_format == 1 and shown_duration(9_000_000, rules) == "2.5 h"
    with l10n.using(l10n.Localisation(decimal=",")):
        assert shown_duration(9_000_000, rules) == "2,5 h"
    for chosen, said in ((0, "2:30"), (2, "2h 30m"), (None, "2h 30m")):
        assert shown_duration(9_000_000, replace(rules, settings={"durationFormat": chosen})
                              ) == said
