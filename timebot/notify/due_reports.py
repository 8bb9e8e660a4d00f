"""Which saved reports are due now in an organisation, run for the e-mail: each enabled
report's recurrence (timebot/notify/report_schedule.py, in its owner's time zone) names the
occurrence due, if any; the report is then run as its folder's owner over the occurrence's
period, and a `DueReport` record says what the channels send (the figures, the link token
when the service offers it) and under which key (one per occurrence, per recipient)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from timebot.client import operation
from timebot.l10n import LOCALISATION_FIELDS, Localisation, localisation_of, reading_query
from timebot.notify.approvals import time_zone_of
from timebot.notify.ground import Ground
from timebot.notify.periods import zone
from timebot.notify.report_schedule import Occurrence, Recurrence, due_occurrence

REPORTS = operation(
    f"""query DueReports {{
      getReports {{
        id name reccurenceEnabled notifyByEmail
        reccurence {{ period target sendMode sendOffset hourOfDay lastRun {{ ts }} }}
        folder {{ owner {{ id name email {LOCALISATION_FIELDS} }} }}
      }}
    }}"""
)
_ROWS = """rows { entities { person { name } projects { name } }
                  quantities { hours } }"""
RUN = operation(
    f"""query DueReportRun($id: SvcId!, $p: SvcReportParamPeriodInput) {{
      runReport(id: $id, period: $p) {{ error {_ROWS} }}
    }}"""
)
# SvcReportResult.token is the embedded service's (ServiceClient.offers).
RUN_WITH_LINK_EXTENSION = operation(
    f"""query DueReportRunLink($id: SvcId!, $p: SvcReportParamPeriodInput) {{
      runReport(id: $id, period: $p) {{ error token {_ROWS} }}
    }}"""
)


# The page of timebot that opens a report link (web/report_page.py): its token is the
# credential, as the service's getReportResultFromToken takes it.
REPORT_PATH = "/report/"
FROM_TOKEN = operation(
    f"""query ReportFromToken($t: String!) {{
      getReportResultFromToken(token: $t) {{ error {_ROWS} }}
    }}"""
)


def report_url(public_url: str, token: str, local: Localisation | None = None) -> str:
    """The report's page; its query says how `local` reads (the page's reader is not signed
    in: web/report_page.py shows the figures in these formats)."""
    url = f"{public_url.rstrip('/')}{REPORT_PATH}{token}"
    reading = reading_query(local) if local is not None else {}
    return f"{url}?{urlencode(reading)}" if reading else url


def report_rows(result: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """(label, hours) of a report result's rows."""
    return tuple((_label(row), float(row["quantities"]["hours"]))
                 for row in result.get("rows") or [] if row)


@dataclass(frozen=True)
class DueReport:
    organisation_id: str
    report_id: str
    name: str
    owner: dict[str, Any]
    emails: tuple[str, ...]
    occurrence: Occurrence
    rows: tuple[tuple[str, float], ...]  # (label, hours)
    total_hours: float
    token: str | None

    def dedupe_key(self, recipient: str) -> str:
        return occurrence_key(self.occurrence, recipient)

    @property
    def localisation(self) -> Localisation:
        """The owner's: the report is the figures as its owner sees them."""
        return localisation_of(self.owner)

    def link(self, public_url: str) -> str | None:
        """The page showing the report's figures without signing in, when the service gave
        a link token."""
        return (report_url(public_url, self.token, self.localisation) if self.token
                else None)


class ReportChannel(Protocol):
    async def due_report(self, due: DueReport) -> int:
        """Render and queue the report for whom this channel reaches; how many were new."""
        ...


def _label(row: dict[str, Any]) -> str:
    entities = row.get("entities") or {}
    parts = [(entities.get("person") or {}).get("name") or ""]
    parts += [p["name"] for p in entities.get("projects") or [] if p]
    return " / ".join(p for p in parts if p) or "Total"


@dataclass(frozen=True)
class Scheduled:
    """A saved report's schedule as `getReports` gives it (what the preview lists and the
    sender runs)."""

    report_id: str
    name: str
    owner: dict[str, Any]
    emails: tuple[str, ...]
    enabled: bool
    recurrence: Recurrence | None  # None: a recurrence this timebot does not know
    last_run_ms: int

    @property
    def zone(self) -> ZoneInfo:
        return zone(time_zone_of(self.owner))

    def due(self, now_ms: int) -> Occurrence | None:
        """The occurrence due now, if the report is enabled and has an owner."""
        if not self.enabled or self.recurrence is None or not self.owner.get("id"):
            return None
        try:
            return due_occurrence(self.report_id, self.recurrence, now_ms, self.zone,
                                  self.last_run_ms)
        except ValueError:
            return None


def occurrence_key(occurrence: Occurrence, recipient: str) -> str:
    """The dedupe key of one occurrence to one recipient (the outbox's, the Slack queue's)."""
    return f"{occurrence.key}:{recipient.lower()}"


async def scheduled_reports(runtime: Ground, organisation_id: str) -> list[Scheduled]:
    key = await runtime.directory.integration_key(organisation_id)
    data = await runtime.client.execute(REPORTS, {}, apikey=key)
    found = []
    for report in data.get("getReports") or []:
        if not report:
            continue
        settings = report.get("reccurence") or {}
        try:
            recurrence: Recurrence | None = Recurrence(
                settings["period"], settings["target"], settings["sendMode"],
                int(settings["sendOffset"]), int(settings["hourOfDay"]))
        except (KeyError, TypeError, ValueError):
            recurrence = None
        found.append(Scheduled(
            str(report["id"]), str(report.get("name") or ""),
            (report.get("folder") or {}).get("owner") or {},
            tuple(e for e in report.get("notifyByEmail") or [] if e),
            bool(report.get("reccurenceEnabled")), recurrence,
            int(((settings.get("lastRun") or {}).get("ts")) or 0)))
    return found


async def due_reports(runtime: Ground, organisation_id: str) -> AsyncIterator[DueReport]:
    now = runtime.clock.now_ms()
    for scheduled in await scheduled_reports(runtime, organisation_id):
        occurrence = scheduled.due(now)
        if occurrence is None:
            continue
        owner = scheduled.owner
        owner_key = await runtime.directory.apikey_for(organisation_id, str(owner["id"]))
        linked = await runtime.client.offers("SvcReportResult", "token", apikey=owner_key)
        period = {"target": "custom", "start": occurrence.start_ms, "end": occurrence.end_ms}
        result = (await runtime.client.execute(
            RUN_WITH_LINK_EXTENSION if linked else RUN,
            {"id": scheduled.report_id, "p": period}, apikey=owner_key)).get("runReport") or {}
        rows = report_rows(result)
        yield DueReport(organisation_id, scheduled.report_id, scheduled.name, owner,
                        scheduled.emails, occurrence, rows, sum(hours for _, hours in rows),
                        result.get("token"))
