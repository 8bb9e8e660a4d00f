"""Helpers shared by the structure areas (projects, tasks, tags): admin checks, trees,
name matching, the archived switch and SvcRawRelation results."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from ariadne import MutationType, QueryType
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import ColumnElement

from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext


def require_admin(context: RequestContext, what: str = "edit the structure") -> None:
    """Structure (projects, tasks, tags and their categories) is edited by admins."""
    if not context.is_admin:
        raise PermissionDenied(f"only an administrator may {what}")


def name_contains(column: InstrumentedAttribute[str], value: str) -> ColumnElement[bool]:
    """Case-insensitive substring match of a name column."""
    return func.lower(column).contains(value.strip().lower(), autoescape=True)


def active_clause(
    archived_column: InstrumentedAttribute[bool],
    archived: bool | None,
    filters: Sequence[Mapping[str, Any] | None] | None = None,
) -> ColumnElement[bool] | None:
    """List queries return only active items unless `archived: true` asks for the archived too
    (or a filter object matches on `archived` itself)."""
    if archived or any(item and item.get("archived") is not None for item in filters or []):
        return None
    return archived_column.is_(False)


async def parent_map(
    session: AsyncSession, model: Any, org_id: str
) -> dict[str, str | None]:
    """{id: parent_id} of every item of a tree table in the organisation."""
    rows = await session.execute(
        select(model.id, model.parent_id).where(model.organisation_id == org_id)
    )
    return {row[0]: row[1] for row in rows}


def children_map(parents: Mapping[str, str | None]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for item_id, parent_id in parents.items():
        if parent_id is not None:
            children.setdefault(parent_id, []).append(item_id)
    return children


def descendants(parents: Mapping[str, str | None], roots: Iterable[str]) -> list[str]:
    """The roots' descendants (not the roots themselves), breadth first."""
    children = children_map(parents)
    found: list[str] = []
    seen: set[str] = set(roots)
    queue = list(roots)
    while queue:
        current = queue.pop(0)
        for child in children.get(current, []):
            if child not in seen:
                seen.add(child)
                found.append(child)
                queue.append(child)
    return found


def ancestors(parents: Mapping[str, str | None], item_id: str) -> list[str]:
    """Parent, grandparent, ... of an item (nearest first)."""
    found: list[str] = []
    current = parents.get(item_id)
    while current is not None and current not in found and current != item_id:
        found.append(current)
        current = parents.get(current)
    return found


def check_new_parent(
    parents: Mapping[str, str | None], item_id: str, parent_id: str | None, what: str
) -> None:
    """Refuses a parent that is the item itself or one of its descendants."""
    if parent_id is None:
        return
    if parent_id == item_id or parent_id in descendants(parents, [item_id]):
        raise BadInput("parentId", f"a {what} cannot be moved under itself or its own sub{what}")


def raw_relation(
    relation_id: str,
    source_id: str,
    source_key: str,
    target_id: str,
    target_key: str,
    start_ms: int | None = None,
) -> dict[str, Any]:
    """A SvcRawRelation: `source.sourceKey` links to `target.targetKey`."""
    return {
        "id": relation_id,
        "sourceId": source_id,
        "sourceKey": source_key,
        "targetId": target_id,
        "targetKey": target_key,
        "signature": f"{source_id}.{source_key}-{target_id}.{target_key}",
        "startTime": start_ms,
    }


