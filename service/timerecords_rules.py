"""Rules on time records that need the database: "Record time on these plannings".

The setting lists the plannings (task categories) whose tasks a person may record time on.
It is stored under `taskCategories` in the settings of the organisation, of tags and of
persons (the reference schema's `edit…TimeSettingsTaskCategories` mutations). The most
specific level that sets it wins: the person, else the deepest of the person's tags that set
it (several tags at that depth: their lists together), else the organisation. Unset
everywhere: every task is allowed. A task with no category is on no listed planning, so it is
refused once a list applies.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import RuleViolation
from service.models import Organisation, Person, PersonTag, Tag, Task

SETTING = "taskCategories"
PLANNING_REFUSAL = (
    "The timesheet settings do not allow recording time on this task "
    "(its planning is not in the person's Record time on these plannings list)"
)


def _listed(settings: dict[str, Any] | None) -> set[str] | None:
    value = (settings or {}).get(SETTING)
    if value is None:
        return None
    return {str(item) for item in value}


async def allowed_task_categories(
    session: AsyncSession, organisation: Organisation, person: Person
) -> set[str] | None:
    """The task categories the person may record time on; None means every one."""
    own = _listed(person.settings)
    if own is not None:
        return own
    tags = (
        await session.scalars(
            select(Tag).join(PersonTag, PersonTag.tag_id == Tag.id).where(
                PersonTag.organisation_id == person.organisation_id,
                PersonTag.person_id == person.id,
            )
        )
    ).unique()
    deepest: int | None = None
    combined: set[str] = set()
    for tag in tags:
        listed = _listed(tag.settings)
        if listed is None:
            continue
        if deepest is None or tag.level > deepest:
            deepest, combined = tag.level, set(listed)
        elif tag.level == deepest:
            combined |= listed
    if deepest is not None:
        return combined
    return _listed(organisation.settings)


async def check_task_allowed(
    session: AsyncSession,
    organisation: Organisation,
    owner: Person,
    tasks: list[Task],
    cache: dict[str, set[str] | None] | None = None,
) -> None:
    """RuleViolation when the owner's plannings do not include one of the tasks."""
    if not tasks:
        return
    if cache is not None and owner.id in cache:
        allowed = cache[owner.id]
    else:
        allowed = await allowed_task_categories(session, organisation, owner)
        if cache is not None:
            cache[owner.id] = allowed
    if allowed is None:
        return
    for task in tasks:
        if task.category_id is None or task.category_id not in allowed:
            raise RuleViolation(PLANNING_REFUSAL)
