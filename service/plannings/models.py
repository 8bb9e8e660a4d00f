"""Work schedules: schedule types (a cycle of days) and their timeline on the organisation,
tags and persons (which schedule applies from when)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column

TARGET_ORGANISATION = "organisation"
TARGET_TAG = "tag"
TARGET_PERSON = "person"


class ScheduleType(OrgScoped, Base):
    """`days` holds `length` entries {"duration": ms, "wfh": bool, "timePairs": [[ms, ms]]};
    day 0 is the local day of `calendar_start_ms`, the cycle repeats every `length` days."""

    __tablename__ = "schedule_types"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    calendar_start_ms: Mapped[int] = mapped_column(BigInteger)
    length: Mapped[int] = mapped_column(Integer, default=7)
    days: Mapped[list[Any]] = mapped_column(JSON, default=list)


class ScheduleTimelineEntry(OrgScoped, Base):
    """One schedule type on the timeline of the organisation, a tag or a person, from
    `start_ms` (None: from the beginning). One entry per (target, schedule type)."""

    __tablename__ = "schedule_timeline"
    __table_args__ = (
        UniqueConstraint(
            "target_kind", "target_id", "schedule_type_id", name="uq_schedule_timeline_target"
        ),
    )

    id: Mapped[str] = id_column()
    schedule_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("schedule_types.id", ondelete="CASCADE"), index=True
    )
    target_kind: Mapped[str] = mapped_column(String(16))
    target_id: Mapped[str] = mapped_column(String(24), index=True)
    start_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
