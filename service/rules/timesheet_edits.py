"""The bridge between time-record mutations and the timesheet approval workflow.

Every mutation that adds, changes or deletes time records calls `guard_time_record_change`
for each record before writing it (with the record's owner and its start, and again with
the new start when a record moves), and `record_time_record_change` after writing it.
The approval workflow decides there whether the caller may edit that owner's timesheet in
that period (edit rights by status) and what an accepted edit does to a submitted timesheet
(an approver's edit restarts the workflow; changes since a rejection are recorded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from service.graphql.context import RequestContext

Change = Literal["added", "modified", "deleted"]


async def guard_time_record_change(
    context: RequestContext, owner_id: str, start_ms: int
) -> None:
    """Raise RuleViolation (naming the reason) when the caller may not edit the owner's
    timesheet for the period containing `start_ms`. Access by role is checked before this."""
    return None


async def record_time_record_change(
    context: RequestContext, owner_id: str, start_ms: int, record_id: str, change: Change
) -> None:
    """Note an accepted change for the approval workflow."""
    return None
