"""The account settings that shape time entry, applied to one entry. For an entry the value
is a project's own (the first of the entry's projects that sets it), else the owner's
(person > deepest tag > account > default: `settings_cascade.py`). The checks are pure and
name the setting that refuses."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import RuleViolation
from service.models import Organisation, Person, Project
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
