"""Binds every row of the settings registry (`service/organisation/settings_registry.py`): its
`edit<Level><Group><Name>` mutation at each of its levels, and its field of `SvcTimeSettings` /
`SvcLocalisation`, which the `timeSettings` / `localisation` attributes of the organisation,
tags, people and projects give with the value and where it comes from (`path`).

Administrators edit settings (the spec's account settings are admin only); a row with
`self_edit` is also edited by the person at person level. A value is validated (the row's
rule, then the ids it names) before anything is written; the executor writes the audit entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.access import APPROVALS, PROJECTS, TASKS, has
from service.access import SETTINGS as SETTINGS_PERMISSION
from service.errors import BadInput, NotFound, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Project, ProjectCategory, Tag, TaskCategory, TaskStatus
from service.organisation.settings_cascade import effective, store
from service.organisation.settings_registry import (
    ATTRIBUTES,
    DIRECT,
    LEVELS,
    SETTINGS,
    Reference,
    Setting,
    groups_at,
)
from service.organisation.settings_sdl import GROUP_TYPES, entity_type
from service.webhooks import EVENT_SETTINGS_UPDATE, KICK, enqueue

mutation = MutationType()
entity_types = {level: ObjectType(entity_type(level)) for level in LEVELS}
group_types = {group: ObjectType(GROUP_TYPES[group]) for group in ATTRIBUTES
               if group not in DIRECT}

ENTITIES: dict[str, type[Any]] = {"tag": Tag, "person": Person, "project": Project}
# The kinds of ids a value may name (registry `references`): model and how errors call it.
KINDS: dict[str, tuple[type[Any], str]] = {
    "projectCategory": (ProjectCategory, "project category"),
    "taskCategory": (TaskCategory, "task category"),
    "taskStatus": (TaskStatus, "task status"),
}
MAX_ITEMS = 1000


@dataclass(frozen=True)
class Holder:
    """What `timeSettings` / `localisation` resolve to: the entity and its level."""

    level: str
    entity: Any


def _spaced(name: str) -> str:
    return "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()


async def _load(context: RequestContext, refs: list[Reference]) -> dict[str, Any]:
    """The entities the references name that exist in the organisation, by id."""
    found: dict[str, Any] = {}
    for kind in dict.fromkeys(kind for _, kind, _ in refs):
        model = KINDS[kind][0]
        ids = [ref for _, k, ref in refs if k == kind and ref is not None]
        rows = await context.session.scalars(select(model).where(
            model.organisation_id == context.org_id, model.id.in_(ids)))
        found.update((row.id, row) for row in rows.unique())
    return found


def _references(setting: Setting, value: Any) -> list[Reference]:
    return list(setting.references(value)) if setting.references else []


async def _validated(context: RequestContext, setting: Setting, level: str, value: Any) -> Any:
    if value is None:
        if level in setting.required:
            raise BadInput(setting.argument_name,
                           f"the {level} needs a {_spaced(setting.name)}")
        return None
    if isinstance(value, list) and len(value) > MAX_ITEMS:
        raise BadInput(setting.argument_name, f"has more than {MAX_ITEMS} items")
    try:
        value = setting.check(value)
    except ValueError as error:
        raise BadInput(setting.argument_name, str(error)) from None
    refs = _references(setting, value)
    if len(refs) > MAX_ITEMS:
        raise BadInput(setting.argument_name, f"names more than {MAX_ITEMS} items")
    found = await _load(context, refs)
    for where, kind, ref in refs:
        if ref not in found:
            raise NotFound(f"{setting.name}{where}", ref, KINDS[kind][1])
    return value


def edit_permission(setting: Setting, level: str) -> str:
    """The permission of the catalogue (service/access/permissions.py) that governs editing a
    setting: localisation is the organisation's settings; time settings are the approval
    workflow's, a project's its projects', the plannings rule its tasks'."""
    if setting.group != "TimeSettings":
        return SETTINGS_PERMISSION
    if setting.name == "taskCategories":
        return TASKS
    return PROJECTS if level == "project" else APPROVALS


async def _editable(context: RequestContext, setting: Setting, level: str,
                    entity_id: str | None) -> Any:
    allowed = has(context, edit_permission(setting, level))
    own_edit = setting.self_edit and level == "person"
    if not allowed and not own_edit:
        raise PermissionDenied(f"only an administrator may change the {_spaced(setting.group)}")
    if level == "organisation":
        return context.organisation
    entity = await get_in_org(context.session, ENTITIES[level], context.org_id, entity_id,
                              "id", level)
    if not allowed and entity.id != context.person.id:
        raise PermissionDenied("only the person or an administrator may change this")
    return entity


def _bind_edit(setting: Setting, level: str) -> None:
    async def resolver(_root: Any, info: Any, id: str | None = None, **kwargs: Any) -> Any:
        context: RequestContext = info.context
        entity = await _editable(context, setting, level, id)
        store(entity, level, setting, await _validated(context, setting, level,
                                                       kwargs.get(setting.argument_name)))
        await enqueue(context.session, context.org_id, EVENT_SETTINGS_UPDATE, {
            "level": level, "id": entity.id, "group": ATTRIBUTES[setting.group],
            "setting": setting.name}, context.now_ms)
        context.after_commit.append(KICK)
        return entity

    mutation.set_field(setting.mutation(level), resolver)


# How a value naming other entities is shown: keyed by the row's value type.
Present = Callable[[Any, dict[str, Any]], Any]
PRESENT: dict[str, Present] = {
    "[[SvcProjectCategory]]": lambda v, found: [[found[i] for i in row if i in found]
                                                for row in v],
    "[SvcTaskCategory]": lambda v, found: [found[i] for i in v if i in found],
    "[SvcAutoTimesheetEntry]": lambda v, found: [
        {**entry, "category": found.get(entry["categoryId"]),
         "timesheetStartStatus": found.get(entry.get("timesheetStartStatusId") or ""),
         "timesheetEndStatus": found.get(entry.get("timesheetEndStatusId") or "")}
        for entry in v],
}


async def _shown(context: RequestContext, setting: Setting, value: Any) -> Any:
    if value is None or setting.references is None:
        return value
    found = await _load(context, _references(setting, value))
    return PRESENT[setting.value](value, found)


def _bind_attribute(setting: Setting) -> None:
    async def resolver(holder: Holder, info: Any) -> dict[str, Any] | None:
        if holder.level not in setting.levels:
            return None
        context: RequestContext = info.context
        resolved = await effective(context.session, context.organisation, holder.level,
                                   holder.entity, setting)
        return {"value": await _shown(context, setting, resolved.value), "path": resolved.path}

    if setting.group not in DIRECT:
        group_types[setting.group].set_field(setting.name, resolver)
        return
    for level in setting.levels:  # the entity's attribute itself
        entity_types[level].set_field(
            ATTRIBUTES[setting.group],
            lambda entity, info, level=level: resolver(Holder(level, entity), info))


def _bind_holder(level: str, group: str) -> None:
    def resolver(entity: Any, _info: Any) -> Holder:
        return Holder(level, entity)

    entity_types[level].set_field(ATTRIBUTES[group], resolver)


for _setting in SETTINGS:
    _bind_attribute(_setting)
    for _level in _setting.levels:
        _bind_edit(_setting, _level)
for _level in LEVELS:
    for _group in groups_at(_level):
        if _group not in DIRECT:
            _bind_holder(_level, _group)

BINDABLES = [mutation, *entity_types.values(), *group_types.values()]
