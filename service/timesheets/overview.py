"""Approval states of many timesheets or people at once, in a bounded number of statements
(the pending list, the team's states, the reminders): each read covers every timesheet or
person asked for, in IN lists of a bounded length (plumbing.in_lists), instead of a query
per timesheet."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from sqlalchemy import Select, and_, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.in_lists import in_lists
from service.models import TimeRecord
from service.timesheets.actor import MAX_PERIOD_MS
from service.timesheets.models import SUBMITTED, Approval, ApprovalEvent, Timesheet
from service.timesheets.state import PeriodState

SUBMITTED_PAGE = 500


def submitted_page(org_id: str, after: Timesheet | None) -> Select[Timesheet]:
    """The statement of a page of the organisation's submitted timesheets, by period, after
    `after` (None: the first page). The status a literal: the partial index of the submitted
    ones answers it, a range of it."""
    query = (
        select(Timesheet)
        .where(Timesheet.organisation_id == org_id, Timesheet.status == SUBMITTED)
        .order_by(Timesheet.start_ms, Timesheet.id)
        .limit(SUBMITTED_PAGE)
    )
    if after is None:
        return query
    return query.where(tuple_(Timesheet.start_ms, Timesheet.id) > tuple_(after.start_ms, after.id))


async def submitted_pages(session: AsyncSession, org_id: str
                          ) -> AsyncIterator[list[Timesheet]]:
    """Every submitted timesheet of the organisation, by period, SUBMITTED_PAGE at a time, a
    statement each (10,000 timesheets in one took ~0.4 s of building objects, holding every
    other request of the process). A caller that lets go of a page before taking the next
    holds one page's objects at a time, not the organisation's."""
    last: Timesheet | None = None
    while True:
        page = list(await session.scalars(submitted_page(org_id, last)))
        more = len(page) == SUBMITTED_PAGE
        if page:
            last = page[-1]
            yield page
        del page  # not held here while the next page is read
        if not more:
            return


async def period_states(
    session: AsyncSession, timesheets: Sequence[Timesheet]
) -> dict[str, PeriodState]:
    """{timesheet id: its state as `period_state` reads it}: the submit event's author and the
    current round's approvals (`approvals_detail`), two statements for all of them."""
    by_submit = {t.submit_id: t for t in timesheets if t.submit_id is not None}
    authors: dict[str, str | None] = {}
    details: dict[str, dict[int, list[tuple[str, int]]]] = {t.id: {} for t in timesheets}
    for ids in in_lists(by_submit):
        for event_id, by_id in await session.execute(
            select(ApprovalEvent.id, ApprovalEvent.by_id).where(ApprovalEvent.id.in_(ids))
        ):
            authors[event_id] = by_id
        for submit_id, round_, stage, approver, ts_ms in await session.execute(
            select(Approval.submit_id, Approval.round, Approval.stage, Approval.approver_id,
                   Approval.ts_ms)
            .where(Approval.submit_id.in_(ids))
            .order_by(Approval.ts_ms, Approval.id)
        ):
            timesheet = by_submit[submit_id]
            if round_ == timesheet.round:
                details[timesheet.id].setdefault(stage, []).append((approver, ts_ms))
    return {
        t.id: PeriodState(t, authors.get(t.submit_id) if t.submit_id else None, details[t.id])
        for t in timesheets
    }


def given(state: PeriodState) -> dict[int, set[str]]:
    """{stage: approver ids} of the state's approvals (what `approvals_of` gives)."""
    return {stage: {a for a, _ts in rows} for stage, rows in state.detail.items()}


async def totals_of_timesheets(
    session: AsyncSession, org_id: str, timesheets: Sequence[Timesheet]
) -> dict[str, int]:
    """{timesheet id: total duration of its content} (what `load_content` totals)."""
    totals: dict[str, int] = {}
    for ids in in_lists(t.id for t in timesheets):
        for timesheet_id, total in await session.execute(
            select(Timesheet.id, func.sum(TimeRecord.duration_ms))
            .join(TimeRecord, and_(
                TimeRecord.organisation_id == Timesheet.organisation_id,
                TimeRecord.person_id == Timesheet.person_id,
                TimeRecord.start_ms >= Timesheet.start_ms,
                TimeRecord.start_ms < Timesheet.end_ms,
            ))
            .where(Timesheet.organisation_id == org_id, Timesheet.id.in_(ids))
            .group_by(Timesheet.id)
        ):
            totals[timesheet_id] = int(total or 0)
    return totals


async def content_by_person(
    session: AsyncSession, org_id: str, person_ids: Iterable[str], start_ms: int, end_ms: int
) -> dict[str, tuple[int, int]]:
    """{person id: (records, total duration)} of the period (what `load_content` counts)."""
    found: dict[str, tuple[int, int]] = {}
    for ids in in_lists(person_ids):
        for person_id, count, total in await session.execute(
            select(TimeRecord.person_id, func.count(TimeRecord.id),
                   func.sum(TimeRecord.duration_ms))
            .where(TimeRecord.organisation_id == org_id, TimeRecord.person_id.in_(ids),
                   TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms)
            .group_by(TimeRecord.person_id)
        ):
            found[person_id] = (int(count), int(total or 0))
    return found


async def timesheets_for_period(
    session: AsyncSession, org_id: str, person_ids: Iterable[str], start_ms: int, end_ms: int
) -> dict[str, Timesheet]:
    """{person id: what `state.timesheet_for_period` gives for them}: the timesheet with
    exactly these bounds, else the latest updated one overlapping them."""
    overlapping: dict[str, list[Timesheet]] = {}
    for ids in in_lists(person_ids):
        for timesheet in await session.scalars(
            select(Timesheet)
            .where(
                Timesheet.organisation_id == org_id,
                Timesheet.person_id.in_(ids),
                Timesheet.start_ms < end_ms,
                Timesheet.start_ms > start_ms - MAX_PERIOD_MS,
                Timesheet.end_ms > start_ms,
            )
            .order_by(Timesheet.updated_ms.desc())
        ):
            overlapping.setdefault(timesheet.person_id, []).append(timesheet)
    chosen: dict[str, Timesheet] = {}
    for person_id, rows in overlapping.items():
        chosen[person_id] = next(
            (t for t in rows if t.start_ms == start_ms and t.end_ms == end_ms), rows[0]
        )
    return chosen


def named_in(timesheets: Iterable[Timesheet], states: dict[str, PeriodState]) -> set[str]:
    """Every person a state of these timesheets names: owners, approvers, submitters."""
    ids: set[str] = set()
    for timesheet in timesheets:
        ids.add(timesheet.person_id)
        for stage in timesheet.stages or []:
            ids.update(stage.get("approvers") or [])
        state: Any = states.get(timesheet.id)
        if state is not None and state.submitted_by:
            ids.add(state.submitted_by)
    return ids
