"""When each task entered each status (editTaskStatus, moveTasksToStatus, addTask): the
history the automatic timesheet (service/timesheets/auto_timesheet_rules.py) suggests entries
from."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


class TaskStatusChange(OrgScoped, Base):
    __tablename__ = "task_status_changes"
    __table_args__ = (Index("ix_task_status_changes_task_at", "task_id", "at_ms"),)

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="CASCADE")
    )
    status_id: Mapped[str] = mapped_column(String(24))
    at_ms: Mapped[int] = mapped_column(BigInteger)
