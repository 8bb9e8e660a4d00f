"""More links between items: who may use a schedule type ("Who has access?" of schedules),
subprojects made available under another project, the tags a task is offered to (its
potential owners by tag), the tags put on tasks (tagTask, from a start time on), and the
managers of tags and of tasks.

Each row links two items of one organisation; a unique constraint makes a repeated link (a
retry, a second process) impossible to store twice, and deleting either item deletes it.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


def _ref(table: str, nullable: bool = False) -> Mapped[str]:
    return mapped_column(String(24), ForeignKey(f"{table}.id", ondelete="CASCADE"),
                         nullable=nullable, index=True)


def _optional_ref(table: str) -> Mapped[str | None]:
    return mapped_column(String(24), ForeignKey(f"{table}.id", ondelete="CASCADE"),
                         nullable=True, index=True)


class ScheduleTypeAccess(OrgScoped, Base):
    """A person or a tag on a schedule type's "Who has access?" list (exactly one of
    `person_id` / `tag_id`; `member_id` repeats it for the unique constraint)."""

    __tablename__ = "schedule_type_access"
    __table_args__ = (
        UniqueConstraint("schedule_type_id", "member_id",
                         name="uq_schedule_type_access_type_member"),
    )

    id: Mapped[str] = id_column()
    schedule_type_id: Mapped[str] = _ref("schedule_types")
    member_id: Mapped[str] = mapped_column(String(24))
    person_id: Mapped[str | None] = _optional_ref("persons")
    tag_id: Mapped[str | None] = _optional_ref("tags")


class ProjectSubProject(OrgScoped, Base):
    """A subproject offered under another project (assignSubProjectToProject): recording on
    the project, one may choose it as well as the project's own subprojects."""

    __tablename__ = "project_sub_projects"
    __table_args__ = (
        UniqueConstraint("project_id", "sub_project_id",
                         name="uq_project_sub_projects_project_sub"),
    )

    id: Mapped[str] = id_column()
    project_id: Mapped[str] = _ref("projects")
    sub_project_id: Mapped[str] = _ref("projects")


class TaskTagAccess(OrgScoped, Base):
    """A tag a task is offered to (assignTaskToTag): the people carrying the tag, or a
    descendant tag, are potential owners of the task."""

    __tablename__ = "task_tag_access"
    __table_args__ = (
        UniqueConstraint("task_id", "tag_id", name="uq_task_tag_access_task_tag"),
    )

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = _ref("tasks")
    tag_id: Mapped[str] = _ref("tags")


class TaskTag(OrgScoped, Base):
    """A tag put on a task (tagTask), from `start_ms` on when set."""

    __tablename__ = "task_tags"
    __table_args__ = (UniqueConstraint("tag_id", "task_id", name="uq_task_tags_tag_task"),)

    id: Mapped[str] = id_column()
    tag_id: Mapped[str] = _ref("tags")
    task_id: Mapped[str] = _ref("tasks")
    start_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class TagManager(OrgScoped, Base):
    __tablename__ = "tag_managers"
    __table_args__ = (
        UniqueConstraint("tag_id", "person_id", name="uq_tag_managers_tag_person"),
    )

    id: Mapped[str] = id_column()
    tag_id: Mapped[str] = _ref("tags")
    person_id: Mapped[str] = _ref("persons")


class TaskManager(OrgScoped, Base):
    """A manager of a task: an approver of the "Task managers" stages for time on it, with
    the task's owner."""

    __tablename__ = "task_managers"
    __table_args__ = (
        UniqueConstraint("task_id", "person_id", name="uq_task_managers_task_person"),
    )

    id: Mapped[str] = id_column()
    task_id: Mapped[str] = _ref("tasks")
    person_id: Mapped[str] = _ref("persons")
