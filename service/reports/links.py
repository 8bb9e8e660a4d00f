"""Report links (getReportResultFromToken): figures of a saved report that open without
signing in, as the one-click links do. A token is random (256 bits) and only its digest is
kept (table report_links), so neither the database nor a log holds a usable link; it runs
the report as the person it was made for (their visibility, their report access now), over
the period of the run it came from, until it expires."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.ids import new_id
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Organisation, Person
from service.reports import saved as store
from service.reports.inline_report import run_inline_report
from service.reports.models import Report, ReportFolder, ReportLink

LINK_TTL_MS = 14 * 24 * 60 * 60 * 1000
_UNKNOWN = "this report link is unknown or has expired"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def mint(context: RequestContext, report_id: str, start_ms: int, end_ms: int) -> str:
    """A new link's token for the caller; its row is written after the request's read."""
    token = secrets.token_urlsafe(32)
    link = ReportLink(id=new_id(), organisation_id=context.org_id, report_id=report_id,
                      person_id=context.person.id, digest=digest(token), start_ms=start_ms,
                      end_ms=end_ms, created_ms=context.now_ms,
                      expire_ms=context.now_ms + LINK_TTL_MS)

    async def keep(session: AsyncSession) -> None:
        session.add(link)

    context.query_writes.append(keep)
    return token


async def result_from_token(context: RequestContext, token: str) -> dict[str, Any]:
    if not token or len(token) > 100:
        raise BadInput("token", _UNKNOWN)
    link = (await context.session.scalars(
        select(ReportLink).where(ReportLink.digest == digest(token)))).one_or_none()
    if link is None or link.expire_ms <= context.now_ms:
        raise BadInput("token", _UNKNOWN)
    organisation = await context.session.get(Organisation, link.organisation_id)
    person = await context.session.get(Person, link.person_id)
    if organisation is None or not organisation.active or person is None \
            or not person.may_authenticate:
        raise BadInput("token", _UNKNOWN)
    # From here the request is the link's person's, as a signed-in request would be.
    context.organisation, context.person = organisation, person
    report = await get_in_org(context.session, Report, organisation.id, link.report_id,
                              "token", "report")
    folder = await get_in_org(context.session, ReportFolder, organisation.id,
                              report.folder_id)
    if not store.sees(context, folder):
        raise PermissionDenied("the report is no longer shared with the link's person")
    params = {**report.params,
              "period": {"target": "custom", "start": link.start_ms, "end": link.end_ms}}
    scopes = [folder.filters] if folder.filters else []
    result = await run_inline_report(context, params, scopes, folder.record_scope)
    return {"id": link.id, "expire": link.expire_ms, "pending": False, **result}
