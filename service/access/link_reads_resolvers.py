"""The links of service/access/links.py's table read back as relations, derived from its
rows (those marked `readable`): the member's side (`<member>.relations.<sourceKey>`, e.g. a person's
`scheduleTypes`) and the item's (`<item>.relations.<targetKey>`, e.g. a schedule type's
`scheduleTypesOfPerson`); and the `relations` attribute of projects and tasks, and a tag's
`memberOfTasks` (the tasks offered to it)."""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType
from sqlalchemy import func, select

from service.access.links import LINKS, MEMBER_COLUMNS, MEMBER_MODELS, Link, relation
from service.graphql.context import RequestContext
from service.models import Tag, Task, TaskTagAccess

RELATIONS_TYPES = {"Person": "SvcPersonRelations", "Tag": "SvcTagRelations",
                   "Project": "SvcProjectRelations", "Task": "SvcTaskRelations",
                   "ScheduleType": "SvcScheduleTypeRelations"}
_objects: dict[str, ObjectType] = {}


def relations_object(type_name: str) -> ObjectType:
    if type_name not in _objects:
        _objects[type_name] = ObjectType(type_name)
    return _objects[type_name]


def _by_name(model: Any) -> tuple[Any, Any]:
    return func.lower(model.name), model.id


def _bind_reads(link: Link) -> None:
    row = link.row_model
    member_model = MEMBER_MODELS[link.member_argument][0]
    member_column = getattr(row, MEMBER_COLUMNS[link.member_argument])
    item_column = getattr(row, link.item_column)

    async def items_of(member: Any, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        rows = await context.session.execute(
            select(row.id, link.item_model)
            .join(link.item_model, link.item_model.id == item_column)
            .where(row.organisation_id == context.org_id, member_column == member.id)
            .order_by(*_by_name(link.item_model)))
        return [relation(row_id, item) for row_id, item in rows.unique().tuples()]

    async def members_of(item: Any, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        rows = await context.session.execute(
            select(row.id, member_model)
            .join(member_model, member_model.id == member_column)
            .where(row.organisation_id == context.org_id, item_column == item.id)
            .order_by(*_by_name(member_model)))
        return [relation(row_id, member) for row_id, member in rows.unique().tuples()]

    member_kind = member_model.__name__
    relations_object(RELATIONS_TYPES[member_kind]).set_field(link.source_key, items_of)
    item_kind = link.item_model.__name__
    relations_object(RELATIONS_TYPES[item_kind]).set_field(link.target_key, members_of)


for _link in LINKS:
    if _link.readable:
        _bind_reads(_link)

project_type = ObjectType("SvcProject")
task_type = ObjectType("SvcTask")
tag_type = ObjectType("SvcTag")


@project_type.field("relations")
@task_type.field("relations")
def resolve_relations(item: Any, _info: Any) -> Any:
    return item


@tag_type.field("memberOfTasks")
async def resolve_member_of_tasks(tag: Tag, info: Any) -> list[Task]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(Task).join(TaskTagAccess, TaskTagAccess.task_id == Task.id)
        .where(TaskTagAccess.organisation_id == context.org_id, TaskTagAccess.tag_id == tag.id)
        .order_by(*_by_name(Task)))
    return list(rows.unique())


BINDABLES: list[Any] = [*_objects.values(), project_type, task_type, tag_type]
