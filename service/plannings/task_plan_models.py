"""What a task's planning adds to it (one row per task, made when first needed): its end lock,
its order among its siblings, and recurrence — the rule of a series (SvcTaskRecurrence, as
stored by service/projects/recurrence_rules.py), its skipped occurrences, and for a task made from a
series (materialised or split off) the series it came from."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped


class TaskPlan(OrgScoped, Base):
    __tablename__ = "task_plans"

    task_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    end_locked: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    # Order among the children of its parent (or the top-level tasks of its category).
    sibling_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    recurrence: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    skipped: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    last_materialized_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # A task made from a series: the series (task) and the index of its occurrence there;
    # root_series_id: the first series of a chain of splits.
    series_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    series_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    root_series_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    created_ms: Mapped[int] = mapped_column(BigInteger, default=0)
