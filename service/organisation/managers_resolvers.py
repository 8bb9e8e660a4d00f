"""Managers of tags and tasks, and the resets of what one person manages, from one table of
rows (`MANAGED`): makeManagerOf<Kind>, removeManagerOf<Kind>, resetManaged<Kind>s and the
reads (a person's `relations.managerOf.<kinds>`, an item's `relations.managedBy`). People's
and projects' make / remove were written before (person_managers.py, project_managers.py);
their rows here add only what was missing. Each kind is edited with its permission (people,
projects, tags, tasks: administrators have them all)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from service.access import PEOPLE, PROJECTS, TAGS, TASKS, relation
from service.access import require as require_permission
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import (
    Person,
    PersonManager,
    Project,
    ProjectManager,
    Tag,
    TagManager,
    Task,
    TaskManager,
)
from service.structure import raw_relation

mutation = MutationType()
manager_of_type = ObjectType("SvcPersonManagerOf")


@dataclass(frozen=True)
class Managed:
    kind: str  # Tag: makeManagerOfTag, removeManagerOfTag, resetManagedTags
    row_model: Any
    item_model: Any
    item_column: str
    manager_column: str
    argument: str
    label: str
    permission: str
    manager_of_key: str | None  # the person's relations.managerOf.<key> (None: read elsewhere)
    relations_type: str | None  # the item's relations type whose managedBy is read here
    # (People's manager reads, both sides, are person_managers.py's.)
    make_and_remove: bool = True  # False: bound by an older module
    reset: bool = True


MANAGED: tuple[Managed, ...] = (
    Managed("Tag", TagManager, Tag, "tag_id", "person_id", "tagId", "tag", TAGS,
            "tags", "SvcTagRelations"),
    Managed("Task", TaskManager, Task, "task_id", "person_id", "taskId", "task",
            TASKS, "tasks", "SvcTaskRelations"),
    Managed("Person", PersonManager, Person, "person_id", "manager_id", "personId", "person",
            PEOPLE, None, None, make_and_remove=False),
    Managed("Project", ProjectManager, Project, "project_id", "person_id", "projectId",
            "project", PROJECTS, "projects", "SvcProjectRelations",
            make_and_remove=False, reset=False),
)


def _relation(row: Any, managed: Managed) -> dict[str, Any]:
    return raw_relation(row.id, getattr(row, managed.manager_column), "managerOf",
                        getattr(row, managed.item_column), "managedBy")


def _bind(managed: Managed) -> None:
    model = managed.row_model
    item_column = getattr(model, managed.item_column)
    manager_column = getattr(model, managed.manager_column)

    def require(context: RequestContext) -> None:
        require_permission(context, managed.permission, f"choose the managers of a "
                            f"{managed.label}")

    async def load(context: RequestContext, manager_id: str, item_id: str
                   ) -> tuple[Person, Any, Any]:
        manager = await get_in_org(context.session, Person, context.org_id, manager_id,
                                   "managerId", "person")
        item = await get_in_org(context.session, managed.item_model, context.org_id, item_id,
                                managed.argument, managed.label)
        row = (await context.session.scalars(select(model).where(
            item_column == item.id, manager_column == manager.id))).first()
        return manager, item, row

    async def resolve_make(_root: Any, info: Any, managerId: str, **kwargs: Any
                           ) -> dict[str, Any]:
        context: RequestContext = info.context
        require(context)
        manager, item, row = await load(context, managerId, kwargs[managed.argument])
        if manager.archived:
            raise BadInput("managerId", f"{manager.name} is archived")
        if row is None:
            row = model(organisation_id=context.org_id, **{managed.item_column: item.id,
                                                           managed.manager_column: manager.id})
            try:
                async with context.session.begin_nested():
                    context.session.add(row)
                    await context.session.flush()
            except IntegrityError:  # another request made the same manager meanwhile
                row = (await context.session.scalars(select(model).where(
                    item_column == item.id, manager_column == manager.id))).one()
        return _relation(row, managed)

    async def resolve_remove(_root: Any, info: Any, managerId: str, **kwargs: Any
                             ) -> dict[str, Any]:
        context: RequestContext = info.context
        require(context)
        manager, item, row = await load(context, managerId, kwargs[managed.argument])
        if row is None:
            raise BadInput("managerId", f'{manager.name} is not a manager of {managed.label} '
                                        f'"{item.name}"')
        result = _relation(row, managed)
        await context.session.delete(row)
        return result

    async def resolve_reset(_root: Any, info: Any, managerId: str) -> Person:
        context: RequestContext = info.context
        require(context)
        manager = await get_in_org(context.session, Person, context.org_id, managerId,
                                   "managerId", "person")
        await context.session.execute(delete(model).where(
            model.organisation_id == context.org_id, manager_column == manager.id))
        return manager

    async def resolve_managed(person: Person, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        item = managed.item_model
        rows = await context.session.execute(
            select(model.id, item).join(item, item.id == item_column)
            .where(model.organisation_id == context.org_id, manager_column == person.id)
            .order_by(func.lower(item.name), item.id))
        return [relation(row_id, value) for row_id, value in rows.unique().tuples()]

    async def resolve_managed_by(item: Any, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        rows = await context.session.execute(
            select(model.id, Person).join(Person, Person.id == manager_column)
            .where(model.organisation_id == context.org_id, item_column == item.id)
            .order_by(func.lower(Person.name), Person.id))
        return [relation(row_id, person) for row_id, person in rows.unique().tuples()]

    if managed.make_and_remove:
        mutation.set_field(f"makeManagerOf{managed.kind}", resolve_make)
        mutation.set_field(f"removeManagerOf{managed.kind}", resolve_remove)
    if managed.reset:
        mutation.set_field(f"resetManaged{managed.kind}s", resolve_reset)
    if managed.manager_of_key is not None:
        manager_of_type.set_field(managed.manager_of_key, resolve_managed)
    if managed.relations_type is not None:
        reads = ObjectType(managed.relations_type)
        reads.set_field("managedBy", resolve_managed_by)
        _item_reads.append(reads)


_item_reads: list[ObjectType] = []
for _managed in MANAGED:
    _bind(_managed)

BINDABLES = [mutation, manager_of_type, *_item_reads]
