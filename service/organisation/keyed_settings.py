"""Cascading settings of the approval workflow, by key: account, tag, person; the most
specific wins (`service/organisation/settings_cascade.py` holds the rule; the account settings
themselves
are rows of `service/organisation/settings_registry.py`).

Stored in the `settings` JSON of Organisation, Tag, Person and Project under these keys.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Organisation, Person, Project, Tag
from service.organisation.settings_cascade import (
    COLLECTIONS,
    Resolved,
    first,
    for_person,
    json_reader,
    set_json,
)
from service.organisation.settings_cascade import own as own_at

__all__ = ["Resolved", "as_attribute", "own_value", "resolve", "set_value"]

APPROVAL_STAGES = "approvalStages"
APPROVAL_REMINDER = "approvalReminder"
OWNER_OR_ADMIN_ONLY = "ownerOrAdminOnly"
ONLY_ADMIN_EDITS_OTHERS = "onlyAdminEditsOthers"
AUTO_SUBMIT = "autoSubmit"
# Work schedules (service/plannings/schedule_plan.py).
SCHEDULE_SETTINGS = (
    "allowTimeRecordOutOfScheduleDaily",
    "allowTimeRecordOutOfSchedulePeriod",
    "requireScheduledTimeDaily",
    "requireScheduledTimePeriod",
)
_LEVELS = {collection: level for level, collection in COLLECTIONS.items()}


def set_value(entity: Organisation | Tag | Person | Project, key: str, value: Any) -> None:
    """Set (or with None, clear) one setting."""
    set_json(entity, key, value)


async def resolve(
    session: AsyncSession, organisation: Organisation, person: Person | None, key: str
) -> Resolved:
    """The value of `key` for the person: person, else their deepest tag, else the account."""
    return await for_person(session, organisation, person, json_reader(key))


def as_attribute(resolved: Resolved) -> dict[str, Any]:
    """A setting as the API shows it: its value and where it comes from."""
    return {"value": resolved.value, "path": resolved.path}


def own_value(entity: Organisation | Tag | Person | Project, collection: str, key: str) -> Resolved:
    """The entity's own value (no cascade) with itself as the path."""
    return first(own_at(entity, _LEVELS[collection], json_reader(key)))
