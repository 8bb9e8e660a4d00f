"""The tagging of people, projects and tasks (from a start time on, when given), one table of
rows (`TAGGINGS`) from which every operation is derived: tag<Kind>, untag<Kind> and
resetTagged<Kind>s (the tags permission), editTagStartTime (moves the start of any tagging,
named by its relation id), and the reads: a tag's `relations.tagged.<kinds>` and an item's
`relations.taggedBy`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, func, select

from service.access import TAGS, relation, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id, get_in_org
from service.models import Person, PersonTag, Project, ProjectTag, Tag, Task, TaskTag
from service.structure import raw_relation

require_permission = requirer(TAGS)

mutation = MutationType()
tag_relations = ObjectType("SvcTagRelations")
tagged_type = ObjectType("SvcTagged")


@dataclass(frozen=True)
class Tagging:
    kind: str  # Person | Project | Task: tag<Kind>, untag<Kind>, resetTagged<Kind>s
    row_model: Any
    item_model: Any
    item_column: str
    argument: str  # personId | projectId | taskId
    label: str
    named: str  # how an item is named in an error ({name})
    tagged_key: str  # the tag's relations.tagged.<key>
    relations_type: str  # the item's relations type (its `taggedBy`)


TAGGINGS: tuple[Tagging, ...] = (
    Tagging("Person", PersonTag, Person, "person_id", "personId", "person", "{name}",
            "persons", "SvcPersonRelations"),
    Tagging("Project", ProjectTag, Project, "project_id", "projectId", "project",
            'project "{name}"', "projects", "SvcProjectRelations"),
    Tagging("Task", TaskTag, Task, "task_id", "taskId", "task", 'task "{name}"', "tasks",
            "SvcTaskRelations"),
)


def _relation(row: Any, tagging: Tagging) -> dict[str, Any]:
    return raw_relation(row.id, row.tag_id, "tagged", getattr(row, tagging.item_column),
                        "taggedBy", row.start_ms)


async def _active_tag(context: RequestContext, tag_id: str) -> Tag:
    tag = await by_id(context, Tag, tag_id, "tagId")
    if tag.archived:
        raise BadInput("tagId", f'tag "{tag.name}" is archived')
    return tag


def _bind(tagging: Tagging) -> None:
    model = tagging.row_model
    item_column = getattr(model, tagging.item_column)

    async def pair(context: RequestContext, tag: Tag, item_id: str) -> tuple[Any, Any]:
        item = await get_in_org(context.session, tagging.item_model, context.org_id, item_id,
                                tagging.argument, tagging.label)
        row = (await context.session.scalars(
            select(model).where(model.tag_id == tag.id, item_column == item.id))).first()
        return item, row

    async def resolve_tag(_root: Any, info: Any, tagId: str, startTime: int | None = None,
                          **kwargs: Any) -> dict[str, Any]:
        """The item carries the tag (from `startTime` on, when given); tagging again moves
        the start."""
        context: RequestContext = info.context
        require_permission(context)
        tag = await _active_tag(context, tagId)
        item, row = await pair(context, tag, kwargs[tagging.argument])
        if row is None:
            row = model(organisation_id=context.org_id, tag_id=tag.id,
                        **{tagging.item_column: item.id})
            context.session.add(row)
        row.start_ms = startTime
        await context.session.flush()
        return _relation(row, tagging)

    async def resolve_untag(_root: Any, info: Any, tagId: str, **kwargs: Any) -> dict[str, Any]:
        context: RequestContext = info.context
        require_permission(context)
        tag = await by_id(context, Tag, tagId, "tagId")
        item, row = await pair(context, tag, kwargs[tagging.argument])
        if row is None:
            raise BadInput(tagging.argument, tagging.named.format(name=item.name)
                           + f' does not carry tag "{tag.name}"')
        result = _relation(row, tagging)
        await context.session.delete(row)
        return result

    async def resolve_reset(_root: Any, info: Any, tagId: str) -> Tag:
        context: RequestContext = info.context
        require_permission(context)
        tag = await by_id(context, Tag, tagId, "tagId")
        await context.session.execute(delete(model).where(
            model.organisation_id == context.org_id, model.tag_id == tag.id))
        return tag

    async def resolve_tagged(tag: Tag, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        item = tagging.item_model
        rows = await context.session.execute(
            select(model, item).join(item, item.id == item_column)
            .where(model.organisation_id == context.org_id, model.tag_id == tag.id)
            .order_by(func.lower(item.name), item.id))
        return [relation(row.id, value, row.start_ms) for row, value in rows.unique().tuples()]

    async def resolve_tagged_by(item: Any, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        rows = await context.session.execute(
            select(model, Tag).join(Tag, Tag.id == model.tag_id)
            .where(model.organisation_id == context.org_id, item_column == item.id)
            .order_by(func.lower(Tag.name), Tag.id))
        return [relation(row.id, tag, row.start_ms) for row, tag in rows.unique().tuples()]

    mutation.set_field(f"tag{tagging.kind}", resolve_tag)
    mutation.set_field(f"untag{tagging.kind}", resolve_untag)
    mutation.set_field(f"resetTagged{tagging.kind}s", resolve_reset)
    tagged_type.set_field(tagging.tagged_key, resolve_tagged)
    _readers.append((tagging.relations_type, resolve_tagged_by))


_readers: list[tuple[str, Any]] = []
for _tagging in TAGGINGS:
    _bind(_tagging)
_item_relations = []
for _type_name, _resolver in _readers:
    _object = ObjectType(_type_name)
    _object.set_field("taggedBy", _resolver)
    _item_relations.append(_object)


@tag_relations.field("tagged")
def resolve_tag_tagged(tag: Tag, _info: Any) -> Tag:
    return tag


@mutation.field("editTagStartTime")
async def resolve_edit_tag_start_time(_root: Any, info: Any, relationId: str,
                                      startTime: int | None = None) -> dict[str, Any]:
    """Moves the start of one tagging (of a person, a project or a task); null: always."""
    context: RequestContext = info.context
    require_permission(context)
    for tagging in TAGGINGS:
        model = tagging.row_model
        row = await context.session.scalar(select(model).where(
            model.organisation_id == context.org_id, model.id == relationId))
        if row is not None:
            row.start_ms = startTime
            await context.session.flush()
            return _relation(row, tagging)
    raise BadInput("relationId", f"no tagging {relationId!r} in this organisation")


BINDABLES = [mutation, tag_relations, tagged_type, *_item_relations]
