"""Custom fields: their definitions (type, options, visibility), their values on persons,
projects, tasks, tags, time records and absence types, and their links ("Who has access?"
people and tags; the projects, tasks and time records a field is assigned to).

A value or link row names its entity in the one column of its kind (the others null) and
repeats the id in `entity_id` / `member_id`, so that one unique constraint makes a repeated
add (a retry, a second process) impossible to store twice; deleting the entity or the field
deletes the row.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from service.model_base import Base, OrgScoped, id_column

# entityType -> (column, table) of the entity a value or link names.
ENTITY_COLUMNS: dict[str, tuple[str, str]] = {
    "person": ("person_id", "persons"),
    "project": ("project_id", "projects"),
    "task": ("task_id", "tasks"),
    "tag": ("tag_id", "tags"),
    "timeRecord": ("time_record_id", "time_records"),
    "absenceType": ("absence_type_id", "absence_types"),
}


def _entity(table: str) -> Mapped[str | None]:
    return mapped_column(
        String(24), ForeignKey(f"{table}.id", ondelete="CASCADE"), nullable=True, index=True
    )


def _field_column() -> Mapped[str]:
    return mapped_column(
        String(24), ForeignKey("custom_fields.id", ondelete="CASCADE"), index=True
    )


class CustomField(OrgScoped, Base):
    __tablename__ = "custom_fields"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    field_type: Mapped[str] = mapped_column(String(16))
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    # The type's options that differ from their defaults (custom_fields_registry).
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # SvcCustomFieldVisibility (custom_fields/visibility_rules.py).
    visibility: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class CustomFieldValue(OrgScoped, Base):
    __tablename__ = "custom_field_values"
    __table_args__ = (
        UniqueConstraint("custom_field_id", "entity_type", "entity_id",
                         name="uq_custom_field_values_field_entity"),
    )

    id: Mapped[str] = id_column()
    custom_field_id: Mapped[str] = _field_column()
    entity_type: Mapped[str] = mapped_column(String(16))
    entity_id: Mapped[str] = mapped_column(String(24))
    person_id: Mapped[str | None] = _entity("persons")
    project_id: Mapped[str | None] = _entity("projects")
    task_id: Mapped[str | None] = _entity("tasks")
    tag_id: Mapped[str | None] = _entity("tags")
    time_record_id: Mapped[str | None] = _entity("time_records")
    absence_type_id: Mapped[str | None] = _entity("absence_types")
    text_value: Mapped[str | None] = mapped_column(Text, nullable=True)
    number_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    date_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    date_time_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    url_value: Mapped[str | None] = mapped_column(Text, nullable=True)
    boolean_value: Mapped[bool | None] = mapped_column(Boolean, nullable=True)

    custom_field: Mapped[CustomField] = relationship(lazy="joined")


class CustomFieldLink(OrgScoped, Base):
    """A person or tag on a field's "Who has access?" list, or a project, task or time
    record the field is assigned to (`customFieldsOf<Kind>`)."""

    __tablename__ = "custom_field_links"
    __table_args__ = (
        UniqueConstraint("custom_field_id", "member_id",
                         name="uq_custom_field_links_field_member"),
    )

    id: Mapped[str] = id_column()
    custom_field_id: Mapped[str] = _field_column()
    member_id: Mapped[str] = mapped_column(String(24))
    person_id: Mapped[str | None] = _entity("persons")
    tag_id: Mapped[str | None] = _entity("tags")
    project_id: Mapped[str | None] = _entity("projects")
    task_id: Mapped[str | None] = _entity("tasks")
    time_record_id: Mapped[str | None] = _entity("time_records")