def check_unique_ids(ids: list[str], argument: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(ids):
        if value in seen:
            raise BadInput(f"{argument}[{index}]", f"{value!r} is listed twice")
        seen.add(value)


ListingBuilder = Callable[[RequestContext, dict[str, Any]], Awaitable[Any]]


def bind_listing(
    query: QueryType, id_column: Any, build: ListingBuilder, *, get: str, count: str,
    ids: str | None
) -> None:
    """getXs, countXs and filterXIds (when the schema has it): the same arguments (turned
    into one SELECT by `build`), returning the rows, their number, or their ids."""

    async def get_all(_root: Any, info: Any, **args: Any) -> list[Any]:
        context: RequestContext = info.context
        return list((await context.session.scalars(await build(context, args))).unique())

    async def count_all(_root: Any, info: Any, **args: Any) -> int:
        context: RequestContext = info.context
        statement = await build(context, args)
        total = await context.session.scalar(
            select(func.count()).select_from(statement.order_by(None).subquery())
        )
        return int(total or 0)

    async def filter_ids(_root: Any, info: Any, **args: Any) -> list[str]:
        context: RequestContext = info.context
        statement = await build(context, args)
        return list(await context.session.scalars(statement.with_only_columns(id_column)))

    query.set_field(get, get_all)
    query.set_field(count, count_all)
    if ids is not None:
        query.set_field(ids, filter_ids)


ArchiveSetter = Callable[[RequestContext, Sequence[str], str, bool, bool], Awaitable[list[Any]]]


def bind_archiving(mutation: MutationType, set_archived: ArchiveSetter, entity: str) -> None:
    """archiveX / archiveXs (with the subtree) and unarchiveX / unarchiveXs (only those named),
    through the entity's own `set_archived(context, ids, argument, archived, subtree)`."""

    async def archive_one(_root: Any, info: Any, id: str) -> list[Any]:
        return await set_archived(info.context, [id], "id", True, True)

    async def archive_many(_root: Any, info: Any, ids: list[str]) -> list[Any]:
        return await set_archived(info.context, ids, "ids", True, True)

    async def unarchive_one(_root: Any, info: Any, id: str) -> Any:
        return (await set_archived(info.context, [id], "id", False, False))[0]

    async def unarchive_many(_root: Any, info: Any, ids: list[str]) -> list[Any]:
        return await set_archived(info.context, ids, "ids", False, False)

    mutation.set_field(f"archive{entity}", archive_one)
    mutation.set_field(f"archive{entity}s", archive_many)
    mutation.set_field(f"unarchive{entity}", unarchive_one)
    mutation.set_field(f"unarchive{entity}s", unarchive_many)


FlatArchiveSetter = Callable[[RequestContext, Sequence[str], str, bool], Awaitable[list[Any]]]


def bind_flat_archiving(mutation: MutationType, set_archived: FlatArchiveSetter,
                        entity: str) -> None:
    """archiveX / archiveXs / unarchiveX / unarchiveXs of an entity without a subtree: the
    singular ones answer the item itself, through `set_archived(context, ids, argument,
    archived)`."""

    async def archive_one(_root: Any, info: Any, id: str) -> Any:
        return (await set_archived(info.context, [id], "id", True))[0]

    async def archive_many(_root: Any, info: Any, ids: list[str]) -> list[Any]:
        return await set_archived(info.context, ids, "ids", True)

    async def unarchive_one(_root: Any, info: Any, id: str) -> Any:
        return (await set_archived(info.context, [id], "id", False))[0]

    async def unarchive_many(_root: Any, info: Any, ids: list[str]) -> list[Any]:
        return await set_archived(info.context, ids, "ids", False)

    mutation.set_field(f"archive{entity}", archive_one)
    mutation.set_field(f"archive{entity}s", archive_many)
    mutation.set_field(f"unarchive{entity}", unarchive_one)
    mutation.set_field(f"unarchive{entity}s", unarchive_many)


async def oldest_in_org(session: AsyncSession, model: Any, org_id: str) -> Any | None:
    """The organisation's first-made row of `model` (ids are time-ordered), or None."""
    return (
        await session.scalars(
            select(model).where(model.organisation_id == org_id).order_by(model.id).limit(1)
        )
    ).first()


async def oldest_category_or_new(
    session: AsyncSession, model: Any, org_id: str, name: str
) -> Any:
    """The category for things added without one: the organisation's oldest category of
    `model`, or a new one named `name` when it has none yet."""
    first = await oldest_in_org(session, model, org_id)
    if first is not None:
        return first
    category = model(organisation_id=org_id, name=name, level_names=[])
    session.add(category)
    await session.flush()
    return category


async def categories_by_name(session: AsyncSession, model: Any, org_id: str) -> list[Any]:
    """The organisation's categories of `model`, by name (case-insensitive), then id."""
    rows = await session.scalars(
        select(model)
        .where(model.organisation_id == org_id)
        .order_by(func.lower(model.name), model.id)
    )
    return list(rows)


_cte_names = itertools.count()


def subtree(model: Any, org_id: str, ids: Sequence[str | None]) -> Select[Any]:
    """The ids of the rows named (projects, tags: a `parent_id` tree) and of every row below
    them, as one recursive query."""
    name = f"{model.__name__.lower()}_tree_{next(_cte_names)}"
    wanted = [value for value in ids or [] if value is not None]
    base = (
        select(model.id.label("id"))
        .where(model.organisation_id == org_id, model.id.in_(wanted))
        .cte(name, recursive=True)
    )
    child = select(model.id).where(model.organisation_id == org_id, model.parent_id == base.c.id)
    return select(base.union(child).c.id)
