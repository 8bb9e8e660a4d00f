"""Row locks for the workflow's transitions, per dialect.

Every transition first locks the timesheet row (SELECT ... FOR UPDATE on PostgreSQL; SQLite
serialises writers with BEGIN IMMEDIATE) and re-reads it, so two approvals of one stage at the
same moment are applied one after the other: the second sees the stage already moved on and is
refused with a message naming the current stage.

Approve and reject read their submission (`lock_submission`) as plain columns into rows of
their own and write back what they changed (`save_submission`): Core statements, no entity
loaded or flushed. Submit and restart work on the session's entity (`lock_timesheet`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.util import identity_key

from service.models import Person
from service.read_memo import memo
from service.timesheets.models import Approval, ApprovalEvent, Timesheet
from service.timesheets.rows import EventRow, ReadAhead, SheetRow
from service.webhooks import webhooks_column, webhooks_in

# Read on every approval request, built once (building a statement and its cache key costs
# more than running it): the values are parameters.
_LOCK_TIMESHEET = (
    select(Timesheet)
    .where(Timesheet.id == bindparam("wf_id"))
    .with_for_update()
    .execution_options(populate_existing=True)
)
_EVENTS = cast(Table, ApprovalEvent.__table__)
_SHEETS = cast(Table, Timesheet.__table__)
_PERSONS = cast(Table, Person.__table__)
_APPROVALS = cast(Table, Approval.__table__)
# The approve / reject path reads plain columns (Core): the ORM's loading of three entities
# and the unit of work's flush of two of them cost more than the statements themselves.
# Everything of the event (it is the mutation's answer), of the timesheet all but its content
# snapshot, of the owner what the webhook event names.
_EVENT_COLUMNS = tuple(_EVENTS.c[name] for name in EventRow.__slots__)
_SHEET_COLUMNS = tuple(_SHEETS.c[name] for name in SheetRow.__slots__)
_OWNER_COLUMNS = (_PERSONS.c.id, _PERSONS.c.name, _PERSONS.c.email)
_SUBMISSION_COLUMNS = tuple(
    column.label(f"{prefix}_{column.key}")
    for prefix, columns in (("e", _EVENT_COLUMNS), ("t", _SHEET_COLUMNS), ("o", _OWNER_COLUMNS))
    for column in columns
)
_SUBMISSION_WHERE = (
    _EVENTS.c.id == bindparam("wf_event"),
    _EVENTS.c.organisation_id == bindparam("wf_org"),
)
# A submit event with its timesheet (locked) and the timesheet's owner, in one statement.
_SUBMISSION = (
    select(*_SUBMISSION_COLUMNS)
    .join(_SHEETS, _SHEETS.c.id == _EVENTS.c.timesheet_id)
    .join(_PERSONS, _PERSONS.c.id == _SHEETS.c.person_id)
    .where(*_SUBMISSION_WHERE)
    .with_for_update(of=_SHEETS)
)
# On SQLite the same with the organisation's webhooks (for the event the decision queues), and
# with the current round's approvals (a row each) when asked: there the transaction holds the
# write lock from its BEGIN, so nothing changes between statements. On PostgreSQL a statement
# that waited for the row lock sees the locked row's new version but the other tables as they
# were when it started: the event, the webhooks and the approvals are read after the lock.
_WEBHOOKS_SQLITE = webhooks_column(bindparam("wf_org"), "sqlite")
_SUBMISSION_SQLITE = _SUBMISSION.add_columns(_WEBHOOKS_SQLITE)
_SUBMISSION_WITH_APPROVALS = (
    select(*_SUBMISSION_COLUMNS, _WEBHOOKS_SQLITE, _APPROVALS.c.stage, _APPROVALS.c.approver_id)
    .join(_SHEETS, _SHEETS.c.id == _EVENTS.c.timesheet_id)
    .join(_PERSONS, _PERSONS.c.id == _SHEETS.c.person_id)
    .outerjoin(
        _APPROVALS,
        and_(_APPROVALS.c.submit_id == _SHEETS.c.submit_id,
             _APPROVALS.c.round == _SHEETS.c.round),
    )
    .where(*_SUBMISSION_WHERE)
)
# On PostgreSQL, after the lock: the event again with the webhooks, and with the current
# round's approvals when asked.
_EVENT_AGAIN = select(*_EVENT_COLUMNS, webhooks_column(bindparam("wf_org"), "postgresql")).where(
    _EVENTS.c.id == bindparam("wf_event"))
_EVENT_WITH_APPROVALS = (
    _EVENT_AGAIN.add_columns(_APPROVALS.c.stage.label("a_stage"), _APPROVALS.c.approver_id)
    .outerjoin(
        _APPROVALS,
        and_(_APPROVALS.c.submit_id == bindparam("wf_submit"),
             _APPROVALS.c.round == bindparam("wf_round")),
    )
)
_EVENT_KEYS = tuple(c.key for c in _EVENT_COLUMNS)
_SHEET_KEYS = tuple(c.key for c in _SHEET_COLUMNS)
_SHEET_END = len(_EVENT_KEYS) + len(_SHEET_KEYS)
_OWNER_END = _SHEET_END + len(_OWNER_COLUMNS)
# What a decision changes, written back by `save_submission` (one UPDATE a row, when changed).
_EVENT_CHANGES = ("status", "stage", "comment", "rejected_stage")
_SHEET_CHANGES = ("status", "stage", "rejected_by_id", "stage_entered_ms", "reminded_ms",
                  "updated_ms")
# What a decision may change of each row, as a tuple (attrgetter of several names: read in C)
_EVENT_CHANGING = attrgetter(*_EVENT_CHANGES)
_SHEET_CHANGING = attrgetter(*_SHEET_CHANGES)
_UPDATE_EVENT = update(_EVENTS).where(_EVENTS.c.id == bindparam("wf_row"))
_UPDATE_SHEET = update(_SHEETS).where(_SHEETS.c.id == bindparam("wf_row"))


def _on_sqlite(session: AsyncSession) -> bool:
    bind = session.bind
    return bind is not None and bind.dialect.name == "sqlite"


async def lock_timesheet(session: AsyncSession, timesheet_id: str) -> Timesheet:
    """The timesheet row, locked for this transaction and re-read from the database."""
    found = (await session.scalars(_LOCK_TIMESHEET, {"wf_id": timesheet_id})).one()
    return found


@dataclass
class Submission:
    """A submit event and its timesheet, locked for the transaction, as objects of their own
    (not the session's: read as plain columns, a decision's changes to them are written by
    `save_submission`), and what was read with them for the webhook event (the owner, the
    organisation's webhooks). `approvals`: the current round's {stage: approver ids}, when
    asked for."""

    event: EventRow
    timesheet: SheetRow
    ahead: ReadAhead
    approvals: dict[int, set[str]] | None
    # The columns a decision may change, as read: `save_submission` writes what differs.
    event_was: tuple[Any, ...]
    timesheet_was: tuple[Any, ...]


def _submission(row: Any, event_row: Any, webhooks: Any,
                approvals: dict[int, set[str]] | None) -> Submission:
    event = EventRow(*event_row[:len(_EVENT_KEYS)])
    timesheet = SheetRow(*row[len(_EVENT_KEYS):_SHEET_END])
    owner = dict(zip(("id", "name", "email"), row[_SHEET_END:_OWNER_END], strict=True))
    return Submission(event, timesheet, ReadAhead(owner, webhooks_in(webhooks)), approvals,
                      _EVENT_CHANGING(event), _SHEET_CHANGING(timesheet))


async def lock_submission(
    session: AsyncSession, org_id: str, event_id: str, *, with_approvals: bool = False
) -> Submission | None:
    """The approval event of the organisation with its timesheet locked and read (None: no
    such event). One statement on SQLite: a transaction there reads one snapshot from its
    first statement to its end, and writers hold the write lock from BEGIN IMMEDIATE. On
    PostgreSQL the event (and the approvals) are read again by a second statement once the
    lock is held: the locking statement, if it waited, returns the timesheet's new version but
    the event as it was before (another transaction may have changed it meanwhile)."""
    if session.new or session.dirty or session.deleted:
        await session.flush()  # what the ORM's autoflush did before its read
    connection = await session.connection()
    params = {"wf_event": event_id, "wf_org": org_id}
    if _on_sqlite(session):
        if with_approvals:
            rows = (await connection.execute(_SUBMISSION_WITH_APPROVALS, params)).all()
            if not rows:
                return None
            return _submission(rows[0], rows[0], rows[0][_OWNER_END], _approvals_in(
                (row[_OWNER_END + 1], row[_OWNER_END + 2]) for row in rows))
        found = (await connection.execute(_SUBMISSION_SQLITE, params)).first()
        return None if found is None else _submission(found, found, found[_OWNER_END], None)
    found = (await connection.execute(_SUBMISSION, params)).first()
    if found is None:
        return None
    webhooks_at = len(_EVENT_KEYS)
    if not with_approvals:
        again = (await connection.execute(_EVENT_AGAIN, params)).one()
        return _submission(found, again, again[webhooks_at], None)
    reread = (await connection.execute(_EVENT_WITH_APPROVALS, {
        **params,
        "wf_submit": found[webhooks_at + _SHEET_KEYS.index("submit_id")],
        "wf_round": found[webhooks_at + _SHEET_KEYS.index("round")],
    })).all()
    return _submission(found, reread[0], reread[0][webhooks_at], _approvals_in(
        (row[webhooks_at + 1], row[webhooks_at + 2]) for row in reread))


async def save_submission(session: AsyncSession, submission: Submission) -> None:
    """Write what a decision changed of the submission's event and timesheet (an UPDATE of
    each that changed, as the unit of work's flush did), and let the session forget what it
    holds of either row and what it remembered of its reads (it wrote)."""
    connection = await session.connection()
    for row, statement, names, changing, was in (
        (submission.event, _UPDATE_EVENT, _EVENT_CHANGES, _EVENT_CHANGING, submission.event_was),
        (submission.timesheet, _UPDATE_SHEET, _SHEET_CHANGES, _SHEET_CHANGING,
         submission.timesheet_was),
    ):
        now = changing(row)
        if now == was:
            continue
        await connection.execute(statement, {"wf_row": row.id, **dict(zip(names, now,
                                                                              strict=True))})
        entity = ApprovalEvent if isinstance(row, EventRow) else Timesheet
        held = session.identity_map.get(identity_key(entity, row.id))
        if held is not None:
            session.expire(held)
    memo(session).clear()


def _approvals_in(pairs: Iterable[tuple[Any, Any]]) -> dict[int, set[str]]:
    """{stage: approver ids} of (stage, approver id) pairs (stage None: no approval)."""
    approvals: dict[int, set[str]] = {}
    for stage, approver_id in pairs:
        if stage is not None:
            approvals.setdefault(stage, set()).add(approver_id)
    return approvals

