"""Pure rules of the automatic timesheet (time settings `enableAutoTimesheet` and
`autoTimesheet`): entries suggested from the task board.

For a task of a configured category, the person worked on it from the moment it entered the
entry's start status (no start status: from its first recorded status) until it entered the
end status (no end status, or not there yet: until now). That time is clipped to the period
and to now, cut into the person's working windows of each day (their schedule's time pairs,
else `duration` from 9:00; the default schedule gives 9:00-17:00 on working days), and what the
person already recorded on that task that day is taken off. Nothing when the setting is off.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from service.plannings import PlannedDay

HOUR_MS = 3_600_000
DAY_START_MS = 9 * HOUR_MS  # a working day without time pairs starts at 9:00


@dataclass(frozen=True)
class AutoRule:
    category_id: str
    start_status_id: str | None
    end_status_id: str | None


@dataclass(frozen=True)
class StatusChange:
    task_id: str
    status_id: str
    at_ms: int


@dataclass(frozen=True)
class Window:
    """A span of working time on a local day, in absolute ms [start, end)."""

    day: date
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class Suggestion:
    task_id: str
    day: date
    start_ms: int  # where the day's first piece of the suggestion begins
    duration_ms: int


def rules_of(enabled: bool | None, entries: Sequence[Mapping[str, Any]] | None) -> list[AutoRule]:
    """The setting's entries as rules; none when the automatic timesheet is off."""
    if not enabled:
        return []
    return [AutoRule(str(e["categoryId"]), e.get("timesheetStartStatusId"),
                     e.get("timesheetEndStatusId")) for e in entries or []]


def working_windows(days: Iterable[PlannedDay]) -> list[Window]:
    """The working windows of planned days (holidays and days without time have none)."""
    found: list[Window] = []
    for day in days:
        if not day.working:
            continue
        pairs = day.scheduled.time_pairs or ((DAY_START_MS, DAY_START_MS + day.duration),)
        found.extend(Window(day.day, day.start_ms + a, day.start_ms + b) for a, b in pairs)
    return found


def worked_spans(rule: AutoRule, changes: Sequence[StatusChange],
                 now_ms: int) -> list[tuple[int, int]]:
    """[start, end) spans from entering the start status to entering the end status."""
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    for change in sorted(changes, key=lambda c: c.at_ms):
        if opened is not None and change.status_id == rule.end_status_id:
            spans.append((opened, change.at_ms))
            opened = None
        elif opened is None and change.status_id != rule.end_status_id and (
                rule.start_status_id is None or change.status_id == rule.start_status_id):
            opened = change.at_ms
    if opened is not None and opened < now_ms:
        spans.append((opened, now_ms))
    return spans


def suggestions(
    rules: Sequence[AutoRule],
    task_categories: Mapping[str, str | None],
    changes: Sequence[StatusChange],
    windows: Sequence[Window],
    recorded: Mapping[tuple[str, date], int],
    start_ms: int,
    end_ms: int,
    now_ms: int,
) -> list[Suggestion]:
    """The suggested entries of the period [start_ms, end_ms): one per task and day, by day
    then task. `recorded`: ms already recorded per (task, local day)."""
    by_category = {rule.category_id: rule for rule in reversed(rules)}  # the first entry wins
    upper = min(end_ms, now_ms)
    histories: dict[str, list[StatusChange]] = {}
    for change in changes:
        histories.setdefault(change.task_id, []).append(change)
    found: list[Suggestion] = []
    for task_id in sorted(task_categories):
        rule = by_category.get(task_categories[task_id] or "")
        if rule is None:
            continue
        history = histories.get(task_id, [])
        per_day: dict[date, tuple[int, int]] = {}
        for span_start, span_end in worked_spans(rule, history, now_ms):
            for window in windows:
                lo = max(span_start, window.start_ms, start_ms)
                hi = min(span_end, window.end_ms, upper)
                if hi <= lo:
                    continue
                first, total = per_day.get(window.day, (lo, 0))
                per_day[window.day] = (min(first, lo), total + hi - lo)
        for day, (first, total) in per_day.items():
            left = total - recorded.get((task_id, day), 0)
            if left > 0:
                found.append(Suggestion(task_id, day, first, left))
    return sorted(found, key=lambda s: (s.day, s.task_id))
