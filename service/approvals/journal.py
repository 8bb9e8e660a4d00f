"""Workflow entries in the Journal: Submitted for approval, Approved by, Rejected by,
Auto-submitted, Auto-approved; each tagged with its stage and threaded on its timesheet."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.ext.asyncio import AsyncSession

from service.ids import new_id
from service.models.approval import JournalMessage, MessageMention, Timesheet

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
    for position, (entity_id, entity_type) in enumerate(dict.fromkeys(mentions), start):
        session.add(
            MessageMention(
                organisation_id=org_id,
                message_id=message_id,
                entity_id=entity_id,
                entity_type=entity_type,
                position=position,
            )
        )


def add_entry(
    session: AsyncSession,
    timesheet: Timesheet,
    kind: str,
    stage: int | None,
    author_id: str | None,
    content: str,
    now_ms: int,
    mention_person_ids: Iterable[str] = (),
) -> JournalMessage:
    """A workflow entry on the timesheet's thread, mentioning its owner (it is in their feed)
    and whoever else must see it (the approvers now asked)."""
    message = JournalMessage(
        organisation_id=timesheet.organisation_id,
        author_id=author_id,
        date_ms=now_ms,
        type=MESSAGE_TYPES[kind],
        content=content,
        reference_id=timesheet.submit_id,
        reference_type=REFERENCE_TYPE,
        thread_id=timesheet.id,
        kind=kind,
        stage=stage,
    )
    message.id = new_id()
    session.add(message)
    add_mentions(
        session,
        timesheet.organisation_id,
        message.id,
        [(timesheet.person_id, "person"), *((p, "person") for p in mention_person_ids)],
    )
    return message
