"""getAuditTrails: what was changed, by whom, when (rows written by the executor).

A call covers seven days: the last seven days without `startTime`, otherwise the seven days
starting at `startTime`. Administrators see every entry of the organisation; anyone else sees
only the entries of their own operations (the list is silently narrowed, like other lists).
Entries come newest first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ariadne import ObjectType, QueryType
from sqlalchemy import select

from service.access import AUDIT, VIEW, has
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import AuditTrail, Person, Role

query = QueryType()
audit_trail_type = ObjectType("SvcAuditTrail")

WINDOW_MS = 7 * 86_400_000

# argumentMatch field -> the argument names that carry such an id (single or list).
ARGUMENT_NAMES: dict[str, tuple[str, ...]] = {
    "id": ("id", "ids"),
    "roleId": ("roleId", "roleIds"),
    "managerId": ("managerId", "managerIds"),
    "personId": ("personId", "personIds"),
    "projectId": ("projectId", "projectIds"),
    "taskId": ("taskId", "taskIds"),
    "tagId": ("tagId", "tagIds"),
    "scheduleId": ("scheduleId", "scheduleIds", "scheduleTypeId"),
    "absenceTypeId": ("absenceTypeId", "absenceId", "absenceTypeIds"),
    "expenseTypeId": ("expenseTypeId", "expenseTypeIds"),
    "customFieldId": ("customFieldId", "customFieldIds"),
}


def _carries(arguments: Mapping[str, Any], names: Iterable[str], wanted: str) -> bool:
    for name in names:
        value = arguments.get(name)
        if value == wanted or (isinstance(value, list) and wanted in value):
            return True
    return False


def _matches(
    entry: AuditTrail,
    argument_match: Mapping[str, Any] | None,
    response_id: str | None,
) -> bool:
    arguments = entry.arguments if isinstance(entry.arguments, dict) else {}
    for field, wanted in (argument_match or {}).items():
        if wanted is None:
            continue
        if not _carries(arguments, ARGUMENT_NAMES.get(field, (field,)), wanted):
            return False
    return response_id is None or response_id in (entry.response_ids or [])


@query.field("getAuditTrails")
async def resolve_get_audit_trails(
    _root: Any,
    info: Any,
    startTime: int | None = None,
    fromPersonId: str | None = None,
    operations: list[str | None] | None = None,
    argumentMatch: dict[str, Any] | None = None,
    responseMatch: dict[str, Any] | None = None,
) -> list[AuditEntry]:
    context: RequestContext = info.context
    mutations = info.schema.mutation_type.fields if info.schema.mutation_type else {}
    names: list[str] = []
    for index, name in enumerate(operations or []):
        if name is None or name not in mutations:
            raise BadInput(f"operations[{index}]", f"{name!r} is not a data-changing operation")
        names.append(name)
    if startTime is None:
        start, end = context.now_ms - WINDOW_MS, context.now_ms + 1
    else:
        if startTime < 0:
            raise BadInput("startTime", "must not be before 1970-01-01")
        start, end = startTime, startTime + WINDOW_MS
    statement = select(AuditTrail).where(
        AuditTrail.organisation_id == context.org_id,
        AuditTrail.timestamp_ms >= start,
        AuditTrail.timestamp_ms < end,
    )
    if not has(context, AUDIT, VIEW):
        statement = statement.where(AuditTrail.person_id == context.person.id)
    if fromPersonId is not None:
        statement = statement.where(AuditTrail.person_id == fromPersonId)
    if names:
        statement = statement.where(AuditTrail.operation_name.in_(names))
    response_id = (responseMatch or {}).get("id")
    statement = statement.order_by(AuditTrail.timestamp_ms.desc(), AuditTrail.id.desc())
    entries = [
        entry
        for entry in await context.session.scalars(statement)
        if _matches(entry, argumentMatch, response_id)
    ]
    people = await _people(context, {entry.person_id for entry in entries})
    return [AuditEntry(entry, people[entry.person_id]) for entry in entries]


@dataclass
class AuditEntry:
    entry: AuditTrail
    person: Person


async def _people(context: RequestContext, ids: set[str]) -> dict[str, Person]:
    """The people behind the entries; a deleted person becomes a stand-in keeping the id."""
    people: dict[str, Person] = {}
    if ids:
        found = await context.session.scalars(
            select(Person).where(Person.organisation_id == context.org_id, Person.id.in_(ids))
        )
        people = {person.id: person for person in found.unique()}
    for person_id in ids - people.keys():
        people[person_id] = _deleted_person(context, person_id)
    return people


def _deleted_person(context: RequestContext, person_id: str) -> Person:
    """Never added to the session: only answers the fields of SvcPerson."""
    role = Role(id=person_id, organisation_id=context.org_id, name="Deleted", kind="employee")
    role.archived = True
    person = Person(
        id=person_id,
        organisation_id=context.org_id,
        name="Deleted person",
        email="deleted.person@invalid",
        role_id=role.id,
        start_date_ms=0,
        created_ms=0,
        settings={},
    )
    person.archived = True
    person.role = role
    return person


@audit_trail_type.field("operationName")
def resolve_operation_name(item: AuditEntry, _info: Any) -> str:
    return item.entry.operation_name


@audit_trail_type.field("timestamp")
def resolve_timestamp(item: AuditEntry, _info: Any) -> int:
    return item.entry.timestamp_ms


@audit_trail_type.field("person")
def resolve_person(item: AuditEntry, _info: Any) -> Person:
    return item.person


@audit_trail_type.field("responseId")
def resolve_response_id(item: AuditEntry, _info: Any) -> str | None:
    return item.entry.response_id


@audit_trail_type.field("arguments")
def resolve_arguments(item: AuditEntry, _info: Any) -> list[dict[str, str]]:
    """Each submitted argument; strings as they were, anything else as JSON."""
    arguments = item.entry.arguments if isinstance(item.entry.arguments, dict) else {}
    return [
        {"name": name, "value": value if isinstance(value, str) else json.dumps(value)}
        for name, value in arguments.items()
    ]


BINDABLES = [query, audit_trail_type]
