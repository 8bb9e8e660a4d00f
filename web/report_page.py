"""GET /report/<token>: a saved report's figures, opened from the link in its scheduled
e-mail or Slack DM without signing in. The token is the credential (the service's
getReportResultFromToken runs the report as the person the link was made for, over the
period of its run); timebot keeps nothing of it. An unknown or expired link, a report no
longer shared, or an unreachable service each get a clear page."""

from __future__ import annotations

from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from timebot.errors import PermissionRefused, ServiceRequestError, ServiceUnavailable
from timebot.l10n import Localisation, _, format_hours, reading_from_query, using
from timebot.notify.due_reports import FROM_TOKEN, REPORT_PATH, report_rows
from timebot.process.runtime import Runtime
from timebot.templating import Templates

log = structlog.get_logger("web.report")
MAX_TOKEN = 100
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


class ReportPage:
    def __init__(self, runtime: Runtime, templates: Templates) -> None:
        self.runtime = runtime
        self.templates = templates

    def outcome(self, title: str, detail: str, status: int) -> HTMLResponse:
        return HTMLResponse(self.templates.page("outcome", title=title, detail=detail,
                                                kind="error"),
                            status_code=status, headers=HEADERS)

    async def show(self, request: Request) -> HTMLResponse:
        """The page in the formats and language its link names (the report owner's)."""
        local = reading_from_query(request.query_params)
        with using(local):
            return await self._show(request, local)

    async def _show(self, request: Request, local: Localisation) -> HTMLResponse:
        token = str(request.path_params.get("token") or "")
        gone = (_("This link is not valid"),
                _("The report link is unknown or has expired: links to a report work for "
                  "two weeks. The next scheduled report brings a new one."), 404)
        if not token or len(token) > MAX_TOKEN or not token.isascii():
            return self.outcome(*gone)
        try:
            data: dict[str, Any] = await self.runtime.client.execute(
                FROM_TOKEN, {"t": token}, apikey="")
        except ServiceUnavailable:
            return self.outcome(_("The time tracking service is unreachable"),
                                _("Please try the link again in a moment."), 503)
        except PermissionRefused:
            return self.outcome(_("This report is no longer shared with you"),
                                _("Ask the report's owner to share its folder again."), 403)
        except ServiceRequestError as error:
            log.info("report_link_refused", reason=str(error))
            return self.outcome(*gone)
        result = data.get("getReportResultFromToken") or {}
        rows = report_rows(result)
        return HTMLResponse(
            self.templates.page("report", local,
                                rows=[(label, format_hours(hours, local)) for label, hours in rows],
                                total=format_hours(sum(hours for _label, hours in rows), local),
                                error=result.get("error")),
            headers=HEADERS)

    def routes(self) -> list[BaseRoute]:
        return [Route(f"{REPORT_PATH}{{token}}", self.show, methods=["GET"])]
