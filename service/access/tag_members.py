"""Who carries which tag (tagPerson / tagProject); used by the approval workflow and filters.

A tag includes its descendant tags: a person tagged "Backend" (child of "Engineering") counts
as tagged "Engineering".
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import PersonTag, Tag
from service.organisation.settings_cascade import person_tags
from service.structure import ancestors, descendants, parent_map


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
