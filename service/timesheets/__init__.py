"""The timesheet approval workflow.

Pure rules, no I/O: `stages` (stage configuration, approver resolution, quorum), `edit_rights`
(who may edit a timesheet in which status), `changes` (what changed between two submissions and
whose approvals carry over). Adapters that read and write the database: `journal` (workflow
entries in the Journal), `reminders` and `autosubmit` (timed work run by the webhook worker),
`filters` (the approval status of time records in SQL). The workflow itself, low to high:
`actor` (who acts, labels);
`content` (a timesheet's content and the stages it needs), `locks` (row locks per dialect),
`state` (reading the current state), `records` (writing events and approvals); `notify` (the
approvalEventUpdate webhook events); `progress` (moving through the stages); `submit`,
`decide` (approve, reject) and `restart` (after an approver's edit). See docs/approvals.md.
"""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.timesheets.access import caller_actor
    from service.timesheets.filters import record_status_condition
    from service.timesheets.period_rules import check_period_open, period_settings, period_to_submit
    from service.timesheets.scheduled_time_rules import check_scheduled_time
    from service.timesheets.submit import submit as submit_timesheet
    from service.timesheets.timesheet_edits import (
        guard_time_record_change,
        may_edit_by_status,
        record_time_record_change,
    )

__all__ = [
    "caller_actor",
    "check_period_open",
    "check_scheduled_time",
    "guard_time_record_change",
    "may_edit_by_status",
    "period_settings",
    "period_to_submit",
    "record_status_condition",
    "record_time_record_change",
    "submit_timesheet",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
