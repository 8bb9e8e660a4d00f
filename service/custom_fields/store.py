"""Custom fields read from the database, for the resolvers of definitions, values and links:
a field in the organisation, who has access to it (the pure rule `rules.access.has_access`
over its "Who has access?" list and the account's "Show all custom fields" switch), the
entity a value is put on and what the visibility rule needs of it, and the check that a
value may go there.

Definitions are edited with the `settings` permission. A value is edited by whoever may edit
its entity: a person's by the `people` permission, a project's, task's, tag's by the
`projects`, `tasks`, `tags` permission, an absence type's by `settings`, a time record's as
the record itself (its person, their managers, administrators, an approver by the timesheet's
status; the lock date and the approval workflow apply).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import (
    PEOPLE,
    PROJECTS,
    SETTINGS,
    TAGS,
    TASKS,
    VIEW,
    AccessItem,
    access_defaults,
    has,
    has_access,
    person_tag_ids,
    require,
    requirer,
)
from service.custom_fields.models import CustomField, CustomFieldLink
from service.custom_fields.visibility_rules import KINDS, Target, shows_on
from service.errors import BadInput, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import AbsenceType, Person, Project, Tag, Task, TimeRecord
from service.structure import ancestors, parent_map
from service.time_records import ANY, guard_edit, require_edit_access

require_permission = requirer(SETTINGS)

ENTITY_MODELS: dict[str, tuple[Any, str]] = {
    "person": (Person, "person"),
    "project": (Project, "project"),
    "task": (Task, "task"),
    "tag": (Tag, "tag"),
    "timeRecord": (TimeRecord, "time record"),
    "absenceType": (AbsenceType, "absence type"),
}
# The permission that edits each kind of entity (a time record: its person's edit rights).
ENTITY_PERMISSIONS = {"person": PEOPLE, "project": PROJECTS,
                      "task": TASKS, "tag": TAGS,
                      "absenceType": SETTINGS}


async def field_in_org(context: RequestContext, field_id: str | None, argument: str = "id"
                       ) -> CustomField:
    return await get_in_org(context.session, CustomField, context.org_id, field_id, argument,
                            "custom field")


async def links_of(session: AsyncSession, org_id: str, field_ids: list[str] | None = None
                   ) -> list[CustomFieldLink]:
    statement = select(CustomFieldLink).where(CustomFieldLink.organisation_id == org_id)
    if field_ids is not None:
        statement = statement.where(CustomFieldLink.custom_field_id.in_(field_ids))
    return list(await session.scalars(statement.order_by(CustomFieldLink.id)))


def access_item(field: CustomField, links: list[CustomFieldLink]) -> AccessItem:
    own = [link for link in links if link.custom_field_id == field.id]
    return AccessItem("customField", field.id, field.name,
                      frozenset(link.person_id for link in own if link.person_id),
                      frozenset(link.tag_id for link in own if link.tag_id))


async def accessible_field_ids(context: RequestContext, person_id: str) -> set[str]:
    """The fields the person has access to ("Who has access?")."""
    session = context.session
    fields = list(await session.scalars(
        select(CustomField).where(CustomField.organisation_id == context.org_id)))
    links = await links_of(session, context.org_id)
    tags = frozenset(await person_tag_ids(session, context.org_id, person_id))
    defaults = access_defaults(context.organisation)
    return {field.id for field in fields
            if has_access(access_item(field, links), person_id, tags, defaults)}


async def listable_field_ids(context: RequestContext) -> set[str] | None:
    """What a caller's lists show: every field with the settings permission (None), the
    fields they have access to otherwise."""
    if has(context, SETTINGS, VIEW):
        return None
    return await accessible_field_ids(context, context.person.id)


async def require_entity_edit(context: RequestContext, kind: str, entity: Any) -> None:
    if kind == "timeRecord":
        # A value is part of its record: the record's edit rights, lock date and workflow.
        await require_edit_access(context, entity.person_id, entity.start_ms)
        await guard_edit(context, entity, ANY)
        return
    require(context, ENTITY_PERMISSIONS[kind], f"edit a {kind}'s custom fields")


async def entity_of(context: RequestContext, kind: str, entity_id: str) -> Any:
    if kind not in KINDS:
        raise BadInput("entityType", f"must be one of {', '.join(KINDS)}")
    model, label = ENTITY_MODELS[kind]
    return await get_in_org(context.session, model, context.org_id, entity_id, "entityId",
                            label)


async def _with_ancestors(session: AsyncSession, model: Any, org_id: str, ids: set[str]
                          ) -> set[str]:
    if not ids:
        return set()
    parents = await parent_map(session, model, org_id)
    return ids | {found for item in ids for found in ancestors(parents, item)}


async def check_placement(context: RequestContext, field: CustomField, kind: str,
                          entity: Any) -> None:
    """Refuses (RuleViolation) a value of the field on an entity where the field does not
    show, whose person has no access to it, or outside the projects / tasks it is assigned
    to."""
    session = context.session
    links = await links_of(session, context.org_id, [field.id])
    target = Target(kind)
    if kind in ("project", "task"):
        target = Target(kind, frozenset([entity.category_id] if entity.category_id else []),
                        entity.level)
    elif kind == "timeRecord":
        task_categories = frozenset([entity.task.category_id]
                                    if entity.task and entity.task.category_id else [])
        target = Target(kind, frozenset(p.category_id for p in entity.projects
                                        if p.category_id), 0, task_categories,
                        entity.absence_id is not None,
                        any(link.time_record_id == entity.id for link in links))
    label = f"the custom field {field.name!r}"
    if not shows_on(field.visibility, target):
        raise RuleViolation(f"{label} does not show on this {ENTITY_MODELS[kind][1]} "
                            "(see its visibility)")
    person_id = entity.id if kind == "person" else getattr(entity, "person_id", None) \
        if kind == "timeRecord" else None
    if person_id is not None:
        tags = frozenset(await person_tag_ids(session, context.org_id, person_id))
        if not has_access(access_item(field, links), person_id, tags,
                          access_defaults(context.organisation)):
            raise RuleViolation(f"this person has no access to {label}")
    if kind != "timeRecord":
        return
    projects = {link.project_id for link in links if link.project_id}
    if projects:
        own = await _with_ancestors(session, Project, context.org_id,
                                    {p.id for p in entity.projects})
        if own.isdisjoint(projects):
            raise RuleViolation(f"{label} is assigned to other projects than this record's")
    tasks = {link.task_id for link in links if link.task_id}
    if tasks:
        own = await _with_ancestors(session, Task, context.org_id,
                                    {entity.task_id} if entity.task_id else set())
        if own.isdisjoint(tasks):
            raise RuleViolation(f"{label} is assigned to other tasks than this record's")
