"""The services on custom fields: custom_field.list, custom_field.get. The same definitions
as GraphQL's getCustomFields: an administrator (or a role with the settings permission) sees
every field, anyone else the fields they have access to ("Who has access?")."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from service.custom_fields import field_type, listable_field_ids, normalised, options_of
from service.legacy.errors import LegacyNotFound
from service.legacy.lookups import find_in_org
from service.legacy.request import Handler, LegacyRequest, active_filter, identifier
from service.models import CustomField


async def custom_field_dict(request: LegacyRequest, field: CustomField) -> dict[str, Any]:
    visibility = normalised(field.visibility)
    return {
        **(await request.xids("custom_fields").ref(field.id) or {}),
        "name": field.name,
        "type": field.field_type,
        "active": not field.archived,
        "options": options_of(field_type(field.field_type), field.options),
        "on": {"persons": bool(visibility["persons"]),
               "absences": bool(visibility["absenceTypes"]),
               "projects": visibility["projects"] is not None,
               "tasks": visibility["tasks"] is not None,
               "time_entries": visibility["timeRecords"] is not None},
    }


async def custom_field_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "custom_field")
    allowed = await listable_field_ids(request.context)
    rows = await request.session.scalars(
        select(CustomField)
        .where(CustomField.organisation_id == request.org_id)
        .order_by(func.lower(CustomField.name), CustomField.id)
    )
    return {"custom_fields": [
        await custom_field_dict(request, field) for field in rows
        if (active is None or active != field.archived)
        and (allowed is None or field.id in allowed)
    ]}


async def custom_field_get(request: LegacyRequest) -> dict[str, Any]:
    value = identifier(request, "custom_field")
    field = await find_in_org(request, CustomField, "custom_fields", value, "custom_field",
                              "Custom field")
    allowed = await listable_field_ids(request.context)
    if allowed is not None and field.id not in allowed:
        raise LegacyNotFound("Custom field", value)
    return {"custom_field": await custom_field_dict(request, field)}


SERVICES: dict[str, Handler] = {
    "custom_field.get": custom_field_get,
    "custom_field.list": custom_field_list,
}
