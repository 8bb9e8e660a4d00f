"""Workflow entries in the Journal: Submitted for approval, Approved by, Rejected by,
Auto-submitted, Auto-approved; each tagged with its stage and threaded on its timesheet."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import write_rows
from plumbing.ids import new_id
from service.timesheets.models import JournalMessage, MessageMention
from service.timesheets.rows import SheetLike

SUBMITTED = "Submitted for approval"
APPROVED = "Approved by"
REJECTED = "Rejected by"
AUTO_SUBMITTED = "Auto-submitted"
AUTO_APPROVED = "Auto-approved"

# SvcMessage.type of each entry kind (plain messages are "message").
MESSAGE_TYPES = {
    SUBMITTED: "timesheetSubmitted",
    APPROVED: "timesheetApproved",
    REJECTED: "timesheetRejected",
    AUTO_SUBMITTED: "timesheetAutoSubmitted",
    AUTO_APPROVED: "timesheetAutoApproved",
}
REFERENCE_TYPE = "approvalEvent"


def add_mentions(
    session: AsyncSession,
    org_id: str,
    message_id: str,
    mentions: Iterable[tuple[str, str]],
    start: int = 0,
) -> None:
    """Mentions of a message made as an object (pending in the session): written by its flush,
    after the message."""
    for row in _mention_rows(org_id, message_id, mentions, start):
        session.add(MessageMention(**row))


def _mention_rows(
    org_id: str, message_id: str, mentions: Iterable[tuple[str, str]], start: int
) -> list[dict[str, Any]]:
    """One row per distinct mention, numbered from `start` in the order given."""
    return [
        {"id": new_id(), "organisation_id": org_id, "message_id": message_id,
         "entity_id": entity_id, "entity_type": entity_type, "position": position}
        for position, (entity_id, entity_type) in enumerate(dict.fromkeys(mentions), start)
    ]


# Workflow entries are written as they are made (Core INSERTs built once): nothing reads them
# back as objects, and they skip the unit of work's bookkeeping of a flush.
_INSERT_MESSAGE = insert(cast(Table, JournalMessage.__table__))
_INSERT_MENTION = insert(cast(Table, MessageMention.__table__))


async def write_mentions(
    session: AsyncSession,
    org_id: str,
    message_id: str,
    mentions: Iterable[tuple[str, str]],
    start: int = 0,
) -> None:
    """`add_mentions` for a message already written (one INSERT, at once)."""
    rows = _mention_rows(org_id, message_id, mentions, start)
    if rows:
        await write_rows(session, _INSERT_MENTION, rows)


async def write_entry(
    session: AsyncSession,
    timesheet: SheetLike,
    kind: str,
    stage: int | None,
    author_id: str | None,
    content: str,
    now_ms: int,
    mention_person_ids: Iterable[str] = (),
) -> str:
    """A workflow entry on the timesheet's thread, mentioning its owner (it is in their feed)
    and whoever else must see it (the approvers now asked), written at once; its id."""
    message_id = new_id()
    await write_rows(session, _INSERT_MESSAGE, {
        "id": message_id,
        "organisation_id": timesheet.organisation_id,
        "author_id": author_id,
        "date_ms": now_ms,
        "type": MESSAGE_TYPES[kind],
        "content": content,
        "reference_id": timesheet.submit_id,
        "reference_type": REFERENCE_TYPE,
        "thread_id": timesheet.id,
        "reply_to_id": None,
        "is_pinned": False,
        "kind": kind,
        "stage": stage,
    })
    await write_mentions(
        session,
        timesheet.organisation_id,
        message_id,
        [(timesheet.person_id, "person"), *((p, "person") for p in mention_person_ids)],
    )
    return message_id


async def write_messages(
    session: AsyncSession, org_id: str,
    messages: Sequence[tuple[dict[str, Any], Iterable[tuple[str, str]]]],
) -> None:
    """Messages (their columns but the organisation's) with their mentions, written at once:
    one INSERT of the messages, one of the mentions."""
    if not messages:
        return
    await write_rows(session, _INSERT_MESSAGE, [
        {"organisation_id": org_id, "thread_id": None, "reply_to_id": None,
         "is_pinned": False, "kind": None, "stage": None, **columns}
        for columns, _mentions in messages
    ])
    mentions = [row for columns, named in messages
                for row in _mention_rows(org_id, columns["id"], named, 0)]
    if mentions:
        await write_rows(session, _INSERT_MENTION, mentions)
