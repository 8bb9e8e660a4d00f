"""Projects (a tree), their categories and managers."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.model_base import Base, OrgScoped, id_column


class ProjectCategory(OrgScoped, Base):
    __tablename__ = "project_categories"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    level_names: Mapped[list[Any]] = mapped_column(JSON, default=list)


class Project(OrgScoped, Base):
    __tablename__ = "projects"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    parent_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="SET NULL"), nullable=True, index=True
    )
    category_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("project_categories.id", ondelete="SET NULL"), nullable=True
    )
    # Depth in the tree, kept up to date when the parent changes: 0 = top level.
    level: Mapped[int] = mapped_column(Integer, default=0)
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    # None: the account default applies; True: available to everyone; False: unavailable.
    availability: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    # The project's own time settings (editProjectTimeSettings…), keyed like the others.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    category: Mapped[ProjectCategory | None] = relationship(lazy="joined")


class ProjectManager(OrgScoped, Base):
    __tablename__ = "project_managers"
    __table_args__ = (
        UniqueConstraint("project_id", "person_id", name="uq_project_managers_project_person"),
    )

    id: Mapped[str] = id_column()
    project_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
