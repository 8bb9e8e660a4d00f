"""Loading entities of the caller's organisation by id, with errors that name the argument;
`by_id` for a resolver, naming the entity after its class (`TaskStatus`: "task status")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import NotFound

T = TypeVar("T")


class InOrganisation(Protocol):
    """What `by_id` reads of a resolver's context (service.graphql.context.RequestContext)."""

    @property
    def session(self) -> AsyncSession: ...

    @property
    def org_id(self) -> str: ...


# Built once per model (building a statement and its cache key costs more than running it):
# the id(s) and the organisation are parameters.
_BY_ID: dict[tuple[type[Any], bool], Any] = {}
_BY_IDS: dict[type[Any], Any] = {}


def _by_id(model: type[Any], for_update: bool) -> Any:
    statement = _BY_ID.get((model, for_update))
    if statement is None:
        statement = select(model).where(
            model.id == bindparam("lookup_id"),
            model.organisation_id == bindparam("lookup_org"),
        )
        if for_update:
            statement = statement.with_for_update()
        _BY_ID[(model, for_update)] = statement
    return statement


def _by_ids(model: type[Any]) -> Any:
    statement = _BY_IDS.get(model)
    if statement is None:
        statement = _BY_IDS[model] = select(model).where(
            model.id.in_(bindparam("lookup_ids", expanding=True)),
            model.organisation_id == bindparam("lookup_org"),
        )
    return statement


async def get_in_org(
    session: AsyncSession,
    model: type[T],
    org_id: str,
    entity_id: str | None,
    argument: str = "id",
    what: str | None = None,
    *,
    for_update: bool = False,
) -> T:
    """The entity with that id in the organisation, or NotFound naming `argument`."""
    label = what or getattr(model, "__tablename__", "item").rstrip("s").replace("_", " ")
    if entity_id is None:
        raise NotFound(argument, entity_id, label)
    statement = _by_id(model, for_update)
    found = (
        await session.scalars(statement, {"lookup_id": entity_id, "lookup_org": org_id})
    ).unique().one_or_none()
    if found is None:
        raise NotFound(argument, entity_id, label)
    return found  # type: ignore[no-any-return]


async def get_many_in_org(
    session: AsyncSession,
    model: type[T],
    org_id: str,
    entity_ids: Sequence[str | None] | None,
    argument: str = "ids",
    what: str | None = None,
) -> list[T]:
    """All of them, in the order given, or NotFound naming `argument[i]` for the first missing."""
    ids = list(entity_ids or [])
    label = what or getattr(model, "__tablename__", "item").rstrip("s").replace("_", " ")
    for index, value in enumerate(ids):
        if value is None:
            raise NotFound(f"{argument}[{index}]", value, label)
    found = {
        item.id: item  # type: ignore[attr-defined]
        for item in (
            await session.scalars(_by_ids(model), {"lookup_ids": ids, "lookup_org": org_id})
        ).unique()
    }
    for index, value in enumerate(ids):
        if value not in found:
            raise NotFound(f"{argument}[{index}]", value, label)
    return [found[value] for value in ids if value is not None]


async def by_id(context: InOrganisation, model: type[T], entity_id: str | None,
                argument: str = "id") -> T:
    """The caller's organisation's entity, or NotFound naming `argument` and the entity as its
    class reads in words."""
    what = re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()
    return await get_in_org(context.session, model, context.org_id, entity_id, argument, what)
