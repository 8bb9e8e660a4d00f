"""Tasks, their categories (workflow statuses) and owners."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.model_base import Base, OrgScoped, id_column


class TaskCategory(OrgScoped, Base):
    __tablename__ = "task_categories"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    level_names: Mapped[list[Any]] = mapped_column(JSON, default=list)
    task_move: Mapped[int | None] = mapped_column(Integer, nullable=True)


class TaskStatus(OrgScoped, Base):
    __tablename__ = "task_statuses"

    id: Mapped[str] = id_column()
    category_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("task_categories.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    color: Mapped[int | None] = mapped_column(Integer, nullable=True)
    max_concurrent_tasks: Mapped[int | None] = mapped_column(Integer, nullable=True)
    position: Mapped[int] = mapped_column(Integer, default=0)


class Task(OrgScoped, Base):
    __tablename__ = "tasks"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    category_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("task_categories.id", ondelete="SET NULL"), nullable=True
    )
    status_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("task_statuses.id", ondelete="SET NULL"), nullable=True, index=True
    )
    parent_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True, index=True
    )
    # A task may be planned on a project (the "planning" that time can be recorded on).
    project_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="SET NULL"), nullable=True, index=True
    )
    level: Mapped[int] = mapped_column(Integer, default=0)
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    start_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    end_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    effort: Mapped[float | None] = mapped_column(Float, nullable=True)  # minutes
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    # Order of the task inside its status column (moveTasksToStatus).
    position: Mapped[int] = mapped_column(Integer, default=0)
    created_ms: Mapped[int] = mapped_column(BigInteger)

    category: Mapped[TaskCategory | None] = relationship(lazy="joined")
    status: Mapped[TaskStatus | None] = relationship(lazy="joined")


class TaskOwner(OrgScoped, Base):
    """The owner (potential=False, one per task) and potential owners of a task."""

    __tablename__ = "task_owners"
    __table_args__ = (UniqueConstraint("task_id", "person_id", name="uq_task_owners_task_person"),)

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    potential: Mapped[bool] = mapped_column(Boolean, default=False)
    fte_pct: Mapped[float | None] = mapped_column(Float, nullable=True)


class TaskDependency(OrgScoped, Base):
    __tablename__ = "task_dependencies"
    __table_args__ = (
        UniqueConstraint("task_id", "depends_on_id", name="uq_task_dependencies_task_depends_on"),
    )

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="CASCADE"), index=True
    )
    depends_on_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="CASCADE")
    )
