"""The account settings that shape time entry, applied to one entry. For an entry the value
is a project's own (the first of the entry's projects that sets it), else the owner's
(person > deepest tag > account > default: `settings_cascade.py`). The checks are pure and
name the setting that refuses and what would be accepted.

`checked_entry` is the one place the entry rules meet a write (adding, cloning, and the edits
of start, end, duration and absence): the record as it would be after the write must start
after the lock date (`lockDate`) and not after now (`noFutureTimeRecord`, admins included:
the spec exempts no one), last at least `minimumTimeEntry` (checked on the duration as given),
be an absence only where `allowTimeOffRecord` allows it and last at most a day with
`absenceMaxOneDay`; its duration is then rounded up to a whole number of `timeEntryUnit` (the
setting says "rounded"; rounding up never loses recorded time). Every setting is read from
the JSON already loaded with the organisation, the person, their tags and the projects: no
statement more than the lock date alone costs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import RuleViolation
from service.models import Organisation, Person, Project
from service.period_rules import check_period_open
from service.settings_cascade import Resolved, for_person, own, reader
from service.settings_registry import BY_NAME, TIME_SETTINGS


async def entry_value(session: AsyncSession, organisation: Organisation, person: Person,
                      projects: Sequence[Project], name: str) -> Resolved:
    setting = BY_NAME[(TIME_SETTINGS, name)]
    read = reader(setting)
    for project in projects:
        found = own(project, "project", read)
        if found is not None:
            return found
    return await for_person(session, organisation, person, read, setting.default, setting.ties)


def _source(resolved: Resolved) -> str:
    if not resolved.path:
        return "the default"
    where = resolved.path[0]
    return f"{where['collection'].rstrip('s')} {where['name']}"


def check_lock(lock: Resolved, start_ms: int) -> None:
    """Time before the lock date (`lockDate`) is neither recorded, changed nor moved there."""
    if lock.value is not None and start_ms < lock.value:
        day = datetime.fromtimestamp(lock.value / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
        raise RuleViolation(f"The timesheet settings lock time before {day} (lockDate of "
                            f"{_source(lock)}): nothing before it may be recorded or changed")


async def check_unlocked(session: AsyncSession, organisation: Organisation, person: Person,
                         projects: Sequence[Project], *starts: int | None) -> None:
    """RuleViolation when an entry starting at any of `starts` lies in locked time."""
    lock = await entry_value(session, organisation, person, projects, "lockDate")
    for start in starts:
        if start is not None:
            check_lock(lock, start)


def check_comment(force: Resolved, comment: str | None) -> None:
    """With `forceComment`, a time record keeps a comment."""
    if force.value and not (comment or "").strip():
        raise RuleViolation("The timesheet settings require a comment on every time record "
                            f"(forceComment of {_source(force)})")


# The settings an entry's start, duration and absence are checked against.
ENTRY_RULES = ("lockDate", "noFutureTimeRecord", "minimumTimeEntry", "timeEntryUnit",
               "allowTimeOffRecord", "absenceMaxOneDay")
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Entry:
    """A time record as a write would leave it."""

    start_ms: int
    duration_ms: int
    end_ms: int | None = None
    absence: bool = False


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _length(ms: int) -> str:
    minutes, rest = divmod(ms, 60_000)
    hours, minutes = divmod(minutes, 60)
    text = f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    return text + (f" {rest / 1000:g} s" if rest else "")


def check_not_future(setting: Resolved, start_ms: int, now_ms: int) -> None:
    if setting.value and start_ms > now_ms:
        raise RuleViolation("The timesheet settings refuse time in the future "
                            f"(noFutureTimeRecord of {_source(setting)}): the entry must start "
                            f"at or before now, {_when(now_ms)}")


def check_minimum(setting: Resolved, duration_ms: int) -> None:
    if setting.value and duration_ms < setting.value:
        raise RuleViolation(f"The timesheet settings refuse entries shorter than "
                            f"{_length(setting.value)} (minimumTimeEntry of {_source(setting)}):"
                            f" record at least {_length(setting.value)}")


def check_time_off(setting: Resolved, absence: bool) -> None:
    if absence and setting.value is False:
        raise RuleViolation("The timesheet settings do not allow recording time off "
                            f"(allowTimeOffRecord of {_source(setting)}): record worked time "
                            "only")


def check_absence_length(setting: Resolved, entry: Entry) -> None:
    span = entry.end_ms - entry.start_ms if entry.end_ms is not None else 0
    if setting.value and entry.absence and max(entry.duration_ms, span) > DAY_MS:
        raise RuleViolation("The timesheet settings allow an absence of at most one day "
                            f"(absenceMaxOneDay of {_source(setting)}): record at most 24 h, "
                            "one record per day")


def rounded(setting: Resolved, entry: Entry) -> Entry:
    """The entry with its duration rounded up to the unit (and an end that matched the
    duration moved with it)."""
    unit = setting.value
    if not unit or entry.duration_ms % unit == 0:
        return entry
    duration = -(-entry.duration_ms // unit) * unit
    end = entry.end_ms
    if end is not None and end - entry.start_ms == entry.duration_ms:
        end = entry.start_ms + duration
    return replace(entry, duration_ms=duration, end_ms=end)


def check_entry(rules: dict[str, Resolved], entry: Entry, now_ms: int) -> Entry:
    """RuleViolation naming the first setting the entry breaks; else the entry as stored."""
    check_lock(rules["lockDate"], entry.start_ms)
    check_not_future(rules["noFutureTimeRecord"], entry.start_ms, now_ms)
    check_minimum(rules["minimumTimeEntry"], entry.duration_ms)
    check_time_off(rules["allowTimeOffRecord"], entry.absence)
    check_absence_length(rules["absenceMaxOneDay"], entry)
    return rounded(rules["timeEntryUnit"], entry)


async def checked_entry(session: AsyncSession, organisation: Organisation, person: Person,
                        projects: Sequence[Project], entry: Entry, now_ms: int) -> Entry:
    """The entry as a write may store it, or RuleViolation naming the setting that refuses."""
    rules = {name: await entry_value(session, organisation, person, projects, name)
             for name in ENTRY_RULES}
    checked = check_entry(rules, entry, now_ms)
    await check_period_open(session, organisation, person, entry.start_ms, now_ms)
    return checked
