"""The links of custom fields, read and reset: SvcCustomField.relations (the people and tags on
its "Who has access?" list, the projects, tasks and time records it is assigned to), the
`customFields` relations of persons and tags, and reset<Kind>CustomFieldsRelations (removes
every custom-field link of one entity). assign / unassign are bound with the other access
lists in `service/access/access_resolvers.py`.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, select

from service.access import SETTINGS, require
from service.custom_fields.models import CustomField, CustomFieldLink
from service.custom_fields.store import ENTITY_MODELS
from service.graphql.context import RequestContext
from service.lookup import get_in_org

mutation = MutationType()
field_object = ObjectType("SvcCustomField")
relations_object = ObjectType("SvcCustomFieldRelations")
person_relations = ObjectType("SvcPersonRelations")
tag_relations = ObjectType("SvcTagRelations")

# Kind -> (the reset mutation's argument, the link's column, customFieldsOf<Kind>).
KINDS = {
    "tag": ("tagId", "tag_id", "customFieldsOfTag"),
    "person": ("personId", "person_id", "customFieldsOfPerson"),
    "project": ("projectId", "project_id", "customFieldsOfProject"),
    "task": ("taskId", "task_id", "customFieldsOfTask"),
    "timeRecord": ("timerecordId", "time_record_id", "customFieldsOfTimeRecord"),
}


@field_object.field("relations")
def resolve_relations(field: CustomField, _info: Any) -> CustomField:
    return field


def _bind_holders(kind: str) -> None:
    _argument, column, attribute = KINDS[kind]
    model = ENTITY_MODELS[kind][0]

    async def resolve_holders(field: CustomField, info: Any) -> list[dict[str, Any]]:
        context: RequestContext = info.context
        rows = await context.session.execute(
            select(CustomFieldLink, model)
            .join(model, model.id == getattr(CustomFieldLink, column))
            .where(CustomFieldLink.organisation_id == context.org_id,
                   CustomFieldLink.custom_field_id == field.id)
            .order_by(CustomFieldLink.id))
        return [{"relationId": link.id, "value": holder, "startTime": None}
                for link, holder in rows.tuples()]

    relations_object.set_field(attribute, resolve_holders)


async def _fields_of(context: RequestContext, column: str, entity_id: str
                     ) -> list[dict[str, Any]]:
    rows = await context.session.execute(
        select(CustomFieldLink, CustomField)
        .join(CustomField, CustomField.id == CustomFieldLink.custom_field_id)
        .where(CustomFieldLink.organisation_id == context.org_id,
               getattr(CustomFieldLink, column) == entity_id)
        .order_by(CustomFieldLink.id))
    return [{"relationId": link.id, "value": field, "startTime": None}
            for link, field in rows.tuples()]


@person_relations.field("customFields")
async def resolve_person_fields(person: Any, info: Any) -> list[dict[str, Any]]:
    return await _fields_of(info.context, "person_id", person.id)


@tag_relations.field("customFields")
async def resolve_tag_fields(tag: Any, info: Any) -> list[dict[str, Any]]:
    return await _fields_of(info.context, "tag_id", tag.id)


def _bind_reset(kind: str) -> None:
    argument, column, _attribute = KINDS[kind]
    model, label = ENTITY_MODELS[kind]
    operation = f"reset{kind[0].upper()}{kind[1:]}CustomFieldsRelations"

    async def resolve_reset(_root: Any, info: Any, **kwargs: Any) -> Any:
        context: RequestContext = info.context
        require(context, SETTINGS, "edit who has access")
        entity = await get_in_org(context.session, model, context.org_id, kwargs[argument],
                                  argument, label)
        await context.session.execute(
            delete(CustomFieldLink).where(CustomFieldLink.organisation_id == context.org_id,
                                          getattr(CustomFieldLink, column) == entity.id))
        return entity

    mutation.set_field(operation, resolve_reset)


for _kind in KINDS:
    _bind_holders(_kind)
    _bind_reset(_kind)


BINDABLES = [mutation, field_object, relations_object, person_relations, tag_relations]
