"""What people log: time records (worked time and absences) and expense records."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.absences.models import AbsenceType
from service.model_base import Base, OrgScoped, id_column
from service.people.models import Person
from service.projects.models import Project
from service.projects.task_models import Task


class ExpenseType(OrgScoped, Base):
    __tablename__ = "expense_types"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)


time_record_projects = Table(
    "time_record_projects",
    Base.metadata,
    Column(
        "time_record_id",
        String(24),
        ForeignKey("time_records.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column(
        "project_id", String(24), ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    ),
    Index("ix_time_record_projects_project", "project_id", "time_record_id"),
)


class TimeRecord(OrgScoped, Base):
    __tablename__ = "time_records"
    __table_args__ = (
        Index("ix_time_records_person_start", "organisation_id", "person_id", "start_ms"),
        Index("ix_time_records_org_start", "organisation_id", "start_ms"),
    )

    id: Mapped[str] = id_column()
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE")
    )
    start_ms: Mapped[int] = mapped_column(BigInteger)
    end_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    duration_ms: Mapped[int] = mapped_column(BigInteger)
    task_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tasks.id", ondelete="SET NULL"), nullable=True, index=True
    )
    absence_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("absence_types.id", ondelete="SET NULL"), nullable=True, index=True
    )
    comment: Mapped[str] = mapped_column(Text, default="")
    non_billable: Mapped[bool] = mapped_column(Boolean, default=False)
    wfh: Mapped[bool] = mapped_column(Boolean, default=False)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    modified_ms: Mapped[int] = mapped_column(BigInteger)
    modified_by_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    # Bumped on each change; lets the approval workflow tell modified records apart.
    revision: Mapped[int] = mapped_column(Integer, default=1)

    person: Mapped[Person] = relationship(lazy="joined")
    task: Mapped[Task | None] = relationship(lazy="joined")
    absence: Mapped[AbsenceType | None] = relationship(lazy="joined")
    projects: Mapped[list[Project]] = relationship(
        secondary=time_record_projects, lazy="selectin", order_by=Project.name
    )


class ExpenseRecord(OrgScoped, Base):
    __tablename__ = "expense_records"
    __table_args__ = (Index("ix_expense_records_org_date", "organisation_id", "date_ms"),)

    id: Mapped[str] = id_column()
    date_ms: Mapped[int] = mapped_column(BigInteger)
    expense_type_id: Mapped[str] = mapped_column(String(24), ForeignKey("expense_types.id"))
    value: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(3))
    person_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), nullable=True, index=True
    )
    project_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), nullable=True, index=True
    )
    comment: Mapped[str] = mapped_column(Text, default="")
    created_ms: Mapped[int] = mapped_column(BigInteger)

    expense_type: Mapped[ExpenseType] = relationship(lazy="joined")
    person: Mapped[Person | None] = relationship(lazy="joined")
    project: Mapped[Project | None] = relationship(lazy="joined")
