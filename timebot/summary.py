"""The summary of a timesheet period that review requests show (in e-mail and in Slack):
hours by day and by project, absences, comments, and what changed since a rejection.

`summarise` is pure; `load_summary` fetches its inputs over GraphQL with the organisation's
integration key (an approver who is, say, a project manager may not see the records
themselves, but must see what they are asked to approve).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from timebot.client import ServiceClient, operation

# What `summarise` reads: the person $person and their records from $start to $end.
SUMMARY_PERSON_FIELDS = "id name email localisation { timeZone { value } }"
SUMMARY_RECORD_FIELDS = """id duration comment wfh nonBillable
        startTime { ts }
        projects { id name }
        task { id name }
        absence { id name }"""
SUMMARY_SELECTION = f"""getPerson(id: $person) {{ {SUMMARY_PERSON_FIELDS} }}
      getTimeRecords(startTime: $start, endTime: $end, filter: [{{personId: $person}}]) {{
        {SUMMARY_RECORD_FIELDS}
      }}"""
SUMMARY_QUERY = operation(
    f"""query TimesheetSummary($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {{
      {SUMMARY_SELECTION}
    }}"""
)
CHANGES_QUERY = operation(
    """query SubmitChanges($id: SvcId!) {
      getApprovalEventById(id: $id) { id timeRecordIds { added modified deleted } }
    }"""
)


@dataclass(frozen=True)
class SummaryEntry:
    record_id: str
    day: date
    duration_ms: int
    project: str | None
    task: str | None
    absence: str | None
    comment: str
    change: str | None  # "added" / "modified" since the previous submission, else None


@dataclass(frozen=True)
class TimesheetSummary:
    person_id: str
    person_name: str
    person_email: str
    time_zone: str
    start_ms: int
    end_ms: int
    entries: tuple[SummaryEntry, ...]
    by_day: tuple[tuple[date, int], ...]
    by_project: tuple[tuple[str, int], ...]
    absences: tuple[tuple[str, int], ...]
    comments: tuple[tuple[date, str], ...]
    added: int
    modified: int
    deleted: int

    @property
    def total_ms(self) -> int:
        return sum(ms for _, ms in self.by_day)

    @property
    def changed_since_rejection(self) -> bool:
        return bool(self.added or self.modified or self.deleted)

    @property
    def first_day(self) -> date:
        return _local_day(self.start_ms, ZoneInfo(self.time_zone))

    @property
    def last_day(self) -> date:
        return _local_day(max(self.start_ms, self.end_ms - 1), ZoneInfo(self.time_zone))


def _local_day(ms: int, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(zone).date()


def hours(ms: int) -> str:
    """`7h 30m`, `45m`, `0h`."""
    minutes = round(ms / 60_000)
    whole, rest = divmod(minutes, 60)
    if whole and rest:
        return f"{whole}h {rest:02d}m"
    return f"{whole}h" if whole or not rest else f"{rest}m"


def summarise(
    person: dict[str, Any],
    records: list[dict[str, Any]],
    changes: dict[str, Any] | None,
    start_ms: int,
    end_ms: int,
) -> TimesheetSummary:
    zone_name = ((person.get("localisation") or {}).get("timeZone") or {}).get("value") or "UTC"
    zone = ZoneInfo(zone_name)
    added = set((changes or {}).get("added") or [])
    modified = set((changes or {}).get("modified") or [])
    entries: list[SummaryEntry] = []
    by_day: dict[date, int] = defaultdict(int)
    by_project: dict[str, int] = defaultdict(int)
    absences: dict[str, int] = defaultdict(int)
    comments: list[tuple[date, str]] = []
    for record in sorted(records, key=lambda r: (r["startTime"]["ts"], r["id"])):
        day = _local_day(int(record["startTime"]["ts"]), zone)
        duration = int(record["duration"])
        projects = record.get("projects") or []
        project = " / ".join(p["name"] for p in projects) or None
        absence = (record.get("absence") or {}).get("name")
        change = (
            "added" if record["id"] in added else "modified" if record["id"] in modified else None
        )
        entries.append(
            SummaryEntry(
                record["id"], day, duration, project, (record.get("task") or {}).get("name"),
                absence, record.get("comment") or "", change,
            )
        )
        by_day[day] += duration
        if absence:
            absences[absence] += duration
        else:
            by_project[project or "(no project)"] += duration
        if record.get("comment"):
            comments.append((day, str(record["comment"])))
    return TimesheetSummary(
        person_id=str(person["id"]),
        person_name=str(person["name"]),
        person_email=str(person["email"]),
        time_zone=zone_name,
        start_ms=start_ms,
        end_ms=end_ms,
        entries=tuple(entries),
        by_day=tuple(sorted(by_day.items())),
        by_project=tuple(sorted(by_project.items(), key=lambda item: (-item[1], item[0]))),
        absences=tuple(sorted(absences.items())),
        comments=tuple(comments),
        added=len(added),
        modified=len(modified),
        deleted=len((changes or {}).get("deleted") or []),
    )


async def load_summary(
    client: ServiceClient,
    integration_key: str,
    person_id: str,
    start_ms: int,
    end_ms: int,
    submit_id: str | None = None,
) -> TimesheetSummary:
    data = await client.execute(
        SUMMARY_QUERY, {"person": person_id, "start": start_ms, "end": end_ms},
        apikey=integration_key,
    )
    changes = None
    if submit_id:
        event = (
            await client.execute(CHANGES_QUERY, {"id": submit_id}, apikey=integration_key)
        ).get("getApprovalEventById")
        changes = (event or {}).get("timeRecordIds")
    return summarise(data["getPerson"], data["getTimeRecords"], changes, start_ms, end_ms)
