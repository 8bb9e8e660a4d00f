"""Reading a timesheet's current approval state: which timesheet covers a moment or a period,
the current round's approvals, who is still awaited, and the persons named."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.util import identity_key

from plumbing.in_lists import in_lists
from service.models import Person
from service.timesheets import stages as st
from service.timesheets.actor import MAX_PERIOD_MS
from service.timesheets.models import (
    STATUS_DRAFT,
    STATUS_SUBMITTED,
    Approval,
    ApprovalEvent,
    Timesheet,
)
from service.timesheets.rows import SheetLike

# Read on every approval request, built once (building a statement and its cache key costs
# more than running it): the values are parameters.
# Every search of a person's timesheets by time also bounds start_ms from below ("wf_earliest",
# MAX_PERIOD_MS before the period or moment): no timesheet is longer (submit refuses one), so
# it finds the same rows, and the index on (organisation, person, start_ms) then reads only
# those instead of all of the person's earlier timesheets.
_TIMESHEETS_OVERLAPPING = (
    select(Timesheet)
    .where(
        Timesheet.organisation_id == bindparam("wf_org"),
        Timesheet.person_id == bindparam("wf_person"),
        Timesheet.start_ms < bindparam("wf_end"),
        Timesheet.start_ms > bindparam("wf_earliest"),
        Timesheet.end_ms > bindparam("wf_start"),
    )
    .order_by(Timesheet.updated_ms.desc())
)
# Built once (every time-record change asks it): the timesheet covering a moment.
_COVERING = (
    select(Timesheet)
    .where(
        Timesheet.organisation_id == bindparam("wf_org"),
        Timesheet.person_id == bindparam("wf_person"),
        Timesheet.start_ms <= bindparam("wf_moment"),
        Timesheet.start_ms > bindparam("wf_earliest"),
        Timesheet.end_ms > bindparam("wf_moment"),
        Timesheet.status != STATUS_DRAFT,
    )
    .order_by(Timesheet.updated_ms.desc())
    .limit(1)
)
_APPROVALS = select(Approval.stage, Approval.approver_id).where(
    Approval.submit_id == bindparam("wf_submit"), Approval.round == bindparam("wf_round")
)
_APPROVALS_DETAIL = (
    select(Approval.stage, Approval.approver_id, Approval.ts_ms)
    .where(Approval.submit_id == bindparam("wf_submit"), Approval.round == bindparam("wf_round"))
    .order_by(Approval.ts_ms, Approval.id)
)
# Persons are never written by the workflow: reading them needs no flush of what is pending.
_PEOPLE = (
    select(Person)
    .where(
        Person.organisation_id == bindparam("wf_org"),
        Person.id.in_(bindparam("wf_ids", expanding=True)),
    )
    .execution_options(autoflush=False)
)


_SHEETS = cast(Table, Timesheet.__table__)
# Built once: what deciding on a time-record change needs of the covering timesheet (every
# time-record write asks). Core columns: most writes find no timesheet, and the ORM's setup
# of a load cost more than the query; the workflow loads the entity when it acts on one.
_COVERING_STATE = (
    select(
        _SHEETS.c.id,
        _SHEETS.c.status,
        _SHEETS.c.start_ms,
        _SHEETS.c.end_ms,
        _SHEETS.c.stage,
        _SHEETS.c.stages,
        _SHEETS.c.rejected_by_id,
    )
    .where(
        _SHEETS.c.organisation_id == bindparam("wf_org"),
        _SHEETS.c.person_id == bindparam("wf_person"),
        _SHEETS.c.start_ms <= bindparam("wf_moment"),
        _SHEETS.c.start_ms > bindparam("wf_earliest"),
        _SHEETS.c.end_ms > bindparam("wf_moment"),
        _SHEETS.c.status != STATUS_DRAFT,
    )
    .order_by(_SHEETS.c.updated_ms.desc())
    .limit(1)
)


@dataclass(frozen=True)
class CoveringState:
    """What deciding on a time-record change needs of the timesheet covering it."""

    id: str
    status: str
    start_ms: int
    end_ms: int
    stage: int
    stages: list[dict[str, Any]]
    rejected_by_id: str | None


async def covering_state(
    session: AsyncSession, org_id: str, person_id: str, moment_ms: int
) -> CoveringState | None:
    """That of `covering_timesheet`, read without loading the entity."""
    if session.new or session.dirty or session.deleted:
        await session.flush()  # what the ORM's autoflush does before its reads
    row = (
        await session.execute(
            _COVERING_STATE, {"wf_org": org_id, "wf_person": person_id, "wf_moment": moment_ms,
                              "wf_earliest": moment_ms - MAX_PERIOD_MS}
        )
    ).first()
    return CoveringState(*row) if row is not None else None


async def covering_timesheet(
    session: AsyncSession, org_id: str, person_id: str, moment_ms: int
) -> Timesheet | None:
    """The submitted, approved or rejected timesheet whose period contains the moment."""
    return (
        await session.scalars(
            _COVERING, {"wf_org": org_id, "wf_person": person_id, "wf_moment": moment_ms,
                        "wf_earliest": moment_ms - MAX_PERIOD_MS}
        )
    ).first()


async def timesheets_overlapping(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> list[Timesheet]:
    """The person's timesheets overlapping [start_ms, end_ms), the latest updated first."""
    return list(
        await session.scalars(
            _TIMESHEETS_OVERLAPPING,
            {"wf_org": org_id, "wf_person": person_id, "wf_start": start_ms, "wf_end": end_ms,
             "wf_earliest": start_ms - MAX_PERIOD_MS},
        )
    )


