"""Who may act on what: the `pending_approvals` rows (see the model) and the one indexed read
of what waits for an approver. Written where a submission's round gets its stages (submit,
auto-submit, restart); approvals, rejections and stages moving on need no write here: the
read keeps a row only while it is the timesheet's current submit, round and stage and its
approver has not approved."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, delete, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.db import insert_ignoring, unit_of_work, write_rows
from plumbing.ids import new_id
from service.timesheets.models import (
    STATUS_SUBMITTED,
    SUBMITTED,
    Approval,
    PendingApproval,
    Timesheet,
)

_PENDING = cast(Table, PendingApproval.__table__)
# A row already there (a rebuild at start in another process) is left as it is.
_ONCE = ("timesheet_id", "submit_id", "round", "stage", "approver_id")
# The timesheet's own rows (its previous round or submission) and those of the owner's
# timesheets no longer submitted: what the owner's earlier submissions left.
_DELETE_STALE = delete(_PENDING).where(
    _PENDING.c.organisation_id == bindparam("p_org"),
    _PENDING.c.owner_id == bindparam("p_owner"),
    or_(
        _PENDING.c.timesheet_id == bindparam("p_timesheet"),
        _PENDING.c.timesheet_id.in_(
            select(Timesheet.id).where(
                Timesheet.organisation_id == bindparam("p_org"),
                Timesheet.person_id == bindparam("p_owner"),
                Timesheet.status != STATUS_SUBMITTED,
            )
        ),
    ),
)

# What waits for an approver: their rows of the current stage of submitted timesheets that
# they have not approved yet (the index on (organisation, approver) finds the rows).
_WAITING = (
    select(Timesheet)
    .join(
        PendingApproval,
        and_(
            PendingApproval.timesheet_id == Timesheet.id,
            PendingApproval.submit_id == Timesheet.submit_id,
            PendingApproval.round == Timesheet.round,
            PendingApproval.stage == Timesheet.stage,
        ),
    )
    .where(
        PendingApproval.organisation_id == bindparam("p_org"),
        PendingApproval.approver_id == bindparam("p_approver"),
        Timesheet.organisation_id == bindparam("p_org"),
        Timesheet.status == SUBMITTED,
        ~exists().where(
            Approval.submit_id == PendingApproval.submit_id,
            Approval.round == PendingApproval.round,
            Approval.stage == PendingApproval.stage,
            Approval.approver_id == PendingApproval.approver_id,
        ),
    )
    .order_by(Timesheet.start_ms, Timesheet.id)
)


def rows_of(timesheet: Timesheet) -> list[dict[str, Any]]:
    """One row per (stage, approver) of the timesheet's current submission and round."""
    if timesheet.submit_id is None:
        return []
    return [
        {"id": new_id(), "organisation_id": timesheet.organisation_id,
         "timesheet_id": timesheet.id, "owner_id": timesheet.person_id,
         "submit_id": timesheet.submit_id, "round": timesheet.round, "stage": index,
         "approver_id": approver}
        for index, stage in enumerate(timesheet.stages or [])
        if not stage.get("skipped")
        for approver in dict.fromkeys(stage.get("approvers") or [])
    ]


async def record_pending(session: AsyncSession, timesheet: Timesheet) -> None:
    """The rows of the round just started (its stages set), in the caller's transaction; the
    timesheet is in the database (flushed). Core writes: nothing is flushed here."""
    await write_rows(session, _DELETE_STALE, {
        "p_org": timesheet.organisation_id, "p_owner": timesheet.person_id,
        "p_timesheet": timesheet.id,
    })
    rows = rows_of(timesheet)
    if rows:
        await write_rows(session, insert_ignoring(session, _PENDING, _ONCE), rows)


async def waiting_for(session: AsyncSession, org_id: str, approver_id: str) -> list[Timesheet]:
    """The submitted timesheets whose current stage awaits the approver, by period."""
    return list(await session.scalars(_WAITING, {"p_org": org_id, "p_approver": approver_id}))


# Submitted timesheets whose current submission and round has no row (a database filled
# before the table existed): rebuilt at start, in short transactions.
_MISSING = (
    select(Timesheet)
    .where(
        Timesheet.status == SUBMITTED,
        Timesheet.id > bindparam("p_after"),
        ~exists().where(
            PendingApproval.timesheet_id == Timesheet.id,
            PendingApproval.submit_id == Timesheet.submit_id,
            PendingApproval.round == Timesheet.round,
        ),
    )
    .order_by(Timesheet.id)
    .limit(bindparam("p_limit"))
)
REBUILD_BATCH = 200


async def rebuild_missing(
    sessions: async_sessionmaker[AsyncSession], batch: int = REBUILD_BATCH
) -> int:
    """Write the rows of every submitted timesheet that has none for its current round
    (bounded by what is submitted; `batch` timesheets per transaction). Returns how many."""
    done, after = 0, ""
    while True:
        async with unit_of_work(sessions) as session:
            found = list(await session.scalars(_MISSING, {"p_after": after, "p_limit": batch}))
            rows = [row for timesheet in found for row in rows_of(timesheet)]
            if rows:
                await write_rows(session, insert_ignoring(session, _PENDING, _ONCE), rows)
        if not found:
            return done
        done += len(found)
        after = found[-1].id
