"""Row locks for the workflow's transitions, per dialect.

Every transition first locks the timesheet row (SELECT ... FOR UPDATE on PostgreSQL; SQLite
serialises writers with BEGIN IMMEDIATE) and re-reads it, so two approvals of one stage at the
same moment are applied one after the other: the second sees the stage already moved on and is
refused with a message naming the current stage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Person
from service.models.approval import Approval, ApprovalEvent, Timesheet

# Read on every approval request, built once (building a statement and its cache key costs
# more than running it): the values are parameters.
_LOCK_TIMESHEET = (
    select(Timesheet)
    .where(Timesheet.id == bindparam("wf_id"))
    .with_for_update()
    .execution_options(populate_existing=True)
)
# A submit event with its timesheet (locked) and the timesheet's owner, in one statement.
_SUBMISSION_COLUMNS = (ApprovalEvent, Timesheet, Person)
_SUBMISSION_WHERE = (
    ApprovalEvent.id == bindparam("wf_event"),
    ApprovalEvent.organisation_id == bindparam("wf_org"),
)
_SUBMISSION = (
    select(*_SUBMISSION_COLUMNS)
    .join(Timesheet, Timesheet.id == ApprovalEvent.timesheet_id)
    .join(Person, Person.id == Timesheet.person_id)
    .where(*_SUBMISSION_WHERE)
    .with_for_update(of=Timesheet)
    .execution_options(populate_existing=True)
)
# The same with the current round's approvals (a row each), for SQLite only: there the
# transaction holds the write lock from its BEGIN, so nothing changes between statements. On
# PostgreSQL a statement that waited for the row lock sees the locked row's new version but
# the other tables as they were when it started: approvals are read after the lock.
_SUBMISSION_WITH_APPROVALS = (
    select(*_SUBMISSION_COLUMNS, Approval.stage, Approval.approver_id)
    .join(Timesheet, Timesheet.id == ApprovalEvent.timesheet_id)
    .join(Person, Person.id == Timesheet.person_id)
    .outerjoin(
        Approval,
        and_(Approval.submit_id == Timesheet.submit_id, Approval.round == Timesheet.round),
    )
    .where(*_SUBMISSION_WHERE)
    .execution_options(populate_existing=True)
)
# On PostgreSQL, after the lock: the event again, with the current round's approvals.
_EVENT_WITH_APPROVALS = (
    select(ApprovalEvent, Approval.stage, Approval.approver_id)
    .outerjoin(
        Approval,
        and_(Approval.submit_id == bindparam("wf_submit"),
             Approval.round == bindparam("wf_round")),
    )
    .where(ApprovalEvent.id == bindparam("wf_event"))
    .execution_options(populate_existing=True)
)


def _on_sqlite(session: AsyncSession) -> bool:
    bind = session.bind
    return bind is not None and bind.dialect.name == "sqlite"


async def lock_timesheet(session: AsyncSession, timesheet_id: str) -> Timesheet:
    """The timesheet row, locked for this transaction and re-read from the database."""
    found = (await session.scalars(_LOCK_TIMESHEET, {"wf_id": timesheet_id})).one()
    return found


@dataclass
class Submission:
    """A submit event and its timesheet, locked for the transaction, and the timesheet's owner
    (held here, the session's `people` finds it without reading it again). `approvals`: the
    current round's {stage: approver ids}, when asked for."""

    event: ApprovalEvent
    timesheet: Timesheet
    owner: Person
    approvals: dict[int, set[str]] | None


async def lock_submission(
    session: AsyncSession, org_id: str, event_id: str, *, with_approvals: bool = False
) -> Submission | None:
    """The approval event of the organisation with its timesheet locked and re-read (None: no
    such event). One statement on SQLite: a transaction there reads one snapshot from its
    first statement to its end, and writers hold the write lock from BEGIN IMMEDIATE. On
    PostgreSQL the event (and the approvals) are read again by a second statement once the
    lock is held: the locking statement, if it waited, returns the timesheet's new version but
    the event as it was before (another transaction may have changed it meanwhile)."""
    params = {"wf_event": event_id, "wf_org": org_id}
    if _on_sqlite(session):
        if with_approvals:
            rows = (await session.execute(_SUBMISSION_WITH_APPROVALS, params)).all()
            if not rows:
                return None
            return Submission(rows[0][0], rows[0][1], rows[0][2], _approvals_in(rows))
        found = (await session.execute(_SUBMISSION, params)).first()
        return None if found is None else Submission(found[0], found[1], found[2], None)
    found = (await session.execute(_SUBMISSION, params)).first()
    if found is None:
        return None
    event, timesheet, owner = found
    if not with_approvals:
        await session.refresh(event)
        return Submission(event, timesheet, owner, None)
    reread = (await session.execute(_EVENT_WITH_APPROVALS, {
        "wf_event": event.id, "wf_submit": timesheet.submit_id, "wf_round": timesheet.round,
    })).all()
    return Submission(event, timesheet, owner, _approvals_in(reread))


def _approvals_in(rows: Iterable[Any]) -> dict[int, set[str]]:
    """{stage: approver ids} of rows with `stage` and `approver_id` columns (None: no row)."""
    approvals: dict[int, set[str]] = {}
    for row in rows:
        if row.stage is not None:
            approvals.setdefault(row.stage, set()).add(row.approver_id)
    return approvals

