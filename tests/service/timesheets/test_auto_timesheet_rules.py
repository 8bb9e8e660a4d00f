"""The automatic timesheet's pure rule: spans from a task's start status to its end status,
cut into working windows, clipped to the period and to now, less what is already recorded."""

from __future__ import annotations

from datetime import date, timedelta

from service.plannings import schedule_rules as schedules
from service.timesheets.auto_timesheet_rules import (
    AutoRule,
    StatusChange,
    Suggestion,
    Window,
    rules_of,
    suggestions,
    working_windows,
)

HOUR = 3_600_000
DAY = 24 * HOUR
MONDAY = 1_791_158_400_000  # Mon 5 Oct 2026 00:00 UTC
MON = date(2026, 10, 5)
RULE = AutoRule("board", "doing", "done")


def week_windows(holidays: dict[date, str] | None = None) -> list[Window]:
    days = [schedules.plan_day(MON + timedelta(days=d), MONDAY + d * DAY, [], {}, holidays or {})
            for d in range(14)]
    return working_windows(days)


def suggest(changes: list[StatusChange], *, start: int = MONDAY, end: int = MONDAY + 7 * DAY,
            now: int = MONDAY + 7 * DAY, recorded: dict[tuple[str, date], int] | None = None,
            rules: list[AutoRule] | None = None, windows: list[Window] | None = None,
            ) -> list[Suggestion]:
    return suggestions(rules if rules is not None else [RULE],
                       {"t1": "board", "t2": "other"}, changes,
                       windows if windows is not None else week_windows(), recorded or {},
                       start, end, now)


def at(day: int, hour: float) -> int:
    return MONDAY + day * DAY + int(hour * HOUR)


def test_the_setting_off_or_empty_gives_no_rule() -> None:
    entry = {"categoryId": "board", "timesheetStartStatusId": "doing",
             "timesheetEndStatusId": "done"}
    assert rules_of(False, [entry]) == [] and rules_of(None, [entry]) == []
    assert rules_of(True, None) == []
    assert rules_of(True, [entry]) == [RULE]
    assert suggest([StatusChange("t1", "doing", at(0, 10))], rules=[]) == []


def test_default_schedule_windows_are_nine_to_five_on_working_days() -> None:
    windows = week_windows({MON + timedelta(days=2): "Holiday"})
    assert [(w.day, w.start_ms, w.end_ms) for w in windows[:1]] == [(MON, at(0, 9), at(0, 17))]
    assert [w.day.weekday() for w in windows[:4]] == [0, 1, 3, 4]  # holiday Wednesday, weekend
    assert len(windows) == 9
    paired = schedules.PlannedDay(MON, MONDAY, None, schedules.Day(
        5 * HOUR, False, ((8 * HOUR, 10 * HOUR), (13 * HOUR, 16 * HOUR))), None)
    assert [(w.start_ms, w.end_ms) for w in working_windows([paired])] == [
        (at(0, 8), at(0, 10)), (at(0, 13), at(0, 16))]


def test_from_start_status_to_end_status_within_working_hours() -> None:
    changes = [StatusChange("t1", "todo", at(0, 8)), StatusChange("t1", "doing", at(0, 10)),
               StatusChange("t1", "review", at(0, 12)), StatusChange("t1", "done", at(0, 15)),
               StatusChange("t2", "doing", at(0, 9))]  # another category: not configured
    assert suggest(changes) == [Suggestion("t1", MON, at(0, 10), 5 * HOUR)]


def test_an_open_task_runs_until_now_across_days_and_skips_the_weekend() -> None:
    changes = [StatusChange("t1", "doing", at(4, 14))]  # Friday 14:00, still in progress
    found = suggest(changes, end=MONDAY + 14 * DAY, now=at(7, 11))
    assert [(s.day.weekday(), s.duration_ms) for s in found] == [(4, 3 * HOUR), (0, 2 * HOUR)]


def test_clipped_to_the_period_and_recorded_time_taken_off() -> None:
    changes = [StatusChange("t1", "doing", at(0, 12)), StatusChange("t1", "done", at(2, 10)),
               StatusChange("t1", "doing", at(3, 16)), StatusChange("t1", "done", at(3, 16.5))]
    found = suggest(changes, start=at(1, 0), end=at(3, 0))  # Tuesday and Wednesday
    assert [(s.day, s.start_ms, s.duration_ms) for s in found] == [
        (MON + timedelta(days=1), at(1, 9), 8 * HOUR),
        (MON + timedelta(days=2), at(2, 9), 1 * HOUR)]
    recorded = {("t1", MON + timedelta(days=1)): 6 * HOUR, ("t1", MON + timedelta(days=2)): HOUR}
    found = suggest(changes, start=at(1, 0), recorded=recorded)
    assert [(s.day, s.duration_ms) for s in found] == [
        (MON + timedelta(days=1), 2 * HOUR), (MON + timedelta(days=3), HOUR // 2)]


def test_no_start_status_means_from_the_first_status_and_no_end_means_until_now() -> None:
    rule = AutoRule("board", None, None)
    changes = [StatusChange("t1", "todo", at(0, 16)), StatusChange("t1", "done", at(0, 16.5))]
    assert [s.duration_ms for s in suggest(changes, rules=[rule], now=at(1, 10))] == [
        HOUR, HOUR]
    assert suggest(changes, rules=[rule], now=at(0, 9)) == []  # nothing before now
