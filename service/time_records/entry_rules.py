"""The time settings that shape time entry, as one table of pure rules (issue #24).

Every write of a time record (adding, each edit, cloning, the legacy interface's time
entries, and submitting a timesheet, whose records are checked as they stand) is described as
a `Write`: what kind of write, which fields it gives, the record as it leaves it (and as it
was), who writes. `refusal` runs the rules of `RULES` whose fields the write touches, in
order, over the settings' values (`Resolved`: the value and where it is set) and the facts
the adapter read (`Facts`: now, the planned day, category names); the first rule that refuses
returns its message, which names the setting, where it is set and what would be accepted:
``The timesheet settings <refuse what> (<setting> of <where>): <what is accepted>``.

What "timer" means here: the schema has no timer field, so a running timer is a worked record
without an end and of duration 0 (`addTimeRecord(duration: 0)` without `endTime` starts one);
giving a running record its end (`editTimeRecordEndTime`) stops it, and its duration becomes
the time between (rounded by `timeEntryUnit`). Absences are not timed: the timer and start/end
rules concern worked time only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime

from service.organisation import Resolved
from service.plannings import PlannedDay, out_of_schedule_refusal

DAY_MS = 86_400_000

# The fields a write gives. "time" is start, end and duration together (a new record).
START, END, DURATION, ABSENCE, PROJECTS, TASK, COMMENT, ANY = (
    "start", "end", "duration", "absence", "projects", "task", "comment", "any")
NEW = frozenset({START, END, DURATION, ABSENCE, PROJECTS, TASK, COMMENT, ANY})
TIMED = frozenset({START, END, DURATION, ABSENCE})


@dataclass(frozen=True)
class ProjectFact:
    name: str
    category_id: str | None


@dataclass(frozen=True)
class Entry:
    """A time record as a write leaves it (or as it stands, for a submission)."""

    start_ms: int
    duration_ms: int
    end_ms: int | None = None
    absence: bool = False
    comment: str | None = None  # None: not known to the write (addTimeRecord takes none)
    task_category: str | None = None
    has_task: bool = False
    projects: tuple[ProjectFact, ...] = ()

    @property
    def running(self) -> bool:
        """A running timer: worked time, no end, nothing recorded yet."""
        return not self.absence and self.end_ms is None and self.duration_ms == 0


@dataclass(frozen=True)
class Write:
    kind: str  # add, clone, legacy, edit, delete, submit
    after: Entry
    fields: frozenset[str] = NEW
    before: Entry | None = None
    record_id: str | None = None  # the record edited (its own time is not counted twice)

    @property
    def stops_timer(self) -> bool:
        return (self.before is not None and self.before.running and END in self.fields
                and self.after.end_ms is not None)

    @property
    def starts_timer(self) -> bool:
        return self.kind == "add" and self.after.running


@dataclass(frozen=True)
class Period:
    """The timesheet period an entry falls in: its days, scheduled time, and the time the
    person's other records in it hold."""

    first: date
    last: date
    scheduled_ms: int
    recorded_ms: int


@dataclass(frozen=True)
class Facts:
    now_ms: int
    admin: bool = False
    day: PlannedDay | None = None  # the planned day of the entry's start (when a rule needs it)
    out_of_schedule: bool = True  # allowTimeRecordOutOfScheduleDaily as it applies (projects')
    names: Mapping[str, str] = field(default_factory=dict)  # category id -> name
    period: Period | None = None  # when allowTimeRecordOutOfSchedulePeriod is false


Values = Mapping[str, Resolved]
Check = Callable[[Values, Write, Facts], str | None]


def source(resolved: Resolved) -> str:
    if not resolved.path:
        return "the default"
    where = resolved.path[0]
    return f"{where['collection'].rstrip('s')} {where['name']}"


def when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def length(ms: int) -> str:
    minutes, rest = divmod(ms, 60_000)
    hours, minutes = divmod(minutes, 60)
    text = f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    return text + (f" {rest / 1000:g} s" if rest else "")


def refuse(what: str, name: str, values: Values, accepted: str) -> str:
    return f"The timesheet settings {what} ({name} of {source(values[name])}): {accepted}"


# --- the rules ----------------------------------------------------------------------------


def lock_date(values: Values, write: Write, facts: Facts) -> str | None:
    """Nothing before the lock date is recorded, changed, moved there or submitted, except by
    an admin."""
    lock = values["lockDate"].value
    if lock is None or facts.admin:
        return None
    starts = [write.after.start_ms] + ([write.before.start_ms] if write.before else [])
    if min(starts) >= lock:
        return None
    return refuse(f"lock time before {when(lock)}", "lockDate", values,
                  "nothing before it may be recorded or changed except by an admin")


