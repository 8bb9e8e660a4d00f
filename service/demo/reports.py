"""The demo organisation's saved report: Grace's folder "Team reports", shared with Linus, with
"Weekly hours by person" (last week's hours and amounts per person), sent every Monday at
08:00 to Grace (recurrence weekly, previous week, after its end). Called once from
service/demo/__init__.py."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.models import Person
from service.reports.models import Report, ReportFolder

WEEKLY_REPORT = "Weekly hours by person"


async def seed_reports(session: AsyncSession, org_id: str, owner: Person, shared: Person,
                       now_ms: int) -> Report:
    folder = ReportFolder(organisation_id=org_id, name="Team reports", owner_id=owner.id,
                          shared_with=[shared.id], created_ms=now_ms)
    session.add(folder)
    await session.flush()
    report = Report(
        organisation_id=org_id, folder_id=folder.id, name=WEEKLY_REPORT,
        params={"records": ["time"], "period": {"target": "previous", "period": "week"},
                "attributes": {"person": True}, "options": {"billing": True, "cost": True}},
        notify_emails=[owner.email], recurrence_enabled=True, recurrence_period="week",
        recurrence_target="previous", send_mode="afterEnd", send_offset=0, hour_of_day=8,
        last_run_ms=now_ms, created_ms=now_ms, edited_ms=now_ms)
    session.add(report)
    return report
