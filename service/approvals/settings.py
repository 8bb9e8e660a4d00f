"""Cascading settings of the approval workflow: account, tag, person; the most specific wins.

Stored in the `settings` JSON of Organisation, Tag and Person under these keys. Among several
tags of a person that set a key, the deepest tag (highest level) wins, then the first by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Organisation, Person, PersonTag, Project, Tag
from service.read_memo import memo

APPROVAL_STAGES = "approvalStages"
APPROVAL_REMINDER = "approvalReminder"
OWNER_OR_ADMIN_ONLY = "ownerOrAdminOnly"
ONLY_ADMIN_EDITS_OTHERS = "onlyAdminEditsOthers"
AUTO_SUBMIT = "autoSubmit"
# Work schedules (service/resolvers/schedule_settings.py).
SCHEDULE_SETTINGS = (
    "allowTimeRecordOutOfScheduleDaily",
    "allowTimeRecordOutOfSchedulePeriod",
    "requireScheduledTimeDaily",
    "requireScheduledTimePeriod",
)


@dataclass
class Resolved:
    value: Any
    # Where the value comes from: [{"id", "collection", "name"}] (empty: nowhere, default).
    path: list[dict[str, str]] = field(default_factory=list)


def _path(entity: Any, collection: str) -> list[dict[str, str]]:
    return [{"id": entity.id, "collection": collection, "name": entity.name}]


def set_value(entity: Organisation | Tag | Person | Project, key: str, value: Any) -> None:
    """Set (or with None, clear) one setting; JSON columns need a new dict to be saved."""
    settings = dict(entity.settings or {})
    if value is None:
        settings.pop(key, None)
    else:
        settings[key] = value
    entity.settings = settings


# Built once (every time-record write asks it): the organisation and the person are parameters.
_PERSON_TAGS = (
    select(Tag)
    .join(PersonTag, PersonTag.tag_id == Tag.id)
    .where(
        PersonTag.organisation_id == bindparam("tags_org"),
        PersonTag.person_id == bindparam("tags_person"),
    )
)


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
    if found is None:
        rows = await session.scalars(_PERSON_TAGS, {"tags_org": org_id, "tags_person": person_id})
        found = remembered[key] = list(rows.unique())
    return list(found)


async def resolve(
    session: AsyncSession, organisation: Organisation, person: Person | None, key: str
) -> Resolved:
    """The value of `key` for the person: person, else their deepest tag, else the account."""
    if person is not None:
        if key in (person.settings or {}):
            return Resolved(person.settings[key], _path(person, "persons"))
        tags = [
            t for t in await person_tags(session, organisation.id, person.id)
            if key in (t.settings or {}) and not t.archived
        ]
        if tags:
            tags.sort(key=lambda t: (-t.level, t.name, t.id))
            return Resolved(tags[0].settings[key], _path(tags[0], "tags"))
    if key in (organisation.settings or {}):
        return Resolved(organisation.settings[key], _path(organisation, "organisations"))
    return Resolved(None, [])


def as_attribute(resolved: Resolved) -> dict[str, Any]:
    """A setting as the API shows it: its value and where it comes from."""
    return {"value": resolved.value, "path": resolved.path}


def time_settings(resolve: Callable[[str], Any]) -> dict[str, Any]:
    """SvcTimeSettings: each timesheet setting's key with what `resolve` gives for it."""
    return {
        "approvalReminder": resolve(APPROVAL_REMINDER),
        "ownerOrAdminOnly": resolve(OWNER_OR_ADMIN_ONLY),
        "onlyAdminEditsOthers": resolve(ONLY_ADMIN_EDITS_OTHERS),
        "autoSubmit": resolve(AUTO_SUBMIT),
        **{key: resolve(key) for key in SCHEDULE_SETTINGS},
    }


def own(entity: Organisation | Tag | Person | Project, collection: str, key: str) -> Resolved:
    """The entity's own value (no cascade) with itself as the path."""
    settings = entity.settings or {}
    if key in settings:
        return Resolved(settings[key], _path(entity, collection))
    return Resolved(None, [])
