"""Tags (grouped in categories, a tree) and which people carry them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.model_base import Base, OrgScoped, id_column


class TagCategory(OrgScoped, Base):
    __tablename__ = "tag_categories"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    level_names: Mapped[list[Any]] = mapped_column(JSON, default=list)


class Tag(OrgScoped, Base):
    __tablename__ = "tags"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    category_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tag_categories.id", ondelete="SET NULL"), nullable=True
    )
    parent_id: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("tags.id", ondelete="SET NULL"), nullable=True, index=True
    )
    level: Mapped[int] = mapped_column(Integer, default=0)
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_ms: Mapped[int] = mapped_column(BigInteger)

    category: Mapped[TagCategory | None] = relationship(lazy="joined")


class PersonTag(OrgScoped, Base):
    __tablename__ = "person_tags"
    __table_args__ = (UniqueConstraint("tag_id", "person_id", name="uq_person_tags_tag_person"),)

    id: Mapped[str] = id_column()
    tag_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tags.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    start_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class ProjectTag(OrgScoped, Base):
    __tablename__ = "project_tags"
    __table_args__ = (
        UniqueConstraint("tag_id", "project_id", name="uq_project_tags_tag_project"),
    )

    id: Mapped[str] = id_column()
    tag_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tags.id", ondelete="CASCADE"), index=True
    )
    project_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    start_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
