"""Editing and deleting Journal messages (editMessage, deleteMessage).

A message is edited or deleted by its author, or by an administrator; anyone else is refused.
The workflow's own entries (Submitted for approval, Approved by …) are not edited. A deleted
message's replies stay, replying to nothing. A message on a timesheet (the ones the fronts
post into their threads) sends `journalMessageEdited` / `journalMessageDeleted` to the
webhooks, so that the Slack threads follow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ariadne import MutationType
from sqlalchemy import delete, update

from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person
from service.timesheets.journal import REFERENCE_TYPE, add_mentions
from service.timesheets.journal_refs import ENTITY_MODELS
from service.timesheets.models import JournalMessage, MessageMention
from service.webhooks import (
    EVENT_JOURNAL_MESSAGE_DELETED,
    EVENT_JOURNAL_MESSAGE_EDITED,
    KICK,
    enqueue,
)

mutation = MutationType()


async def _own_message(context: RequestContext, message_id: str, doing: str) -> JournalMessage:
    message: JournalMessage = await get_in_org(context.session, JournalMessage, context.org_id,
                                               message_id, "id", "message")
    if message.author_id != context.person.id and not context.is_admin:
        raise PermissionDenied(f"only its author or an administrator may {doing} a message")
    return message


async def _mentioned(context: RequestContext,
                     mentions: Sequence[Mapping[str, Any] | None]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for index, item in enumerate(mentions):
        if item is None:
            raise BadInput(f"mentions[{index}]", "must be an object, not null")
        entity = await get_in_org(context.session, ENTITY_MODELS[item["type"]], context.org_id,
                                  item["id"], f"mentions[{index}].id", item["type"])
        found.append((entity.id, item["type"]))
    return found


async def _tell_threads(context: RequestContext, message: JournalMessage, event: str) -> None:
    if message.thread_id is None or message.reference_type != REFERENCE_TYPE:
        return
    author = (await context.session.get(Person, message.author_id)
              if message.author_id else None)
    await enqueue(context.session, context.org_id, event, {
        "messageId": message.id, "timesheetId": message.thread_id,
        "approvalEventId": message.reference_id, "content": message.content,
        "author": {"id": message.author_id, "name": author.name if author else None},
        "by": {"id": context.person.id, "name": context.person.name},
    }, context.now_ms)
    context.after_commit.append(KICK)


@mutation.field("editMessage")
async def resolve_edit_message(
    _root: Any, info: Any, id: str, content: str,
    mentions: Sequence[Mapping[str, Any] | None] | None = None,
) -> JournalMessage:
    context: RequestContext = info.context
    message = await _own_message(context, id, "edit")
    if message.type != "message":
        raise RuleViolation("an entry of the approval workflow cannot be edited")
    mentioned = None if mentions is None else await _mentioned(context, mentions)
    message.content = content
    if mentioned is not None:
        await context.session.execute(delete(MessageMention).where(
            MessageMention.organisation_id == context.org_id,
            MessageMention.message_id == message.id))
        add_mentions(context.session, context.org_id, message.id, mentioned)
    await context.session.flush()
    await _tell_threads(context, message, EVENT_JOURNAL_MESSAGE_EDITED)
    return message


@mutation.field("deleteMessage")
async def resolve_delete_message(_root: Any, info: Any, id: str) -> JournalMessage:
    context: RequestContext = info.context
    message = await _own_message(context, id, "delete")
    await context.session.execute(update(JournalMessage).where(
        JournalMessage.organisation_id == context.org_id,
        JournalMessage.reply_to_id == message.id).values(reply_to_id=None))
    await context.session.execute(delete(MessageMention).where(
        MessageMention.organisation_id == context.org_id,
        MessageMention.message_id == message.id))
    await _tell_threads(context, message, EVENT_JOURNAL_MESSAGE_DELETED)
    await context.session.delete(message)
    await context.session.flush()
    return message


BINDABLES = [mutation]
