"""Who carries which tag (tagPerson / tagProject); used by the approval workflow, filters and the
settings cascade (a person's tags, read once per session: `person_tags`).

A tag includes its descendant tags: a person tagged "Backend" (child of "Engineering") counts
as tagged "Engineering".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import Table, bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.in_lists import in_lists
from service.as_loaded import Columns
from service.models import PersonTag, Tag, TagCategory
from service.read_memo import memo
from service.structure import ancestors, descendants, parent_map

# Built once (every time-record write and every person's setting asks it): the organisation
# and the person are parameters. Core columns made entities by `as_loaded`, each tag with its
# category as the ORM's joined loading gives it: the ORM's loading cost more than the read.
_TAG = Columns(Tag, prefix="t_", relations=("category",))
_CATEGORY = Columns(TagCategory, prefix="c_")
_TAGS = cast(Table, Tag.__table__)
_CATEGORIES = cast(Table, TagCategory.__table__)
_PERSONS_TAGS = cast(Table, PersonTag.__table__)


def _tags_of(person: Any, *extra: Any) -> Any:
    """The tags (with their categories) of the people `person` matches, and `extra` columns."""
    return (
        select(*_TAG.labelled, *_CATEGORY.labelled, *extra)
        .select_from(_TAGS)
        .join(_PERSONS_TAGS, _PERSONS_TAGS.c.tag_id == _TAGS.c.id)
        .outerjoin(_CATEGORIES, _CATEGORIES.c.id == _TAGS.c.category_id)
        .where(_PERSONS_TAGS.c.organisation_id == bindparam("tags_org"), person)
    )


_PERSON_TAGS = _tags_of(_PERSONS_TAGS.c.person_id == bindparam("tags_person"))
# The same for many people at once, each row naming its person (after the tag's columns).
_MANY_PERSONS_TAGS = _tags_of(
    _PERSONS_TAGS.c.person_id.in_(bindparam("tags_people", expanding=True)),
    _PERSONS_TAGS.c.person_id)


def _tags_key(org_id: str, person_id: str) -> tuple[str, str, str]:
    return ("person_tags", org_id, person_id)


def remember_untagged(session: AsyncSession, org_id: str, person_id: str) -> None:
    """Note that the person carries no tag, as a read in this session has just found (the
    authentication asks it of the caller with their key): `person_tags` then reads nothing."""
    memo(session)[_tags_key(org_id, person_id)] = []


async def person_tags(session: AsyncSession, org_id: str, person_id: str) -> list[Tag]:
    """The person's tags (remembered until the session writes: each setting asks)."""
    remembered = memo(session)
    key = _tags_key(org_id, person_id)
    found: list[Tag] | None = remembered.get(key)
    if found is None:  # (the session flushes first, as for any statement it executes)
        rows = await session.execute(_PERSON_TAGS, {"tags_org": org_id, "tags_person": person_id})
        found = remembered[key] = [_tag_of(session, row) for row in rows]
    return list(found)


async def remember_tags_of(session: AsyncSession, org_id: str,
                           person_ids: Iterable[str]) -> None:
    """Read the tags of many people in a statement per IN list, remembered as
    `person_tags` remembers one person's: a page of people whose settings are asked (each
    setting cascades through its person's tags) costs one read, not one a person."""
    remembered = memo(session)
    wanted = [person_id for person_id in person_ids
              if _tags_key(org_id, person_id) not in remembered]
    for chunk in in_lists(wanted):
        found: dict[str, list[Tag]] = {person_id: [] for person_id in chunk}
        rows = await session.execute(_MANY_PERSONS_TAGS,
                                     {"tags_org": org_id, "tags_people": chunk})
        for row in rows:
            found[row[-1]].append(_tag_of(session, row))
        for person_id, tags in found.items():
            remembered[_tags_key(org_id, person_id)] = tags


def _tag_of(session: AsyncSession, row: Any) -> Tag:
    category = _CATEGORY.build(session, row, _TAG.width)
    tag = _TAG.build(session, row, 0, {"category": category})
    assert tag is not None  # an inner join: the tag is there
    return tag


async def tagged_person_ids(
    session: AsyncSession, org_id: str, tag_ids: Iterable[str], at_ms: int | None = None
) -> set[str]:
    """People carrying any of the tags or one of their descendant tags (from `startTime` on,
    when `at_ms` is given)."""
    roots = list(tag_ids)
    if not roots:
        return set()
    parents = await parent_map(session, Tag, org_id)
    wanted = set(roots) | set(descendants(parents, roots))
    statement = select(PersonTag.person_id).where(
        PersonTag.organisation_id == org_id, PersonTag.tag_id.in_(sorted(wanted))
    )
    if at_ms is not None:
        statement = statement.where(or_(PersonTag.start_ms.is_(None), PersonTag.start_ms <= at_ms))
    return set(await session.scalars(statement))


async def person_tag_ids(
    session: AsyncSession, org_id: str, person_id: str, with_ancestors: bool = True
) -> set[str]:
    """Tags the person carries (and, by default, their ancestor tags)."""
    direct = {tag.id for tag in await person_tags(session, org_id, person_id)}
    if not with_ancestors or not direct:
        return direct
    parents = await parent_map(session, Tag, org_id)
    return direct | {a for tag_id in direct for a in ancestors(parents, tag_id)}
