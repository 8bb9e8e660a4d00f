"""The service on absences (absence types): absence.list."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from service.legacy.lookups import find_company
from service.legacy.request import Handler, LegacyRequest, active_filter, company_filter_value
from service.models import AbsenceType


async def absence_list(request: LegacyRequest) -> dict[str, Any]:
    company_value = company_filter_value(request, "absence")
    if company_value is not None:
        # Absence types are account-wide: every company of the account offers all of them.
        await find_company(request, company_value, "company")
    active = active_filter(request, "absence")
    rows = await request.session.scalars(
        select(AbsenceType)
        .where(AbsenceType.organisation_id == request.org_id)
        .order_by(func.lower(AbsenceType.name), AbsenceType.id)
    )
    xids = request.xids("absence_types")
    absences = [
        {
            **(await xids.ref(absence.id) or {}),
            "name": absence.name,
            "unit": absence.unit,
            "involve_costs": absence.involve_costs,
            "active": not absence.archived,
        }
        for absence in rows
        if active is None or active != absence.archived
    ]
    return {"absences": absences}


SERVICES: dict[str, Handler] = {"absence.list": absence_list}