async def timesheet_for_period(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> Timesheet | None:
    """The timesheet with exactly these bounds, else the latest one overlapping them."""
    rows = await timesheets_overlapping(session, org_id, person_id, start_ms, end_ms)
    for row in rows:
        if row.start_ms == start_ms and row.end_ms == end_ms:
            return row
    return rows[0] if rows else None


# A person's timesheets overlapping a period, each with its submit event's author and its
# current round's approvals (a row each, in the order approvals_detail gives them); one row
# with no timesheet when the person has none, no row when the person does not exist.
_PERIOD_STATE = (
    select(Person.id, Timesheet, ApprovalEvent.by_id, Approval.stage, Approval.approver_id,
           Approval.ts_ms)
    .select_from(Person)
    .outerjoin(
        Timesheet,
        and_(
            Timesheet.organisation_id == Person.organisation_id,
            Timesheet.person_id == Person.id,
            Timesheet.start_ms < bindparam("wf_end"),
            Timesheet.start_ms > bindparam("wf_earliest"),
            Timesheet.end_ms > bindparam("wf_start"),
        ),
    )
    .outerjoin(ApprovalEvent, ApprovalEvent.id == Timesheet.submit_id)
    .outerjoin(
        Approval,
        and_(Approval.submit_id == Timesheet.submit_id, Approval.round == Timesheet.round),
    )
    .where(Person.id == bindparam("wf_person"), Person.organisation_id == bindparam("wf_org"))
    .order_by(Timesheet.updated_ms.desc(), Timesheet.id, Approval.ts_ms, Approval.id)
)


@dataclass
class PeriodState:
    """What `period_state` read: the timesheet `timesheet_for_period` would give (None: no
    timesheet), its submit event's `by_id` and its `approvals_detail`."""

    timesheet: Timesheet | None
    submitted_by: str | None
    detail: dict[int, list[tuple[str, int]]]


async def period_state(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> PeriodState | None:
    """One statement for a person's approval state of a period (None: no such person in the
    organisation): `timesheet_for_period`, the submit event's author and `approvals_detail`."""
    rows = (await session.execute(_PERIOD_STATE, {
        "wf_org": org_id, "wf_person": person_id, "wf_start": start_ms, "wf_end": end_ms,
        "wf_earliest": start_ms - MAX_PERIOD_MS,
    })).all()
    if not rows:
        return None
    timesheets = [row[1] for row in rows if row[1] is not None]  # the latest updated first
    chosen = next(
        (t for t in timesheets if t.start_ms == start_ms and t.end_ms == end_ms),
        timesheets[0] if timesheets else None,
    )
    if chosen is None:
        return PeriodState(None, None, {})
    submitted_by: str | None = None
    detail: dict[int, list[tuple[str, int]]] = {}
    for row in rows:
        if row[1] is not chosen:
            continue
        submitted_by = row.by_id
        if row.stage is not None and chosen.submit_id is not None:
            detail.setdefault(row.stage, []).append((row.approver_id, row.ts_ms))
    return PeriodState(chosen, submitted_by, detail)


async def approvals_of(session: AsyncSession, timesheet: SheetLike) -> dict[int, set[str]]:
    """{stage: approver ids} of the current submission's current round."""
    found: dict[int, set[str]] = {}
    if timesheet.submit_id is None:
        return found
    for stage, approver in await session.execute(
        _APPROVALS, {"wf_submit": timesheet.submit_id, "wf_round": timesheet.round}
    ):
        found.setdefault(stage, set()).add(approver)
    return found


async def approvals_detail(
    session: AsyncSession, timesheet: Timesheet
) -> dict[int, list[tuple[str, int]]]:
    """{stage: [(approver id, ms)]} of the current submission's current round."""
    found: dict[int, list[tuple[str, int]]] = {}
    if timesheet.submit_id is None:
        return found
    for stage, approver, ts_ms in await session.execute(
        _APPROVALS_DETAIL, {"wf_submit": timesheet.submit_id, "wf_round": timesheet.round}
    ):
        found.setdefault(stage, []).append((approver, ts_ms))
    return found


def current_pending(timesheet: SheetLike, approvals: dict[int, set[str]]) -> list[str]:
    """The approvers the current stage still awaits (none unless the timesheet is submitted)."""
    if timesheet.status != STATUS_SUBMITTED or not 0 <= timesheet.stage < len(timesheet.stages):
        return []
    return st.pending_approvers(
        timesheet.stages[timesheet.stage], approvals.get(timesheet.stage, set())
    )


def _loaded_person(session: AsyncSession, org_id: str, person_id: str) -> Person | None:
    """The person as this session already holds it (what a query would return, since it does
    not refresh loaded objects), or None when it must be read."""
    person = session.identity_map.get(identity_key(Person, person_id))
    if not isinstance(person, Person) or person.organisation_id != org_id:
        return None
    state = inspect(person)
    if not state.persistent or state.unloaded or person in session.deleted:
        return None
    return person


async def people(session: AsyncSession, org_id: str, ids: Iterable[str]) -> dict[str, Person]:
    """{id: person} of the organisation's persons among `ids` (read only when not held)."""
    found: dict[str, Person] = {}
    wanted: list[str] = []
    for person_id in sorted({i for i in ids if i}):
        person = _loaded_person(session, org_id, person_id)
        if person is None:
            wanted.append(person_id)
        else:
            found[person_id] = person
    # IN lists of a bounded length: a statement each, so that reading a whole organisation
    # (10,000 people: ~0.3 s of building objects) gives the event loop turns in between.
    for ids_part in in_lists(wanted):
        rows = await session.scalars(_PEOPLE, {"wf_org": org_id, "wf_ids": ids_part})
        found.update((p.id, p) for p in rows.unique())
    return found


async def submit_event(session: AsyncSession, timesheet: Timesheet) -> ApprovalEvent:
    """The timesheet's current submit event."""
    found = await session.get(ApprovalEvent, timesheet.submit_id)
    assert found is not None
    return found