def no_future(values: Values, write: Write, facts: Facts) -> str | None:
    if not values["noFutureTimeRecord"].value or write.after.start_ms <= facts.now_ms:
        return None
    return refuse("refuse time in the future", "noFutureTimeRecord", values,
                  f"the entry must start at or before now, {when(facts.now_ms)}")


def minimum(values: Values, write: Write, facts: Facts) -> str | None:
    least = values["minimumTimeEntry"].value
    if not least or write.after.running or write.after.duration_ms >= least:
        return None
    return refuse(f"refuse entries shorter than {length(least)}", "minimumTimeEntry", values,
                  f"record at least {length(least)}")


def time_off(values: Values, write: Write, facts: Facts) -> str | None:
    if not write.after.absence or values["allowTimeOffRecord"].value is not False:
        return None
    return refuse("do not allow recording time off", "allowTimeOffRecord", values,
                  "record worked time only")


def absence_length(values: Values, write: Write, facts: Facts) -> str | None:
    entry = write.after
    span = entry.end_ms - entry.start_ms if entry.end_ms is not None else 0
    if not values["absenceMaxOneDay"].value or not entry.absence or \
            max(entry.duration_ms, span) <= DAY_MS:
        return None
    return refuse("allow an absence of at most one day", "absenceMaxOneDay", values,
                  "record at most 24 h, one record per day")


def comment(values: Values, write: Write, facts: Facts) -> str | None:
    text = write.after.comment
    if not values["forceComment"].value or text is None or text.strip():
        return None
    return refuse("require a comment on every time record", "forceComment", values,
                  "write what the time was spent on")


def _day_refusal(day: PlannedDay) -> str:
    why = f"a public holiday ({day.holiday})" if day.holiday else "not a working day"
    return f"{day.day.isoformat()} is {why} for this person"


def working_day(values: Values, write: Write, facts: Facts) -> str | None:
    day = facts.day
    if not values["timeRecordOnWorkingDayOnly"].value or day is None or day.working:
        return None
    return refuse("allow time on working days only", "timeRecordOnWorkingDayOnly", values,
                  f"{_day_refusal(day)}; record on a day with scheduled time")


def in_schedule(values: Values, write: Write, facts: Facts) -> str | None:
    if write.after.absence or facts.day is None:
        return None
    refusal = out_of_schedule_refusal(facts.out_of_schedule, facts.day)
    return None if refusal is None else (
        f"{refusal} (allowTimeRecordOutOfScheduleDaily): record on a day with scheduled time")


def in_period_schedule(values: Values, write: Write, facts: Facts) -> str | None:
    period = facts.period
    if period is None or write.after.absence or \
            period.recorded_ms + write.after.duration_ms <= period.scheduled_ms:
        return None
    left = max(0, period.scheduled_ms - period.recorded_ms)
    return refuse("refuse time beyond the period's scheduled time",
                  "allowTimeRecordOutOfSchedulePeriod", values,
                  f"{period.first.isoformat()} to {period.last.isoformat()} has "
                  f"{length(period.scheduled_ms)} scheduled, {length(period.recorded_ms)} "
                  f"recorded: record at most {length(left)} more")


def start_end(values: Values, write: Write, facts: Facts) -> str | None:
    entry = write.after
    if entry.absence or write.stops_timer:
        return None
    if values["enableStartEndTime"].value is False:
        if entry.end_ms is not None:
            return refuse("do not offer start and end times", "enableStartEndTime", values,
                          "record a duration without an end time")
        return None
    if values["mandatoryStartEndTime"].value and entry.end_ms is None and not (
            entry.running and values["enableTimer"].value is not False):
        return refuse("require a start and an end time on every time record",
                      "mandatoryStartEndTime", values, "give the entry its end time")
    return None


def timer(values: Values, write: Write, facts: Facts) -> str | None:
    entry = write.after
    if entry.absence or write.stops_timer:
        return None
    if values["enableTimer"].value is False:
        if write.starts_timer:
            return refuse("do not offer the timer", "enableTimer", values,
                          "record a duration (or an end time) instead of starting a timer")
        return None
    if values["mandatoryTimer"].value and not write.starts_timer and write.kind != "submit":
        return refuse("record time with the timer only", "mandatoryTimer", values,
                      "start a timer (an entry of duration 0 without an end) and stop it by "
                      "giving it its end time")
    return None


