"""Custom field values on persons, projects, tasks, tags, time records and absence types:
addCustomFieldValue, editCustomFieldValue<Type> (one per type of the registry, bound from
the table), deleteCustomFieldValue, getCustomFieldValue(s), countCustomFieldValues.

A value is edited by whoever may edit its entity (`service/custom_fields/store.py`); it must
show there (the field's visibility), its person must have access to the field, and it must
obey the field's options: a value that breaks one is refused naming the field and the option.
An entity has at most one value of a field (a repeated add is refused: edit the value).
Lists show the values of the people (and their records) the caller may see.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError

from service.custom_fields.models import ENTITY_COLUMNS, CustomField, CustomFieldValue
from service.custom_fields.registry import (
    TYPES,
    VALUE_ARGUMENTS,
    FieldType,
    OptionBroken,
    check_value,
    field_type,
    options_of,
)
from service.custom_fields.sdl import value_mutation
from service.custom_fields.store import (
    ENTITY_MODELS,
    check_placement,
    entity_of,
    field_in_org,
    require_entity_edit,
)
from service.errors import BadInput, NotFound, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_in_org
from service.models import TimeRecord

query = QueryType()
mutation = MutationType()
value_object = ObjectType("SvcCustomFieldValue")

# GraphQL value argument -> column.
COLUMNS = {"textValue": "text_value", "numberValue": "number_value", "dateValue": "date_value",
           "dateTimeValue": "date_time_value", "urlValue": "url_value",
           "booleanValue": "boolean_value"}


def _checked(field: CustomField, kind: FieldType, value: Any) -> Any:
    try:
        return check_value(kind, field.options, value)
    except OptionBroken as exc:
        raise BadInput(kind.value_argument, f"the value breaks the option {exc.option} of the "
                       f"custom field {field.name!r}: it {exc.problem}") from None
    except ValueError as exc:
        raise BadInput(kind.value_argument,
                       f"the value of the custom field {field.name!r} {exc}") from None


def _default(kind: FieldType, field: CustomField) -> Any:
    options = options_of(kind, field.options)
    name = next((o.name for o in kind.options if o.name.startswith("default")), None)
    return options.get(name) if name else None


# -- writes ----------------------------------------------------------------------------------


@mutation.field("addCustomFieldValue")
async def resolve_add(_root: Any, info: Any, customFieldId: str, entityType: str,
                      entityId: str, **values: Any) -> CustomFieldValue:
    """The value of the field's type (the field's default when not given)."""
    context: RequestContext = info.context
    session = context.session
    field = await field_in_org(context, customFieldId, "customFieldId")
    kind = field_type(field.field_type)
    for argument in VALUE_ARGUMENTS:
        if argument != kind.value_argument and values.get(argument) is not None:
            raise BadInput(argument, f"the custom field {field.name!r} is a {kind.name} field "
                                     f"(give {kind.value_argument})")
    entity = await entity_of(context, entityType, entityId)
    await require_entity_edit(context, entityType, entity)
    if field.archived:
        raise BadInput("customFieldId", f"the custom field {field.name!r} is archived")
    await check_placement(context, field, entityType, entity)
    given = values.get(kind.value_argument)
    value = _checked(field, kind, given if given is not None else _default(kind, field))
    row = CustomFieldValue(organisation_id=context.org_id, custom_field_id=field.id,
                           entity_type=entityType, entity_id=entity.id,
                           **{ENTITY_COLUMNS[entityType][0]: entity.id,
                              COLUMNS[kind.value_argument]: value})
    try:
        async with session.begin_nested():
            session.add(row)
            await session.flush()
    except IntegrityError:
        raise RuleViolation(f"this {ENTITY_MODELS[entityType][1]} already has a value of the "
                            f"custom field {field.name!r} (edit it instead)") from None
    return row


async def _value_in_org(context: RequestContext, id: str) -> CustomFieldValue:
    return await get_in_org(context.session, CustomFieldValue, context.org_id, id, "id",
                            "custom field value")


async def _editable(context: RequestContext, id: str) -> tuple[CustomFieldValue, Any]:
    row = await _value_in_org(context, id)
    entity = await entity_of(context, row.entity_type, row.entity_id)
    await require_entity_edit(context, row.entity_type, entity)
    return row, entity


def _bind_edit(kind: FieldType) -> None:
    async def resolve_edit(_root: Any, info: Any, id: str, **values: Any) -> CustomFieldValue:
        context: RequestContext = info.context
        row, _entity = await _editable(context, id)
        field = row.custom_field
        if field.field_type != kind.name:
            raise BadInput("id", f"the custom field {field.name!r} is a {field.field_type} "
                                 f"field, not a {kind.name} field")
        setattr(row, COLUMNS[kind.value_argument],
                _checked(field, kind, values.get(kind.value_argument)))
        return row

    mutation.set_field(value_mutation(kind), resolve_edit)


for _kind in TYPES:
    _bind_edit(_kind)


@mutation.field("deleteCustomFieldValue")
async def resolve_delete(_root: Any, info: Any, id: str) -> CustomFieldValue:
    context: RequestContext = info.context
    row, _entity = await _editable(context, id)
    await context.session.delete(row)
    return row


# -- reads -----------------------------------------------------------------------------------


async def _visible(context: RequestContext) -> Any:
    """The condition on values the caller may see (None: all)."""
    people = await context.visible_person_ids()
    if people is None:
        return None
    own_records = select(TimeRecord.id).where(TimeRecord.organisation_id == context.org_id,
                                              TimeRecord.person_id.in_(sorted(people)))
    return or_(CustomFieldValue.entity_type.not_in(["person", "timeRecord"]),
               CustomFieldValue.person_id.in_(sorted(people)),
               CustomFieldValue.time_record_id.in_(own_records))


async def _values_statement(context: RequestContext, filter: Any) -> Any:
    conditions = {
        "id": lambda value: CustomFieldValue.id == value,
        "customFieldId": lambda value: CustomFieldValue.custom_field_id == value,
        "entityType": lambda value: CustomFieldValue.entity_type == value,
        "entityId": lambda value: CustomFieldValue.entity_id == value,
    }
    statement = select(CustomFieldValue).where(
        CustomFieldValue.organisation_id == context.org_id, filter_clause(filter, conditions))
    visible = await _visible(context)
    return statement if visible is None else statement.where(visible)


@query.field("getCustomFieldValues")
async def resolve_get_values(_root: Any, info: Any, filter: Any = None
                             ) -> list[CustomFieldValue]:
    context: RequestContext = info.context
    statement = (await _values_statement(context, filter)).order_by(CustomFieldValue.id)
    return list((await context.session.scalars(statement)).unique())


@query.field("countCustomFieldValues")
async def resolve_count_values(_root: Any, info: Any, filter: Any = None) -> int:
    context: RequestContext = info.context
    inner = (await _values_statement(context, filter)).with_only_columns(CustomFieldValue.id)
    return int(await context.session.scalar(
        select(func.count()).select_from(inner.subquery())) or 0)


@query.field("getCustomFieldValue")
async def resolve_get_value(_root: Any, info: Any, id: str) -> CustomFieldValue:
    context: RequestContext = info.context
    row = await _value_in_org(context, id)
    person_id = row.person_id
    if row.entity_type == "timeRecord":
        entity = await entity_of(context, row.entity_type, row.entity_id)
        person_id = entity.person_id
    if person_id is not None and not await context.can_access_person_data(person_id):
        raise PermissionDenied("you may not see this person's custom field values")
    return row


# -- SvcCustomFieldValue ---------------------------------------------------------------------


@value_object.field("customFieldId")
def resolve_field_id(row: CustomFieldValue, _info: Any) -> str:
    return row.custom_field_id


@value_object.field("customField")
async def resolve_field(row: CustomFieldValue, info: Any) -> CustomField | None:
    context: RequestContext = info.context
    return await context.session.get(CustomField, row.custom_field_id)


@value_object.field("entityType")
def resolve_entity_type(row: CustomFieldValue, _info: Any) -> str:
    return row.entity_type


def _bind_entity(kind: str) -> None:
    async def resolve_entity(row: CustomFieldValue, info: Any) -> Any:
        if row.entity_type != kind:
            return None
        try:
            return await entity_of(info.context, kind, row.entity_id)
        except NotFound:
            return None

    value_object.set_field(kind, resolve_entity)


def _bind_column(argument: str, column: str) -> None:
    value_object.set_field(argument, lambda row, _info: getattr(row, column))


for _entity_kind in ENTITY_MODELS:
    _bind_entity(_entity_kind)
for _argument, _column in COLUMNS.items():
    _bind_column(_argument, _column)


BINDABLES = [query, mutation, value_object]
