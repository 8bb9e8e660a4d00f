"""editAbsenceQuotaAbsence: an allowance moved to another absence type (of the organisation,
not archived). Who edits allowances edits it (the People permission, as the other
`editAbsenceQuota…` edits)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType

from service.absences.models import AbsenceQuota
from service.access import PEOPLE, require
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import AbsenceType

mutation = MutationType()


@mutation.field("editAbsenceQuotaAbsence")
async def resolve_edit_quota_absence(
    _root: Any, info: Any, id: str, absenceId: str
) -> AbsenceQuota:
    context: RequestContext = info.context
    require(context, PEOPLE, "edit allowances")
    quota = await get_in_org(context.session, AbsenceQuota, context.org_id, id, "id",
                             "allowance")
    absence = await get_in_org(context.session, AbsenceType, context.org_id, absenceId,
                               "absenceId", "absence type")
    if absence.archived and absence.id != quota.absence_type_id:
        raise BadInput("absenceId", f"the absence type {absence.name!r} is archived")
    quota.absence_type_id = absence.id
    quota.absence_type = absence
    return quota


BINDABLES = [mutation]
