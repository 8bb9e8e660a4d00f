"""Who may edit the entries of a timesheet, by its status (the specification's table).

| status    | owner | current-stage approver          | rejecting approver | admin |
|-----------|-------|---------------------------------|--------------------|-------|
| draft     | yes   | no                              | -                  | yes   |
| submitted | no    | yes (the workflow restarts)     | -                  | yes   |
| approved  | no    | no                              | -                  | yes   |
| rejected  | yes   | no                              | yes (in place)     | yes   |

"Only the owner or an admin can edit entries" removes approver editing; "Only an admin can
edit someone else's timesheet" reserves every edit of another person's timesheet for admins.
Admin edits never restart the workflow. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

STATUS_NAMES = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}


@dataclass(frozen=True)
class EditCheck:
    caller_id: str
    caller_is_admin: bool
    owner_id: str
    status: str
    period: str
    current_stage_label: str = ""
    current_stage_approvers: frozenset[str] = frozenset()
    rejected_by_id: str | None = None
    owner_or_admin_only: bool = False
    admin_only_for_others: bool = False


@dataclass(frozen=True)
class EditDecision:
    allowed: bool
    reason: str = ""
    restarts_workflow: bool = False


def decide(check: EditCheck) -> EditDecision:
    """May the caller edit the owner's timesheet now, and does the edit restart the workflow?"""
    what = f"the timesheet for {check.period}"
    if check.caller_is_admin:
        return EditDecision(True)
    status = check.status
    if check.caller_id == check.owner_id:
        if status in ("d", "r"):
            return EditDecision(True)
        if status == "s":
            return EditDecision(
                False, f"{what} is submitted for approval and locked for its owner"
            )
        return EditDecision(False, f"{what} is approved and locked for its owner")
    if check.admin_only_for_others:
        return EditDecision(
            False,
            f"only an administrator can edit someone else's timesheet "
            f"(setting \"Only an admin can edit someone else's timesheet\"); {what} is not yours",
        )
    if status == "d":
        return EditDecision(
            False, f"{what} is a draft: only its owner or an administrator may edit it"
        )
    if status == "a":
        return EditDecision(False, f"{what} is approved: only an administrator may edit it")
    if status == "s":
        if check.caller_id not in check.current_stage_approvers:
            return EditDecision(
                False,
                f"{what} is submitted: only an approver of its current stage "
                f"({check.current_stage_label}) or an administrator may edit it",
            )
        if check.owner_or_admin_only:
            return EditDecision(
                False,
                f"only the owner or an admin can edit entries (setting \"Only the owner or an "
                f"admin can edit entries\"); {what} is submitted",
            )
        return EditDecision(True, restarts_workflow=True)
    # rejected
    if check.caller_id != check.rejected_by_id:
        return EditDecision(
            False,
            f"{what} is rejected: only its owner, the approver who rejected it or an "
            f"administrator may edit it",
        )
    if check.owner_or_admin_only:
        return EditDecision(
            False,
            f"only the owner or an admin can edit entries (setting \"Only the owner or an "
            f"admin can edit entries\"); {what} is rejected",
        )
    return EditDecision(True)
