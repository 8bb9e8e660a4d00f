"""Who has access to which project, absence type and expense type ("Who has access?" lists),
and the projects an expense type is limited to.

Each access row links one item to one person or one tag (exactly one of `person_id` /
`tag_id` is set); `member_id` repeats that id so that one unique constraint makes a repeated
assignment (a retry, a second process) impossible to store twice. Deleting the item, the
person or the tag deletes the row.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column


def _person_column() -> Mapped[str | None]:
    return mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), nullable=True, index=True
    )


def _tag_column() -> Mapped[str | None]:
    return mapped_column(
        String(24), ForeignKey("tags.id", ondelete="CASCADE"), nullable=True, index=True
    )


class ProjectAccess(OrgScoped, Base):
    """A person or tag on a project's (or subproject's) "Who has access?" list."""

    __tablename__ = "project_access"
    __table_args__ = (
        UniqueConstraint("project_id", "member_id", name="uq_project_access_project_member"),
    )

    id: Mapped[str] = id_column()
    project_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    member_id: Mapped[str] = mapped_column(String(24))
    person_id: Mapped[str | None] = _person_column()
    tag_id: Mapped[str | None] = _tag_column()


class AbsenceTypeAccess(OrgScoped, Base):
    """A person or tag on an absence type's "Who has access?" list."""

    __tablename__ = "absence_type_access"
    __table_args__ = (
        UniqueConstraint(
            "absence_type_id", "member_id", name="uq_absence_type_access_type_member"
        ),
    )

    id: Mapped[str] = id_column()
    absence_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("absence_types.id", ondelete="CASCADE"), index=True
    )
    member_id: Mapped[str] = mapped_column(String(24))
    person_id: Mapped[str | None] = _person_column()
    tag_id: Mapped[str | None] = _tag_column()


class ExpenseTypeAccess(OrgScoped, Base):
    """A person or tag on an expense type's "Who has access?" list."""

    __tablename__ = "expense_type_access"
    __table_args__ = (
        UniqueConstraint(
            "expense_type_id", "member_id", name="uq_expense_type_access_type_member"
        ),
    )

    id: Mapped[str] = id_column()
    expense_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("expense_types.id", ondelete="CASCADE"), index=True
    )
    member_id: Mapped[str] = mapped_column(String(24))
    person_id: Mapped[str | None] = _person_column()
    tag_id: Mapped[str | None] = _tag_column()


class ExpenseTypeProject(OrgScoped, Base):
    """An expense type limited to projects: one row per project it may be recorded on
    (a project includes its subprojects). No rows: the type is not limited."""

    __tablename__ = "expense_type_projects"
    __table_args__ = (
        UniqueConstraint(
            "expense_type_id", "project_id", name="uq_expense_type_projects_type_project"
        ),
    )

    id: Mapped[str] = id_column()
    expense_type_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("expense_types.id", ondelete="CASCADE"), index=True
    )
    project_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
