"""The approval state of a timesheet as an approver's reply finds it (read from the service
with the integration key), and what it lets the reply do — pure: `judge` says whether an
approve / reject may go ahead or which receipt answers instead; `approved_outcome` and
`after_approval` word the Approved receipt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mail.outbound import receipts
from mail.outbound.receipts import Outcome, TimesheetInfo, stage_words
from timebot.l10n import _
from timebot.secret_key.tokens import ApprovalToken


@dataclass(frozen=True)
class StageView:
    type: str
    skipped: bool
    approved_by: frozenset[str]
    pending: tuple[tuple[str, str], ...]  # (id, name)


@dataclass(frozen=True)
class StateView:
    status: str  # d s a r
    current_stage: int | None
    submit_id: str | None
    pending: tuple[tuple[str, str], ...]
    stages: tuple[StageView, ...]

    @classmethod
    def parse(cls, data: dict[str, Any]) -> StateView:
        def people(items: Any) -> tuple[tuple[str, str], ...]:
            return tuple((str(p["id"]), str(p.get("name") or "")) for p in items or [] if p)

        stages = tuple(
            StageView(
                type=str(detail.get("type") or ""),
                skipped=bool(detail.get("skipped")),
                approved_by=frozenset(
                    str(given["person"]["id"])
                    for given in detail.get("approvedBy") or []
                    if given and given.get("person")
                ),
                pending=people(detail.get("pending")),
            )
            for detail in data.get("stageDetails") or []
        )
        return cls(
            status=str(data.get("status") or "d"),
            current_stage=data.get("currentStage"),
            submit_id=data.get("submitId"),
            pending=people(data.get("pendingApprovers")),
            stages=stages,
        )

    def where(self, stage: int) -> str:
        kind = self.stages[stage].type if 0 <= stage < len(self.stages) else None
        return stage_words(stage, len(self.stages), kind)

    def waiting(self) -> str:
        return ", ".join(name for _, name in self.pending)

    def last_stage(self) -> int | None:
        active = [index for index, stage in enumerate(self.stages) if not stage.skipped]
        return active[-1] if active else None

    def approved_at(self, stage: int, person_id: str) -> bool:
        return 0 <= stage < len(self.stages) and person_id in self.stages[stage].approved_by


def approved_outcome(sheet: TimesheetInfo, state: StateView, stage: int) -> Outcome:
    """The Approved receipt, from the state after the approval."""
    if state.status == "a":
        return receipts.approved(sheet, state.where(stage), True, None)
    if state.current_stage is not None and state.current_stage != stage:
        waiting = state.waiting()
        nxt = state.where(state.current_stage) + (f" ({waiting})" if waiting else "")
        return receipts.approved(sheet, state.where(stage), False, nxt)
    waiting = state.waiting()
    return receipts.approved(sheet, state.where(stage), False, waiting or None)


def after_approval(
    sheet: TimesheetInfo, before: StateView, stage: int, me: str, status: str, now_at: int
) -> Outcome:
    """The Approved receipt from the state read before the approval and what approveTimesheet
    answered (the submit event's new status and stage): no second read of the state."""
    if status == "a":
        return receipts.approved(sheet, before.where(stage), True, None)
    if now_at != stage and 0 <= now_at < len(before.stages):
        waiting = ", ".join(name for _, name in before.stages[now_at].pending)
        nxt = before.where(now_at) + (f" ({waiting})" if waiting else "")
        return receipts.approved(sheet, before.where(stage), False, nxt)
    waiting = ", ".join(name for person, name in before.pending if person != me)
    return receipts.approved(sheet, before.where(stage), False, waiting or None)


def judge(
    action: str,
    token: ApprovalToken,
    sheet: TimesheetInfo,
    state: StateView,
    *,
    rejected_stage: int | None,
    ours: bool,
    reason: str = "",
    override: bool = False,
) -> Outcome | None:
    """May `action` ("approve" / "reject") of the token's approver go ahead? None: yes. Else the
    receipt's outcome: a refusal, or — when `ours` (this very reply was already being acted on
    and the decision is in place) — the success the first attempt would have answered.
    `override`: the token's approver is an administrator (asked because the stage's approvers
    are away: timebot.notify.escalation_tick), who may decide the current stage without being
    one of its approvers."""
    me, stage = token.approver_id, token.stage
    if state.submit_id != token.event_id:
        return receipts.superseded(sheet)
    if state.status == "a":
        if action == "approve":
            if ours and state.approved_at(stage, me):
                return approved_outcome(sheet, state, stage)
            return receipts.already_decided(
                sheet, _("{sheet} is already approved."),
                _("nothing. An administrator or an approver of its last stage can still "
                  "reject it."),
            )
        if stage == state.last_stage() and state.approved_at(stage, me):
            return None  # a last-stage approver may still reject an approved timesheet
        return receipts.already_decided(
            sheet, _("{sheet} is already approved."),
            _("Only an administrator or an approver of its last stage can still reject it."),
        )
    if state.status == "r":
        if action == "reject" and ours and rejected_stage == stage:
            return receipts.rejected(sheet, reason)
        return receipts.already_decided(
            sheet, _("{sheet} has already been rejected."),
            _("nothing now; you will get a new review e-mail when {person} resubmits "
              "it.").format(person=sheet.person_name),
        )
    if state.status != "s" or state.current_stage is None:
        return receipts.superseded(sheet)
    current = state.current_stage
    if current > stage:
        if action == "approve" and ours and state.approved_at(stage, me):
            return approved_outcome(sheet, state, stage)
        return receipts.stage_moved_on(sheet, state.where(stage), state.where(current))
    if current < stage:
        return receipts.not_your_turn(sheet, state.where(current), state.waiting())
    pending = {person for person, _ in state.pending}
    if action == "approve":
        if state.approved_at(stage, me):
            if ours:
                return approved_outcome(sheet, state, stage)
            return receipts.already_decided(
                sheet, _("{sheet} already has your approval at {stage}."),
                _("nothing; it now waits for {waiting}.").format(
                    waiting=state.waiting() or _("the other approvers")),
                stage=state.where(stage),
            )
        if me not in pending and not override:
            return receipts.not_your_turn(sheet, state.where(current), state.waiting())
        return None
    if me not in pending and not state.approved_at(stage, me) and not override:
        return receipts.not_your_turn(sheet, state.where(current), state.waiting())
    return None
