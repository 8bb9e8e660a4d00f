"""The bridge between time-record mutations and the timesheet approval workflow.

Every mutation that adds, changes or deletes time records calls `guard_time_record_change`
for each record before writing it (with the record's owner and its start, and again with
the new start when a record moves), and `record_time_record_change` after writing it.
The approval workflow decides there whether the caller may edit that owner's timesheet in
that period (edit rights by status) and what an accepted edit does to a submitted timesheet
(an approver's edit restarts the workflow; changes since a rejection are recorded).
An approver who is not the owner's manager has no access by role: `may_edit_by_status` is
what lets them edit the timesheet they review (the mutations ask it when the role refuses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from service.absences import unlocked, unreviewed
from service.errors import RuleViolation
from service.models import Person
from service.organisation import ONLY_ADMIN_EDITS_OTHERS, OWNER_OR_ADMIN_ONLY, resolve
from service.timesheets.actor import Actor, period_label, stage_label
from service.timesheets.edit_rights import EditCheck, EditDecision, decide
from service.timesheets.models import STATUS_DRAFT, STATUS_SUBMITTED, Timesheet
from service.timesheets.restart import restart
from service.timesheets.state import CoveringState, covering_state
from service.webhooks import KICK

if TYPE_CHECKING:
    from service.graphql.context import RequestContext

Change = Literal["added", "modified", "deleted"]
_RESTARTED = "_approval_restarted_timesheets"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


async def _decision(
    context: RequestContext, owner_id: str, start_ms: int
) -> tuple[EditDecision, CoveringState | None]:
    """The decision, and the covering timesheet's state (`covering_state`) if there is one."""
    session = context.session
    timesheet = await covering_state(session, context.org_id, owner_id, start_ms)
    status = timesheet.status if timesheet is not None else STATUS_DRAFT
    period = (
        period_label(timesheet.start_ms, timesheet.end_ms)
        if timesheet is not None
        else f"the period of {period_label(start_ms, start_ms + 1)}"
    )
    owner_or_admin_only = False
    admin_only_for_others = False
    if not context.is_admin and context.person.id != owner_id:
        owner = await session.get(Person, owner_id)
        if owner is not None:
            owner_or_admin_only = bool(
                (await resolve(session, context.organisation, owner,
                                   OWNER_OR_ADMIN_ONLY)).value
            )
            admin_only_for_others = bool(
                (await resolve(session, context.organisation, owner,
                                   ONLY_ADMIN_EDITS_OTHERS)).value
            )
    approvers: frozenset[str] = frozenset()
    label = ""
    if timesheet is not None and timesheet.status == STATUS_SUBMITTED:
        if 0 <= timesheet.stage < len(timesheet.stages):
            approvers = frozenset(timesheet.stages[timesheet.stage].get("approvers") or [])
        label = stage_label(timesheet.stages, timesheet.stage)
    check = EditCheck(
        caller_id=context.person.id,
        caller_is_admin=context.is_admin,
        owner_id=owner_id,
        status=status,
        period=period,
        current_stage_label=label,
        current_stage_approvers=approvers,
        rejected_by_id=timesheet.rejected_by_id if timesheet is not None else None,
        owner_or_admin_only=owner_or_admin_only,
        admin_only_for_others=admin_only_for_others,
    )
    return decide(check), timesheet


async def may_edit_by_status(context: RequestContext, owner_id: str, start_ms: int) -> bool:
    """Whether the status rules let the caller edit the owner's timesheet for the period
    containing `start_ms` although their role does not (the caller is neither the owner,
    their manager nor an admin): a current-stage approver of a submitted timesheet, the
    approver who rejected a rejected one, each unless a setting reserves the edit."""
    if not _INT64_MIN <= start_ms <= _INT64_MAX:
        return False  # no timesheet holds it (and no database column could compare it)
    decision, timesheet = await _decision(context, owner_id, start_ms)
    if timesheet is None:
        return False  # never submitted: a draft, its owner's (and admins') alone
    restarted: set[str] = context.__dict__.get(_RESTARTED, set())
    return decision.allowed or timesheet.id in restarted


async def guard_time_record_change(
    context: RequestContext, owner_id: str, start_ms: int, absence_id: str | None = None
) -> None:
    """Raise RuleViolation (naming the reason) when the caller may not edit the owner's
    timesheet for the period containing `start_ms`. Access (by role, or `may_edit_by_status`)
    is checked before this. Time off of a type needing no approval (`absence_id`, given when
    the change leaves the record's type as it is) is never locked by its timesheet."""
    if context.is_admin:
        return  # an administrator may edit any timesheet, in any status (edit_rights.decide)
    if await unlocked(context.session, context.org_id, absence_id):
        return
    decision, timesheet = await _decision(context, owner_id, start_ms)
    restarted: set[str] = context.__dict__.get(_RESTARTED, set())
    if timesheet is not None and timesheet.id in restarted:
        return  # the caller's earlier edit in this request restarted it: the batch goes on
    if not decision.allowed:
        raise RuleViolation(decision.reason)


async def record_time_record_change(
    context: RequestContext, owner_id: str, start_ms: int, record_id: str, change: Change,
    absence_id: str | None = None,
) -> None:
    """Note an accepted change for the approval workflow: an approver's edit of a submitted
    timesheet restarts its workflow (once per request), unless it is time off its approvers
    do not review (`absence_id`: service/absences/approval.py). Changes since a rejection are
    found at resubmission by comparing the content with the previous submission's."""
    if context.is_admin or context.person.id == owner_id:
        return
    if await unreviewed(context.session, context.org_id, absence_id):
        return
    decision, state = await _decision(context, owner_id, start_ms)
    if state is None or not decision.restarts_workflow:
        return
    done: set[str] = context.__dict__.setdefault(_RESTARTED, set())
    if state.id in done:
        return
    timesheet = await context.session.get(Timesheet, state.id)
    if timesheet is None:
        return
    done.add(timesheet.id)
    await restart(
        Actor(context.session, context.organisation, context.person, context.now_ms), timesheet
    )
    context.after_commit.append(KICK)
