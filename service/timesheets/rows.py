"""A timesheet and an approval event as the workflow's rules use them: what they read and
change of each, whether an entity of the session (submit, restart) or a plain row read by the
approve / reject path (`SheetRow`, `EventRow`: locks.py reads them as Core columns and writes
back what a decision changed; their attributes cost nothing to read or set, an instrumented
entity's cost calls each)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.timesheets.models import ApprovalEvent, Timesheet
from service.webhooks import Webhook


@dataclass(slots=True)
class SheetRow:
    """A timesheet's columns but its content snapshot."""

    id: str
    organisation_id: str
    person_id: str
    start_ms: int
    end_ms: int
    status: str
    stage: int
    submit_id: str | None
    round: int
    stages: list[dict[str, Any]]
    rejected_by_id: str | None
    stage_entered_ms: int | None
    reminded_ms: int | None
    updated_ms: int


@dataclass(slots=True)
class EventRow:
    """An approval event's columns (SvcApprovalEvent's resolvers read it as they read the
    entity)."""

    id: str
    organisation_id: str
    timesheet_id: str
    person_id: str
    start_ms: int
    end_ms: int
    kind: str
    status: str
    stage: int
    ts_ms: int
    by_id: str | None
    comment: str | None
    submit_id: str | None
    changes: dict[str, Any] | None
    rejected_stage: int | None
    system_action: str | None


# What the workflow's rules take: the session's entity (submit, restart) or the row the
# approve / reject path read (the same attributes; an entity's organisation_id is read-only).
SheetLike = Timesheet | SheetRow
EventLike = ApprovalEvent | EventRow


@dataclass(slots=True)
class ReadAhead:
    """What the approve / reject path read along with its submission for the webhook event it
    queues: the timesheet's owner's id, name and e-mail, and the organisation's webhooks."""

    owner: dict[str, Any]
    webhooks: list[Webhook]
