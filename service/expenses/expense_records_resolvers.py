"""Expense records.

They follow the rules of time records: an employee sees and edits their own, a manager also
those of the people they manage, an admin all. A record on a project only (no person)
belongs to the administrators and to the managers of that project (or of one of its
ancestors).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import ColumnElement, and_, or_, select

from service.access import check_expense_access, managed_project_ids
from service.errors import BadInput, PermissionDenied
from service.expenses.lookup import expense_type_in_org
from service.graphql.context import RequestContext
from service.graphql.convert import amount
from service.graphql.filters import filter_clause
from service.lookup import get_in_org
from service.models import ExpenseRecord, ExpenseType, Person, PersonTag, Project, ProjectTag, Tag
from service.structure import subtree

query = QueryType()
mutation = MutationType()
expense_record_type = ObjectType("SvcExpenseRecord")

MAX_COMMENT = 10_000
REQUIRED_ONE = "at least one of personId or projectId is required"


async def _managed_projects(context: RequestContext) -> set[str]:
    return await managed_project_ids(context.session, context.org_id, context.person.id)


async def _visibility(context: RequestContext) -> ColumnElement[bool] | None:
    """None for an admin; otherwise the records of visible people and of managed projects."""
    persons = await context.visible_person_ids()
    if persons is None:
        return None
    clause: ColumnElement[bool] = ExpenseRecord.person_id.in_(persons)
    projects = await _managed_projects(context)
    if projects:
        clause = or_(
            clause,
            and_(ExpenseRecord.person_id.is_(None), ExpenseRecord.project_id.in_(projects)),
        )
    return clause


async def _may_access(
    context: RequestContext, person_id: str | None, project_id: str | None
) -> bool:
    if context.is_admin:
        return True
    if person_id is not None:
        return await context.can_access_person_data(person_id)
    return project_id is not None and project_id in await _managed_projects(context)


async def _record(context: RequestContext, record_id: str) -> ExpenseRecord:
    record = await get_in_org(
        context.session, ExpenseRecord, context.org_id, record_id, "id", "expense record"
    )
    if not await _may_access(context, record.person_id, record.project_id):
        raise PermissionDenied("this expense record belongs to someone you do not manage")
    return record


async def _person(context: RequestContext, person_id: str, argument: str = "personId") -> Person:
    if not await context.can_access_person_data(person_id):
        raise PermissionDenied("you may log expenses only for yourself and the people you manage")
    return await get_in_org(context.session, Person, context.org_id, person_id, argument, "person")


async def _project(
    context: RequestContext, project_id: str, argument: str = "projectId"
) -> Project:
    return await get_in_org(
        context.session, Project, context.org_id, project_id, argument, "project"
    )


def _check_value(value: int, argument: str = "value") -> None:
    if value < 0:
        raise BadInput(argument, "must not be negative (an amount in the currency's smallest unit)")


def _check_comment(comment: str | None, argument: str = "comment") -> str:
    text = comment or ""
    if len(text) > MAX_COMMENT:
        raise BadInput(argument, f"must be at most {MAX_COMMENT} characters")
    return text


# Expense records: queries ----------------------------------------------------------------------


def _record_conditions(org_id: str) -> dict[str, Any]:
    """SvcExpenseRecordFilter field -> SQL condition. Projects include their subprojects and
    tags the tags below them, as in the time-record filters."""

    def on_projects(project_ids: Sequence[str | None]) -> ColumnElement[bool]:
        return ExpenseRecord.project_id.in_(subtree(Project, org_id, project_ids))

    def person_tagged(tag_ids: Sequence[str | None]) -> ColumnElement[bool]:
        return ExpenseRecord.person_id.in_(
            select(PersonTag.person_id).where(
                PersonTag.organisation_id == org_id,
                PersonTag.tag_id.in_(subtree(Tag, org_id, tag_ids)),
            )
        )

    def project_tagged(tag_ids: Sequence[str | None]) -> ColumnElement[bool]:
        return ExpenseRecord.project_id.in_(
            select(ProjectTag.project_id).where(
                ProjectTag.organisation_id == org_id,
                ProjectTag.tag_id.in_(subtree(Tag, org_id, tag_ids)),
            )
        )

    return {
        "id": lambda value: ExpenseRecord.id == value,
        "notId": lambda value: ExpenseRecord.id != value,
        "personId": lambda value: ExpenseRecord.person_id == value,
        "notPersonId": lambda value: or_(
            ExpenseRecord.person_id.is_(None), ExpenseRecord.person_id != value
        ),
        "projectId": lambda value: on_projects([value]),
        "notProjectId": lambda value: or_(
            ExpenseRecord.project_id.is_(None), ~on_projects([value])
        ),
        "personTagIds": person_tagged,
        "personNotTagIds": lambda value: or_(
            ExpenseRecord.person_id.is_(None), ~person_tagged(value)
        ),
        "projectTagIds": project_tagged,
        "projectNotTagIds": lambda value: or_(
            ExpenseRecord.project_id.is_(None), ~project_tagged(value)
        ),
    }


@query.field("getExpenseRecord")
async def resolve_get_expense_record(_root: Any, info: Any, id: str) -> ExpenseRecord:
    return await _record(info.context, id)


@query.field("getExpenseRecords")
async def resolve_get_expense_records(
    _root: Any,
    info: Any,
    startTime: int | None = None,
    endTime: int | None = None,
    filter: Any = None,
) -> list[ExpenseRecord]:
    """Records dated in [startTime, endTime), either bound optional, that the caller may see."""
    context: RequestContext = info.context
    if startTime is not None and endTime is not None and endTime < startTime:
        raise BadInput("endTime", "must not be before startTime")
    statement = select(ExpenseRecord).where(
        ExpenseRecord.organisation_id == context.org_id,
        filter_clause(filter, _record_conditions(context.org_id)),
    )
    if startTime is not None:
        statement = statement.where(ExpenseRecord.date_ms >= startTime)
    if endTime is not None:
        statement = statement.where(ExpenseRecord.date_ms < endTime)
    visible = await _visibility(context)
    if visible is not None:
        statement = statement.where(visible)
    statement = statement.order_by(ExpenseRecord.date_ms, ExpenseRecord.id)
    return list((await context.session.scalars(statement)).unique())


# Expense records: mutations --------------------------------------------------------------------


@mutation.field("addExpenseRecord")
async def resolve_add_expense_record(
    _root: Any,
    info: Any,
    date: int,
    expenseTypeId: str,
    value: int,
    currency: str | None = None,
    personId: str | None = None,
    projectId: str | None = None,
    comment: str | None = None,
) -> ExpenseRecord:
    context: RequestContext = info.context
    if personId is None and projectId is None:
        raise BadInput("personId", f"{REQUIRED_ONE}; neither was given")
    person = await _person(context, personId) if personId is not None else None
    project = await _project(context, projectId) if projectId is not None else None
    if person is None and not await _may_access(context, None, projectId):
        raise PermissionDenied(
            "only administrators and the project's managers may log expenses on a project only"
        )
    expense_type = await expense_type_in_org(context, expenseTypeId, "expenseTypeId", active=True)
    _check_value(value)
    text = _check_comment(comment)
    await check_expense_access(context.session, context.organisation, person, expense_type,
                               project)
    if currency is None:
        currency = (person.currency if person is not None else None) or (
            context.organisation.currency
        )
    record = ExpenseRecord(
        organisation_id=context.org_id,
        date_ms=date,
        expense_type_id=expense_type.id,
        value=value,
        currency=currency,
        person_id=person.id if person is not None else None,
        project_id=project.id if project is not None else None,
        comment=text,
        created_ms=context.now_ms,
    )
    context.session.add(record)
    await context.session.flush()
    await context.session.refresh(record)
    return record


@mutation.field("deleteExpenseRecord")
async def resolve_delete_expense_record(_root: Any, info: Any, id: str) -> ExpenseRecord:
    context: RequestContext = info.context
    record = await _record(context, id)
    await context.session.delete(record)
    return record


@mutation.field("editExpenseRecordDate")
async def resolve_edit_expense_record_date(
    _root: Any, info: Any, id: str, date: int
) -> ExpenseRecord:
    record = await _record(info.context, id)
    record.date_ms = date
    return record


@mutation.field("editExpenseRecordExpense")
async def resolve_edit_expense_record_expense(
    _root: Any, info: Any, id: str, expenseTypeId: str
) -> ExpenseRecord:
    context: RequestContext = info.context
    record = await _record(context, id)
    expense_type = await expense_type_in_org(context, expenseTypeId, "expenseTypeId", active=True)
    if expense_type.id != record.expense_type_id:
        await check_expense_access(context.session, context.organisation, record.person,
                                   expense_type, record.project)
    record.expense_type_id = expense_type.id
    record.expense_type = expense_type
    return record


@mutation.field("editExpenseRecordPerson")
async def resolve_edit_expense_record_person(
    _root: Any, info: Any, id: str, personId: str | None = None
) -> ExpenseRecord:
    """Another person, or none (null): the record then stays on its project only."""
    context: RequestContext = info.context
    record = await _record(context, id)
    if personId is None:
        if record.project_id is None:
            raise BadInput("personId", f"{REQUIRED_ONE}: the record has no project")
        if not await _may_access(context, None, record.project_id):
            raise PermissionDenied(
                "only administrators and the project's managers may keep a project-only expense"
            )
        record.person_id = None
        record.person = None
        return record
    person = await _person(context, personId)
    record.person_id = person.id
    record.person = person
    return record


@mutation.field("editExpenseRecordProject")
async def resolve_edit_expense_record_project(
    _root: Any, info: Any, id: str, projectId: str | None = None
) -> ExpenseRecord:
    context: RequestContext = info.context
    record = await _record(context, id)
    if projectId is None:
        if record.person_id is None:
            raise BadInput("projectId", f"{REQUIRED_ONE}: the record has no person")
        record.project_id = None
        record.project = None
        return record
    project = await _project(context, projectId)
    if record.person_id is None and not await _may_access(context, None, project.id):
        raise PermissionDenied("you do not manage that project")
    if project.id != record.project_id:
        await check_expense_access(context.session, context.organisation, record.person,
                                   record.expense_type, project)
    record.project_id = project.id
    record.project = project
    return record


@mutation.field("editExpenseRecordAmountValue")
async def resolve_edit_expense_record_amount_value(
    _root: Any, info: Any, id: str, value: int
) -> ExpenseRecord:
    record = await _record(info.context, id)
    _check_value(value)
    record.value = value
    return record


@mutation.field("editExpenseRecordAmountCurrency")
async def resolve_edit_expense_record_amount_currency(
    _root: Any, info: Any, id: str, currency: str
) -> ExpenseRecord:
    record = await _record(info.context, id)
    record.currency = currency
    return record


@mutation.field("editExpenseRecordComment")
async def resolve_edit_expense_record_comment(
    _root: Any, info: Any, id: str, comment: str
) -> ExpenseRecord:
    record = await _record(info.context, id)
    record.comment = _check_comment(comment)
    return record


# Result fields ---------------------------------------------------------------------------------


@expense_record_type.field("date")
def resolve_date(record: ExpenseRecord, _info: Any) -> int:
    return record.date_ms


@expense_record_type.field("expenseType")
def resolve_expense_type(record: ExpenseRecord, _info: Any) -> ExpenseType:
    return record.expense_type


@expense_record_type.field("amount")
def resolve_amount(record: ExpenseRecord, _info: Any) -> dict[str, Any]:
    return amount(record.value, record.currency)


@expense_record_type.field("comment")
def resolve_comment(record: ExpenseRecord, _info: Any) -> str:
    return record.comment or ""


BINDABLES = [query, mutation, expense_record_type]