def _levels(values: Values) -> list[list[str]]:
    return [list(level or []) for level in values["listOfProjectCategories"].value or []]


def _matches(categories: list[str | None], levels: list[list[str]], used: frozenset[int]) -> bool:
    """Whether each category can take a level of its own that offers it."""
    if not categories:
        return True
    first, rest = categories[0], categories[1:]
    return any(first in level and _matches(rest, levels, used | {index})
               for index, level in enumerate(levels) if index not in used)


def project_categories(values: Values, write: Write, facts: Facts) -> str | None:
    levels = _levels(values)
    projects = write.after.projects
    if not levels or not projects:
        return None
    if _matches([p.category_id for p in projects], levels, frozenset()):
        return None
    offered = "; then ".join(" or ".join(facts.names.get(c, c) for c in level) or "none"
                             for level in levels)
    named = ", ".join(p.name for p in projects)
    return refuse(f"do not offer the projects {named} together", "listOfProjectCategories",
                  values, f"choose one project of each level: {offered}")


def task_categories(values: Values, write: Write, facts: Facts) -> str | None:
    allowed = values["taskCategories"].value
    entry = write.after
    if allowed is None or not entry.has_task or entry.task_category in allowed:
        return None
    plannings = ", ".join(facts.names.get(c, c) for c in allowed) or "none"
    return refuse("do not allow recording time on this task", "taskCategories", values,
                  f"its planning is not in the person's Record time on these plannings list "
                  f"({plannings})")


@dataclass(frozen=True)
class Rule:
    settings: tuple[str, ...]
    fields: frozenset[str]  # the write's fields that make the rule apply
    check: Check
    kinds: frozenset[str] = frozenset({"add", "clone", "legacy", "edit"})
    facts: frozenset[str] = frozenset()  # what the adapter must read: "day", "names"


RULES: tuple[Rule, ...] = (
    # Not "submit": a submission records nothing (the period's locked time stays locked).
    Rule(("lockDate",), NEW, lock_date, frozenset({"add", "clone", "legacy", "edit", "delete"})),
    Rule(("noFutureTimeRecord",), TIMED, no_future),
    Rule(("minimumTimeEntry",), TIMED, minimum, frozenset({"add", "clone", "legacy", "edit"})),
    Rule(("allowTimeOffRecord",), TIMED, time_off),
    Rule(("absenceMaxOneDay",), TIMED, absence_length),
    Rule(("forceComment",), frozenset({COMMENT}), comment,
         frozenset({"clone", "legacy", "edit", "submit"})),
    Rule(("timeRecordOnWorkingDayOnly",), frozenset({START, ABSENCE}), working_day,
         facts=frozenset({"day"})),
    Rule(("allowTimeRecordOutOfScheduleDaily",), frozenset({START, ABSENCE}), in_schedule,
         facts=frozenset({"day"})),
    Rule(("allowTimeRecordOutOfSchedulePeriod", "periodicity"),
         frozenset({START, END, DURATION, ABSENCE}), in_period_schedule,
         facts=frozenset({"period"})),
    Rule(("enableStartEndTime", "mandatoryStartEndTime", "enableTimer"),
         frozenset({END, ABSENCE}), start_end, frozenset({"add", "clone", "legacy", "edit",
                                                          "submit"})),
    Rule(("enableTimer", "mandatoryTimer"), frozenset({START, END, DURATION}), timer),
    Rule(("listOfProjectCategories",), frozenset({PROJECTS}), project_categories,
         facts=frozenset({"names"})),
    Rule(("taskCategories",), frozenset({TASK}), task_categories, facts=frozenset({"names"})),
)


def applying(write: Write) -> list[Rule]:
    return [rule for rule in RULES if write.kind in rule.kinds and rule.fields & write.fields]


def refusal(values: Values, write: Write, facts: Facts) -> str | None:
    """The message of the first rule the write breaks, or None."""
    for rule in applying(write):
        found = rule.check(values, write, facts)
        if found is not None:
            return found
    return None


def rounded(unit: int | None, entry: Entry) -> Entry:
    """The entry with its duration rounded up to `timeEntryUnit` (rounding up never loses
    recorded time), an end that matched the duration moved with it."""
    if not unit or entry.duration_ms % unit == 0:
        return entry
    duration = -(-entry.duration_ms // unit) * unit
    end = entry.end_ms
    if end is not None and end - entry.start_ms == entry.duration_ms:
        end = entry.start_ms + duration
    return replace(entry, duration_ms=duration, end_ms=end)
