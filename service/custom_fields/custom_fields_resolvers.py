"""Custom field definitions: get/count, add, duplicate, archive, delete, name, type, colour,
every option of every type (one mutation per row of `service/custom_fields/registry.py`,
bound here from the table) and the visibility rules.

Definitions are edited with the `settings` permission; a caller without it lists only the
fields they have access to. An option is checked alone, then with the field's other options
(min <= max, the default obeys them) before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import func, select

from service.custom_fields import visibility_rules as visibility_rule
from service.custom_fields.models import CustomField, CustomFieldValue
from service.custom_fields.registry import (
    TYPES,
    FieldType,
    Option,
    OptionBroken,
    edit_allowed_values,
    edit_option,
    field_type,
    options_of,
)
from service.custom_fields.sdl import option_mutation
from service.custom_fields.store import field_in_org, listable_field_ids, require_permission
from service.errors import BadInput, NotFound, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_in_org, get_many_in_org
from service.models import ProjectCategory, TaskCategory
from service.structure import bind_flat_archiving, bind_listing, check_unique_ids, name_contains

query = QueryType()
mutation = MutationType()
field_object = ObjectType("SvcCustomField")

EDIT = "edit custom fields"


# -- reads ------------------------------------------------------------------------------------


async def _listing(context: RequestContext, args: dict[str, Any]) -> Any:
    conditions = {
        "id": lambda value: CustomField.id == value,
        "name": lambda value: name_contains(CustomField.name, value),
        "archived": lambda value: CustomField.archived.is_(bool(value)),
    }
    statement = select(CustomField).where(
        CustomField.organisation_id == context.org_id,
        filter_clause(args.get("filter"), conditions),
    ).order_by(func.lower(CustomField.name), CustomField.id)
    allowed = await listable_field_ids(context)
    if allowed is not None:
        statement = statement.where(CustomField.id.in_(sorted(allowed)))
    return statement


bind_listing(query, CustomField.id, _listing, get="getCustomFields", count="countCustomFields",
             ids=None)


@query.field("getCustomField")
async def resolve_get_custom_field(_root: Any, info: Any, id: str) -> CustomField:
    context: RequestContext = info.context
    found = await field_in_org(context, id)
    allowed = await listable_field_ids(context)
    if allowed is not None and found.id not in allowed:
        raise NotFound("id", id, "custom field")
    return found


@field_object.field("fieldType")
def resolve_field_type(field: CustomField, _info: Any) -> str:
    return field.field_type


@field_object.field("visibility")
def resolve_visibility(field: CustomField, _info: Any) -> dict[str, Any]:
    return visibility_rule.normalised(field.visibility)


def _bind_options_attribute(kind: FieldType) -> None:
    @field_object.field(kind.options_attribute)
    def resolve_options(field: CustomField, _info: Any) -> dict[str, Any] | None:
        return options_of(kind, field.options) if field.field_type == kind.name else None


# -- definitions ----------------------------------------------------------------------------


def _type_named(name: str) -> FieldType:
    try:
        return field_type(name)
    except ValueError as exc:
        raise BadInput("fieldType", str(exc)) from None


@mutation.field("addCustomField")
async def resolve_add(_root: Any, info: Any, name: str, fieldType: str,
                      color: str | None = None) -> CustomField:
    context: RequestContext = info.context
    require_permission(context, EDIT)
    kind = _type_named(fieldType)
    created = CustomField(organisation_id=context.org_id, name=name, field_type=kind.name,
                          color=color, archived=False, options={},
                          visibility=visibility_rule.initial())
    context.session.add(created)
    await context.session.flush()
    return created


@mutation.field("duplicateCustomField")
async def resolve_duplicate(_root: Any, info: Any, id: str, name: str) -> CustomField:
    """A copy of the definition: type, options, visibility and colour (not its values)."""
    context: RequestContext = info.context
    require_permission(context, EDIT)
    original = await field_in_org(context, id)
    created = CustomField(organisation_id=context.org_id, name=name,
                          field_type=original.field_type, color=original.color, archived=False,
                          options=dict(original.options or {}),
                          visibility=dict(original.visibility or {}))
    context.session.add(created)
    await context.session.flush()
    return created


async def _set_archived(context: RequestContext, ids: Sequence[str], argument: str,
                        value: bool) -> list[CustomField]:
    require_permission(context, EDIT)
    if argument == "ids":
        check_unique_ids(list(ids), "ids")
    fields = await get_many_in_org(context.session, CustomField, context.org_id, ids, argument,
                                   "custom field")
    for field in fields:
        field.archived = value
    return fields


bind_flat_archiving(mutation, _set_archived, "CustomField")


async def _values_count(context: RequestContext, field: CustomField) -> int:
    return int(await context.session.scalar(
        select(func.count()).select_from(CustomFieldValue).where(
            CustomFieldValue.organisation_id == context.org_id,
            CustomFieldValue.custom_field_id == field.id)) or 0)


async def _refuse_with_values(context: RequestContext, field: CustomField, what: str) -> None:
    used = await _values_count(context, field)
    if used:
        raise RuleViolation(f"cannot {what} the custom field {field.name!r}: {used} "
                            f"value{'s' if used > 1 else ''} use it")


@mutation.field("deleteCustomField")
async def resolve_delete(_root: Any, info: Any, id: str) -> CustomField:
    """Refused while values of the field exist: archive it instead."""
    context: RequestContext = info.context
    require_permission(context, EDIT)
    found = await field_in_org(context, id)
    await _refuse_with_values(context, found, "delete")
    await context.session.delete(found)
    return found


@mutation.field("editCustomFieldName")
async def resolve_edit_name(_root: Any, info: Any, id: str, name: str) -> CustomField:
    context: RequestContext = info.context
    require_permission(context, EDIT)
    found = await field_in_org(context, id)
    found.name = name
    return found


@mutation.field("editCustomFieldColor")
async def resolve_edit_color(_root: Any, info: Any, id: str, color: str | None = None
                             ) -> CustomField:
    context: RequestContext = info.context
    require_permission(context, EDIT)
    found = await field_in_org(context, id)
    found.color = color
    return found


@mutation.field("editCustomFieldType")
async def resolve_edit_type(_root: Any, info: Any, id: str, fieldType: str) -> CustomField:
    context: RequestContext = info.context
    require_permission(context, EDIT)
    kind = _type_named(fieldType)
    found = await field_in_org(context, id)
    if found.field_type != kind.name:
        await _refuse_with_values(context, found, "change the type of")
        found.field_type = kind.name
        found.options = {}
    return found


# -- options (from the registry) --------------------------------------------------------------


async def _field_of_type(context: RequestContext, id: str, kind: FieldType) -> CustomField:
    require_permission(context, EDIT)
    found = await field_in_org(context, id)
    if found.field_type != kind.name:
        raise BadInput("id", f"the custom field {found.name!r} is a {found.field_type} field, "
                             f"not a {kind.name} field")
    return found


def _store(found: CustomField, kind: FieldType, options: dict[str, Any]) -> CustomField:
    defaults = kind.defaults()
    found.options = {key: value for key, value in options.items() if value != defaults[key]}
    return found


def _bind_option(kind: FieldType, option: Option) -> None:
    async def resolve_option(_root: Any, info: Any, id: str, **kwargs: Any) -> CustomField:
        context: RequestContext = info.context
        found = await _field_of_type(context, id, kind)
        try:
            options = edit_option(kind, found.options, option.name, kwargs.get(option.name))
        except OptionBroken as exc:
            raise BadInput(option.name, f"{exc.problem} (option {exc.option})") from None
        except ValueError as exc:
            raise BadInput(option.name, str(exc)) from None
        return _store(found, kind, options)

    mutation.set_field(option_mutation(kind, option), resolve_option)


def _bind_allowed_values(kind: FieldType, operation: str, add: bool) -> None:
    async def resolve_allowed(_root: Any, info: Any, id: str, value: str) -> CustomField:
        context: RequestContext = info.context
        found = await _field_of_type(context, id, kind)
        try:
            options = edit_allowed_values(kind, found.options, value, add)
        except ValueError as exc:
            raise BadInput("value", str(exc)) from None
        return _store(found, kind, options)

    mutation.set_field(operation, resolve_allowed)


for _kind in TYPES:
    _bind_options_attribute(_kind)
    for _option in _kind.options:
        if _option.edited:
            _bind_option(_kind, _option)
_bind_allowed_values(field_type("text"), "addCustomFieldTextOptionAllowedValue", True)
_bind_allowed_values(field_type("text"), "removeCustomFieldTextOptionAllowedValue", False)


# -- visibility ------------------------------------------------------------------------------


async def _edit_visibility(info: Any, id: str, edit: Any) -> CustomField:
    context: RequestContext = info.context
    require_permission(context, EDIT)
    found = await field_in_org(context, id)
    try:
        found.visibility = edit(found.visibility)
    except ValueError as exc:
        raise BadInput("id", f"the custom field {found.name!r}: {exc}") from None
    return found


def _bind_switch(operation: str, key: str) -> None:
    async def resolve_switch(_root: Any, info: Any, id: str, enabled: bool) -> CustomField:
        return await _edit_visibility(
            info, id, lambda stored: visibility_rule.switch(stored, key, enabled))

    mutation.set_field(operation, resolve_switch)


for _operation, _key in (("editCustomFieldVisibilityPersons", "persons"),
                         ("editCustomFieldVisibilityAbsenceTypes", "absenceTypes"),
                         ("editCustomFieldVisibilityTimeRecords", "timeRecords"),
                         ("editCustomFieldVisibilityProjects", "projects"),
                         ("editCustomFieldVisibilityTasks", "tasks")):
    _bind_switch(_operation, _key)


@mutation.field("editCustomFieldVisibilityTimeRecordAbsences")
async def resolve_record_absences(_root: Any, info: Any, id: str, enabled: bool) -> CustomField:
    return await _edit_visibility(
        info, id, lambda stored: visibility_rule.edit_time_records(stored, "absences", enabled))


async def _categories(context: RequestContext, model: Any, ids: list[str] | None,
                      argument: str) -> list[str] | None:
    if ids is None:
        return None
    check_unique_ids(list(ids), argument)
    found = await get_many_in_org(context.session, model, context.org_id, ids, argument,
                                  "category")
    return [category.id for category in found]


def _bind_record_categories(operation: str, key: str, model: Any) -> None:
    async def resolve_categories(_root: Any, info: Any, id: str,
                                 categoryIds: list[str] | None = None) -> CustomField:
        require_permission(info.context, EDIT)
        ids = await _categories(info.context, model, categoryIds, "categoryIds")
        return await _edit_visibility(
            info, id, lambda stored: visibility_rule.edit_time_records(stored, key, ids))

    mutation.set_field(operation, resolve_categories)


_bind_record_categories("setCustomFieldVisibilityTimeRecordProjectCategories",
                        "projectCategories", ProjectCategory)
_bind_record_categories("setCustomFieldVisibilityTimeRecordTaskCategories",
                        "taskCategories", TaskCategory)


def _bind_category_entry(entity: str, key: str, model: Any, action: str) -> None:
    async def resolve_entry(_root: Any, info: Any, id: str, categoryId: str,
                            levels: list[int | None] | None = None) -> CustomField:
        context: RequestContext = info.context
        require_permission(context, EDIT)
        if action == "add":
            await get_in_org(context.session, model, context.org_id, categoryId, "categoryId",
                             "category")
        return await _edit_visibility(info, id, lambda stored: visibility_rule.edit_category(
            stored, key, categoryId, levels, action))

    mutation.set_field(f"{action}CustomFieldVisibility{entity}", resolve_entry)


for _entity, _key, _model in (("Project", "projects", ProjectCategory),
                              ("Task", "tasks", TaskCategory)):
    for _action in ("add", "edit", "remove"):
        _bind_category_entry(_entity, _key, _model, _action)


BINDABLES = [query, mutation, field_object]
