"""What the parts of the demo's seeding share: the organisation being seeded, what was
created so far (by name), the seeded random generator and the demo's calendar (its time zone,
the working days of its history, local moments as Unix ms)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from random import Random
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from service.models import AbsenceType, ExpenseType, Person, Project, Tag, Task

DEMO_TIMEZONE = "Europe/Berlin"
DEMO_CURRENCY = "EUR"
HISTORY_WEEKS = 3

HOUR_MS = 3_600_000
MINUTE_MS = 60_000
DAY_MS = 24 * HOUR_MS


@dataclass
class DemoSeed:
    session: AsyncSession
    now_ms: int
    org_id: str = ""
    # One generator for the whole seeding: the records are deterministic for a given now_ms.
    random: Random = field(default_factory=lambda: Random(20240601))
    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo(DEMO_TIMEZONE))
    persons: dict[str, Person] = field(default_factory=dict)  # by e-mail local part
    projects: dict[str, Project] = field(default_factory=dict)
    # Leaf project name -> the tasks planned there, with their owner's e-mail local part.
    tasks: dict[str, list[tuple[Task, str]]] = field(default_factory=dict)
    absence_types: dict[str, AbsenceType] = field(default_factory=dict)
    expense_types: dict[str, ExpenseType] = field(default_factory=dict)
    kind_tags: dict[str, Tag] = field(default_factory=dict)

    def add(self, *items: Any) -> None:
        self.session.add_all(items)

    def working_days(self) -> list[dt.date]:
        """The working days of the last HISTORY_WEEKS weeks, newest first, before today."""
        today = dt.datetime.fromtimestamp(self.now_ms / 1000, self.zone).date()
        days: list[dt.date] = []
        day = today - dt.timedelta(days=1)
        while len(days) < HISTORY_WEEKS * 5:
            if day.weekday() < 5:
                days.append(day)
            day -= dt.timedelta(days=1)
        return days

    def at(self, day: dt.date, hour: int, minute: int = 0) -> int:
        moment = dt.datetime.combine(day, dt.time(hour, minute), self.zone)
        return int(moment.timestamp() * 1000)
