"""Who acts on a timesheet (a person, or the service itself) and when, and the labels the
workflow's messages use: a period, a stage, a status."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from service.graphql.convert import iso
from service.models import ROLE_ADMIN, Organisation, Person
from service.timesheets import stages as st

MAX_PERIOD_MS = 366 * 86_400_000
STATUS_WORDS = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}


_EPOCH = date(1970, 1, 1)
_DAY_MS = 86_400_000
_YEAR_10000_MS = 253_402_300_800_000


def _utc_day(ms: int) -> str:
    """`iso(ms)[:10]`, without formatting the time of day (every time-record write asks for
    a period label; strftime is most of its cost)."""
    if 0 <= ms < _YEAR_10000_MS:
        return _day(ms // _DAY_MS)
    return iso(ms)[:10]


@lru_cache(maxsize=4096)
def _day(days: int) -> str:
    """Day `days` since 1970-01-01, ISO-formatted (writes ask of a few days, again and again)."""
    return (_EPOCH + timedelta(days=days)).isoformat()


def period_label(start_ms: int, end_ms: int) -> str:
    return f"{_utc_day(start_ms)} to {_utc_day(max(start_ms, end_ms - 1))}"


def stage_label(stages: list[dict[str, Any]], index: int) -> str:
    if 0 <= index < len(stages):
        return f"stage {index}: {st.STAGE_LABELS[stages[index]['type']]}"
    return f"stage {index}"


@dataclass
class Actor:
    """Who acts (None: the service itself) and when."""

    session: AsyncSession
    organisation: Organisation
    person: Person | None
    now_ms: int

    @property
    def id(self) -> str | None:
        return self.person.id if self.person is not None else None

    @property
    def is_admin(self) -> bool:
        return self.person is not None and self.person.role.kind == ROLE_ADMIN

    @property
    def name(self) -> str:
        return self.person.name if self.person is not None else "the service"
