"""A person's timesheet score over their last complete periods (getTimesheetScore), pure.

Each period counts once: `onTime` when the person's first submission of a timesheet in the
period (by them, a manager or auto-submit) came before the period ended, `late` when it came
after, `notSubmitted` when nothing in it was ever submitted. `rejections` counts the
rejections of the period's timesheets (each rejection, so a period rejected twice counts
twice). The score is a percentage: on-time periods count fully, late ones half, and each
rejection takes a quarter of a period away (never below 0):
    score = round(100 x max(0, onTime + late / 2 - rejections / 4) / periods).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SUBMIT_KINDS = ("submit", "auto_submit")
REJECT_KIND = "reject"


@dataclass(frozen=True)
class Event:
    start_ms: int  # the timesheet's period start
    kind: str
    ts_ms: int


@dataclass(frozen=True)
class Score:
    score: int
    periods: int
    on_time: int
    late: int
    not_submitted: int
    rejections: int


def timesheet_score(periods: Sequence[tuple[int, int]], events: Sequence[Event]) -> Score:
    on_time = late = not_submitted = rejections = 0
    for start, end in periods:
        inside = [e for e in events if start <= e.start_ms < end]
        submitted = [e.ts_ms for e in inside if e.kind in SUBMIT_KINDS]
        rejections += sum(1 for e in inside if e.kind == REJECT_KIND)
        if not submitted:
            not_submitted += 1
        elif min(submitted) < end:
            on_time += 1
        else:
            late += 1
    count = len(periods)
    points = max(0.0, on_time + late / 2 - rejections / 4)
    score = round(100 * points / count) if count else 0
    return Score(score, count, on_time, late, not_submitted, rejections)
