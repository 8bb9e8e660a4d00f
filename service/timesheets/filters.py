"""SQL for the approval status of the timesheet holding a time record (the `status` field of
SvcTimeRecordFilter): d = in no submitted, approved or rejected timesheet."""

from __future__ import annotations

from sqlalchemy import and_, exists, not_, select
from sqlalchemy.sql.elements import ColumnElement

from plumbing.sql_constants import sql_constant
from service.models import TimeRecord
from service.timesheets.models import STATUS_DRAFT, Timesheet


def record_status_condition(org_id: str, status: str) -> ColumnElement[bool]:
    covering = and_(
        Timesheet.organisation_id == org_id,
        Timesheet.person_id == TimeRecord.person_id,
        Timesheet.start_ms <= TimeRecord.start_ms,
        Timesheet.end_ms > TimeRecord.start_ms,
    )
    if status == STATUS_DRAFT:
        return not_(exists(select(Timesheet.id).where(covering,
                                                      Timesheet.status != STATUS_DRAFT)))
    # (a literal: SvcApprovalStatus is one of d, s, a, r; plumbing.sql_constants)
    return exists(select(Timesheet.id).where(covering, Timesheet.status == sql_constant(status)))
