"""The caller's notification history: the Journal messages by others that mention them
(a workflow entry on their timesheet mentions them too), newest first; read or not as they
marked them (markNotificationsRead, markAllNotificationsRead: the caller's own only).

Channel `journal` is the only one the service keeps; another channel has no items. `filters`
keeps the listed types (the message types: message, timesheetApproved …).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ariadne import MutationType, ObjectType, QueryType
from sqlalchemy import Select, func, or_, select, update

from plumbing.db import insert_for
from plumbing.ids import new_id
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import Person
from service.timesheets.journal import REFERENCE_TYPE
from service.timesheets.models import JournalMessage, MessageMention
from service.timesheets.notification_models import ALL_READ, NotificationRead

query = QueryType()
mutation = MutationType()
item_type = ObjectType("SvcNotificationHistoryItem")

CHANNEL = "journal"
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_IDS = 1000
MAX_FILTERS = 50
SUMMARY = 200


def _mine(context: RequestContext) -> Select[Any]:
    me = context.person.id
    return select(JournalMessage).where(
        JournalMessage.organisation_id == context.org_id,
        or_(JournalMessage.author_id.is_(None), JournalMessage.author_id != me),
        JournalMessage.id.in_(select(MessageMention.message_id).where(
            MessageMention.organisation_id == context.org_id, MessageMention.entity_id == me)),
    )


async def _reads(context: RequestContext) -> dict[str, int]:
    rows = await context.session.execute(select(NotificationRead.item_id, NotificationRead.read_ms)
                                         .where(NotificationRead.person_id == context.person.id))
    return {item: read for item, read in rows}


def _read_at(message: JournalMessage, reads: dict[str, int]) -> int | None:
    if message.id in reads:
        return reads[message.id]
    before = reads.get(ALL_READ)
    return before if before is not None and message.date_ms <= before else None


@query.field("getNotificationHistory")
async def resolve_history(_root: Any, info: Any, limit: int | None = None,
                          before: int | None = None, filters: Sequence[str | None] | None = None,
                          channel: str | None = None) -> dict[str, Any]:
    context: RequestContext = info.context
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise BadInput("limit", f"must be from 1 to {MAX_LIMIT}")
    if filters is not None and len(filters) > MAX_FILTERS:
        raise BadInput("filters", f"at most {MAX_FILTERS} types")
    if channel is not None and channel != CHANNEL:
        return {"items": [], "unreadCount": 0}
    statement = _mine(context)
    if filters:
        statement = statement.where(JournalMessage.type.in_([f for f in filters if f]))
    reads = await _reads(context)
    unread = statement.where(JournalMessage.id.not_in([i for i in reads if i != ALL_READ]))
    if ALL_READ in reads:
        unread = unread.where(JournalMessage.date_ms > reads[ALL_READ])
    count = await context.session.scalar(select(func.count()).select_from(unread.subquery()))
    if before is not None:
        statement = statement.where(JournalMessage.date_ms < before)
    messages = list(await context.session.scalars(statement.order_by(
        JournalMessage.date_ms.desc(), JournalMessage.id.desc()).limit(limit or DEFAULT_LIMIT)))
    authors = {p.id: p.name for p in await context.session.scalars(select(Person).where(
        Person.id.in_({m.author_id for m in messages if m.author_id})))}
    items = [{"message": m, "readAt": _read_at(m, reads), "actorName": authors.get(
        m.author_id or "")} for m in messages]
    return {"items": items, "unreadCount": int(count or 0)}


@item_type.field("id")
def resolve_id(item: dict[str, Any], _info: Any) -> str:
    return str(item["message"].id)


@item_type.field("type")
def resolve_type(item: dict[str, Any], _info: Any) -> str:
    return str(item["message"].type)


@item_type.field("channel")
def resolve_channel(_item: dict[str, Any], _info: Any) -> str:
    return CHANNEL


@item_type.field("createdAt")
def resolve_created(item: dict[str, Any], _info: Any) -> int:
    return int(item["message"].date_ms)


@item_type.field("payload")
def resolve_payload(item: dict[str, Any], _info: Any) -> dict[str, Any]:
    message: JournalMessage = item["message"]
    return {
        "actorId": message.author_id, "actorName": item["actorName"],
        "entityType": message.reference_type, "entityId": message.reference_id,
        "summary": message.content[:SUMMARY],
        "approvalEventId": message.reference_id if message.reference_type == REFERENCE_TYPE
        else None,
    }


async def _mark(context: RequestContext, item_ids: Sequence[str]) -> None:
    insert = insert_for(context.session)
    rows = [{"id": new_id(), "organisation_id": context.org_id, "person_id": context.person.id,
             "item_id": item, "read_ms": context.now_ms} for item in dict.fromkeys(item_ids)]
    if rows:
        await context.session.execute(insert(NotificationRead).on_conflict_do_nothing(
            index_elements=["person_id", "item_id"]), rows)


@mutation.field("markNotificationsRead")
async def resolve_mark(_root: Any, info: Any, ids: Sequence[str] | None = None) -> bool:
    context: RequestContext = info.context
    if ids is not None and len(ids) > MAX_IDS:
        raise BadInput("ids", f"at most {MAX_IDS} ids at once")
    # Only the caller's own notifications: other ids are ignored (nothing to tell apart).
    wanted = list(dict.fromkeys(ids or []))
    found = list(await context.session.scalars(
        _mine(context).with_only_columns(JournalMessage.id).where(JournalMessage.id.in_(wanted))))
    await _mark(context, found)
    return True


@mutation.field("markAllNotificationsRead")
async def resolve_mark_all(_root: Any, info: Any) -> bool:
    context: RequestContext = info.context
    await _mark(context, [ALL_READ])
    await context.session.execute(update(NotificationRead).where(
        NotificationRead.person_id == context.person.id, NotificationRead.item_id == ALL_READ)
        .values(read_ms=context.now_ms))
    return True


BINDABLES = [query, mutation, item_type]
