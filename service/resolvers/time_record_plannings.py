"""The timesheet setting "Record time on these plannings" (task categories), set by admins at
organisation, tag and person level; service/timerecords_rules.py applies it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType

from service import permissions
from service.graphql.context import RequestContext
from service.lookup import get_in_org, get_many_in_org
from service.models import Organisation, Person, Tag, TaskCategory
from service.timerecords_rules import SETTING

mutation = MutationType()


def _require_admin(context: RequestContext) -> None:
    permissions.require(context, permissions.TASKS, "edit plannings")


async def _task_categories(
    context: RequestContext, ids: Sequence[str | None] | None
) -> list[str] | None:
    if ids is None:
        return None
    categories = await get_many_in_org(
        context.session, TaskCategory, context.org_id, ids, "taskCategories", "task category"
    )
    return list(dict.fromkeys(category.id for category in categories))


def _with_setting(settings: Mapping[str, Any] | None, value: list[str] | None) -> dict[str, Any]:
    updated = dict(settings or {})
    if value is None:
        updated.pop(SETTING, None)
    else:
        updated[SETTING] = value
    return updated


@mutation.field("editOrganisationTimeSettingsTaskCategories")
async def resolve_edit_organisation_task_categories(
    _root: Any, info: Any, taskCategories: Sequence[str | None] | None = None
) -> Organisation:
    context: RequestContext = info.context
    _require_admin(context)
    value = await _task_categories(context, taskCategories)
    context.organisation.settings = _with_setting(context.organisation.settings, value)
    return context.organisation


@mutation.field("editTagTimeSettingsTaskCategories")
async def resolve_edit_tag_task_categories(
    _root: Any,
    info: Any,
    id: str,
    taskCategories: Sequence[str | None] | None = None,
) -> Tag:
    context: RequestContext = info.context
    _require_admin(context)
    tag = await get_in_org(context.session, Tag, context.org_id, id, "id", "tag")
    value = await _task_categories(context, taskCategories)
    tag.settings = _with_setting(tag.settings, value)
    return tag


@mutation.field("editPersonTimeSettingsTaskCategories")
async def resolve_edit_person_task_categories(
    _root: Any,
    info: Any,
    id: str,
    taskCategories: Sequence[str | None] | None = None,
) -> Person:
    context: RequestContext = info.context
    _require_admin(context)
    person = await get_in_org(context.session, Person, context.org_id, id, "id", "person")
    value = await _task_categories(context, taskCategories)
    person.settings = _with_setting(person.settings, value)
    return person


BINDABLES = [mutation]
