"""The Journal: messages on entities and the workflow's entries.

getJournal: messages authored by or mentioning the caller, newest first, before the
`timestamp` cursor (at most JOURNAL_PAGE per call). getMessages: the thread of one entity (a
timesheet's thread gathers every submit event of that timesheet), for those who may see it.
addMessage: the author defaults to the caller; only an administrator writes as someone else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType, ScalarType
from graphql import GraphQLError
from sqlalchemy import Select, func, or_, select
from sqlalchemy.sql.elements import ColumnElement

from plumbing.ids import new_id
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.graphql.filters import filter_clause
from service.lookup import get_in_org
from service.models import Person
from service.timesheets.access import can_view_timesheet
from service.timesheets.journal import REFERENCE_TYPE, add_mentions
from service.timesheets.journal_refs import ENTITY_MODELS
from service.timesheets.locks import Submission
from service.timesheets.models import ApprovalEvent, JournalMessage, MessageMention, Timesheet
from service.value_words import choice_problem
from service.webhooks import EVENT_JOURNAL_MESSAGE, KICK, enqueue

query = QueryType()
mutation = MutationType()
message_type = ObjectType("SvcMessage")
content_scalar = ScalarType("SvcMessageContent")
entity_type_scalar = ScalarType("SvcType")
message_type_scalar = ScalarType("SvcMessageType")

JOURNAL_PAGE = 200
MAX_CONTENT = 10_000
MESSAGE_TYPES = (
    "message", "timesheetSubmitted", "timesheetApproved", "timesheetRejected",
    "timesheetAutoSubmitted", "timesheetAutoApproved",
)


@content_scalar.value_parser
def parse_content(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GraphQLError("SvcMessageContent must be a non-empty string")
    if len(value) > MAX_CONTENT:
        raise GraphQLError(f"SvcMessageContent must be at most {MAX_CONTENT} characters")
    return value


@entity_type_scalar.value_parser
def parse_entity_type(value: Any) -> str:
    if isinstance(value, str) and value in ENTITY_MODELS:
        return value
    raise GraphQLError(f"SvcType {choice_problem(list(ENTITY_MODELS), value)}")


@message_type_scalar.value_parser
def parse_message_type(value: Any) -> str:
    if isinstance(value, str) and value in MESSAGE_TYPES:
        return value
    raise GraphQLError(f"SvcMessageType {choice_problem(list(MESSAGE_TYPES), value)}")


# --- entities and who may see them ---------------------------------------------------------


async def _entity(context: RequestContext, reference: Mapping[str, Any], argument: str) -> Any:
    kind = reference["type"]
    model = ENTITY_MODELS[kind]
    entity = await get_in_org(context.session, model, context.org_id, reference["id"],
                              f"{argument}.id", kind)
    return entity


async def _may_see(context: RequestContext, kind: str, entity: Any) -> bool:
    if kind == REFERENCE_TYPE:
        timesheet = await context.session.get(Timesheet, entity.timesheet_id)
        return timesheet is not None and await can_view_timesheet(context, timesheet)
    if kind == "person":
        return await context.can_access_person_data(entity.id)
    if kind == "timeRecord":
        return await context.can_access_person_data(entity.person_id)
    return True


def _thread_clause(kind: str, entity: Any) -> ColumnElement[bool]:
    clause: ColumnElement[bool] = JournalMessage.reference_id == entity.id
    if kind == REFERENCE_TYPE:
        clause = or_(JournalMessage.thread_id == entity.timesheet_id, clause)
    return clause


def _conditions(org_id: str) -> dict[str, Any]:
    def mentioning(entity_id: str) -> ColumnElement[bool]:
        clause: ColumnElement[bool] = or_(
            JournalMessage.reference_id == entity_id,
            JournalMessage.id.in_(
                select(MessageMention.message_id).where(
                    MessageMention.organisation_id == org_id,
                    MessageMention.entity_id == entity_id,
                )
            ),
        )
        return clause

    return {
        "type": lambda value: JournalMessage.type == value,
        "entityId": mentioning,
        "content": lambda value: func.lower(JournalMessage.content).contains(
            str(value).lower(), autoescape=True
        ),
        "isPinned": lambda value: JournalMessage.is_pinned.is_(bool(value)),
    }


def _page(
    statement: Select[Any],
    timestamp: int | None,
    filters: Sequence[Mapping[str, Any] | None] | None,
    org_id: str,
) -> Select[Any]:
    if timestamp is not None:
        statement = statement.where(JournalMessage.date_ms < timestamp)
    return (
        statement.where(filter_clause(filters, _conditions(org_id)))
        .order_by(JournalMessage.date_ms.desc(), JournalMessage.id.desc())
        .limit(JOURNAL_PAGE)
    )


@query.field("getJournal")
async def resolve_get_journal(
    _root: Any, info: Any, timestamp: int | None = None,
    filter: Sequence[Mapping[str, Any] | None] | None = None,
) -> list[JournalMessage]:
    context: RequestContext = info.context
    me = context.person.id
    statement = select(JournalMessage).where(
        JournalMessage.organisation_id == context.org_id,
        or_(
            JournalMessage.author_id == me,
            JournalMessage.id.in_(
                select(MessageMention.message_id).where(
                    MessageMention.organisation_id == context.org_id,
                    MessageMention.entity_id == me,
                )
            ),
        ),
    )
    return list(await context.session.scalars(_page(statement, timestamp, filter,
                                                     context.org_id)))


@query.field("getMessages")
async def resolve_get_messages(
    _root: Any, info: Any, of: Mapping[str, Any], timestamp: int | None = None,
    filter: Sequence[Mapping[str, Any] | None] | None = None,
) -> list[JournalMessage]:
    context: RequestContext = info.context
    entity = await _entity(context, of, "of")
    if not await _may_see(context, of["type"], entity):
        raise PermissionDenied("you may not see the messages of this item")
    statement = select(JournalMessage).where(
        JournalMessage.organisation_id == context.org_id, _thread_clause(of["type"], entity)
    )
    return list(await context.session.scalars(_page(statement, timestamp, filter,
                                                     context.org_id)))


@mutation.field("addMessage")
async def resolve_add_message(
    _root: Any,
    info: Any,
    content: str,
    authorId: str | None = None,
    reference: Mapping[str, Any] | None = None,
    mentions: Sequence[Mapping[str, Any] | None] | None = None,
    replyTo: str | None = None,
) -> JournalMessage:
    context: RequestContext = info.context
    author_id = authorId or context.person.id
    if author_id != context.person.id:
        if not context.is_admin:
            raise PermissionDenied("only an administrator may write as someone else")
        await get_in_org(context.session, Person, context.org_id, author_id, "authorId",
                         "person")
    message = JournalMessage(
        id=new_id(), organisation_id=context.org_id, author_id=author_id,
        date_ms=context.now_ms, type="message", content=content, is_pinned=False,
    )
    parent: JournalMessage | None = None
    if replyTo is not None:
        parent = await get_in_org(context.session, JournalMessage, context.org_id, replyTo,
                                  "replyTo", "message")
        message.reply_to_id = parent.id
    # An event this request just approved or rejected: read already (the reply by mail
    # that approves with a comment), its event, timesheet and webhooks not read again.
    decided: Submission | None = (
        context.decided.get(reference["id"])
        if reference is not None and reference["type"] == REFERENCE_TYPE else None
    )
    if decided is not None:
        if not await can_view_timesheet(context, decided.timesheet):
            raise PermissionDenied("you may not write on this item")
        message.reference_id = decided.event.id
        message.reference_type = REFERENCE_TYPE
        message.thread_id = decided.event.timesheet_id
    elif reference is not None:
        entity = await _entity(context, reference, "reference")
        if not await _may_see(context, reference["type"], entity):
            raise PermissionDenied("you may not write on this item")
        message.reference_id = entity.id
        message.reference_type = reference["type"]
        if reference["type"] == REFERENCE_TYPE:
            message.thread_id = entity.timesheet_id
    elif parent is not None:
        message.reference_id = parent.reference_id
        message.reference_type = parent.reference_type
        message.thread_id = parent.thread_id
    mentioned: list[tuple[str, str]] = []
    for index, item in enumerate(mentions or []):
        if item is None:
            raise BadInput(f"mentions[{index}]", "must be an object, not null")
        entity = await _entity(context, item, f"mentions[{index}]")
        mentioned.append((entity.id, item["type"]))
    context.session.add(message)
    await context.session.flush()
    add_mentions(context.session, context.org_id, message.id, mentioned)
    if message.thread_id is not None and message.reference_type == REFERENCE_TYPE:
        referenced = decided.event if decided is not None else await context.session.get(
            ApprovalEvent, message.reference_id)
        author = await context.session.get(Person, author_id)
        await enqueue(context.session, context.org_id, EVENT_JOURNAL_MESSAGE, {
            "messageId": message.id, "timesheetId": message.thread_id,
            "approvalEventId": message.reference_id,
            "submitId": (referenced.submit_id or referenced.id) if referenced else None,
            "author": {"id": author_id, "name": author.name if author else None},
            "content": message.content, "replyTo": message.reply_to_id,
        }, context.now_ms, webhooks=decided.ahead.webhooks if decided is not None else None)
        context.after_commit.append(KICK)
    return message


@message_type.field("author")
async def resolve_author(message: JournalMessage, info: Any) -> Person | None:
    if message.author_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(Person, message.author_id)


@message_type.field("date")
def resolve_date(message: JournalMessage, _info: Any) -> int:
    return message.date_ms


@message_type.field("isPinned")
def resolve_is_pinned(message: JournalMessage, _info: Any) -> bool:
    return message.is_pinned


@message_type.field("reference")
def resolve_reference(message: JournalMessage, _info: Any) -> dict[str, str] | None:
    if message.reference_id is None or message.reference_type is None:
        return None
    return {"id": message.reference_id, "type": message.reference_type}


@message_type.field("mentions")
async def resolve_mentions(message: JournalMessage, info: Any) -> list[dict[str, str]]:
    context: RequestContext = info.context
    rows = await context.session.scalars(
        select(MessageMention)
        .where(MessageMention.message_id == message.id)
        .order_by(MessageMention.position)
    )
    return [{"id": m.entity_id, "type": m.entity_type} for m in rows]


@message_type.field("replyTo")
async def resolve_reply_to(message: JournalMessage, info: Any) -> JournalMessage | None:
    if message.reply_to_id is None:
        return None
    context: RequestContext = info.context
    return await context.session.get(JournalMessage, message.reply_to_id)


BINDABLES = [query, mutation, message_type, content_scalar, entity_type_scalar,
             message_type_scalar]
