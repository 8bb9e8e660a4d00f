"""The thin GraphQL adapter of quick time entry: every call as the person, with their own key.

Nothing is decided here; `timebot.timeentry.plan` decides and `timebot.timeentry.actions`
orders the calls. Errors are the client's (timebot.errors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timebot.client import ServiceClient, operation
from timebot.errors import ServiceClientError
from timebot.timeentry.plan import (
    AbsenceRow,
    Catalogue,
    ProjectRow,
    RecordPlan,
    TaskRow,
    build_catalogue,
)

RECORD_FIELDS = """id duration comment wfh nonBillable
  startTime { ts } endTime { ts }
  projects { id name } task { id name } absence { id name unit }"""

# getProjects lists, for a non-admin, only the projects they may use (or manage); the
# absence types are those the person may use.
CATALOGUE = operation(
    """query TimeEntryCatalogue($person: SvcId!) {
      getProjects { id name parent { id } }
      getTasks { id name parent { id } }
      getAvailableAbsenceTypes(personId: $person) { id name unit }
    }"""
)
PERSON_ZONE = operation(
    "query PersonZone($id: SvcId!) { getPerson(id: $id) { localisation { timeZone { value } } } }"
)
ADD = operation(
    f"""mutation QuickAdd($start: SvcTimestamp!, $end: SvcTimestamp, $duration: Int!,
        $person: SvcId!, $task: SvcId, $absence: SvcId, $projects: [SvcId]) {{
      addTimeRecord(startTime: $start, endTime: $end, duration: $duration, personId: $person,
                    taskId: $task, absenceId: $absence, projectIds: $projects) {{ {RECORD_FIELDS} }}
    }}"""
)
EDIT_COMMENT = operation(
    "mutation($id: SvcId!, $v: String!) { editTimeRecordComment(id: $id, comment: $v) { id } }"
)
EDIT_WFH = operation(
    "mutation($id: SvcId!, $v: Boolean!) { editTimeRecordWfh(id: $id, wfh: $v) { id } }"
)
EDIT_NON_BILLABLE = operation(
    "mutation($id: SvcId!, $v: Boolean!) {"
    " editTimeRecordNonBillable(id: $id, nonBillable: $v) { id } }"
)
DELETE = operation(
    "mutation QuickDelete($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }"
)
GET = operation(
    f"query QuickGet($id: SvcId!) {{ getTimeRecord(id: $id) {{ {RECORD_FIELDS} }} }}"
)
RECORDS = operation(
    f"""query QuickRecords($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {{
      getTimeRecords(startTime: $start, endTime: $end, filter: [{{personId: $person}}]) {{
        {RECORD_FIELDS}
      }}
    }}"""
)
STATE = operation(
    """query QuickState($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
      getApprovalState(personId: $person, startTime: $start, endTime: $end) {
        status currentStage pendingApprovers { name }
      }
    }"""
)
SUBMIT = operation(
    """mutation QuickSubmit($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
      submitTimesheet(personId: $person, startTime: $start, endTime: $end) {
        id status stage
      }
    }"""
)


@dataclass(frozen=True)
class Gateway:
    """The service, as one person."""

    client: ServiceClient
    apikey: str
    person_id: str

    async def _run(self, document: Any, variables: dict[str, Any] | None = None
                   ) -> dict[str, Any]:
        return await self.client.execute(document, variables, apikey=self.apikey)

    async def time_zone(self) -> str | None:
        data = await self._run(PERSON_ZONE, {"id": self.person_id})
        return (((data.get("getPerson") or {}).get("localisation") or {})
                .get("timeZone") or {}).get("value")

    async def catalogue(self) -> Catalogue:
        """What the person may log on: the projects and tasks they see, absence types."""
        data = await self._run(CATALOGUE, {"person": self.person_id})
        projects = [
            ProjectRow(p["id"], p["name"], (p.get("parent") or {}).get("id"))
            for p in data["getProjects"] if p
        ]
        task_rows = [t for t in data["getTasks"] if t]
        homes: dict[str, list[str]] = {t["id"]: [] for t in task_rows}
        if projects and task_rows:
            # one request: which tasks each project holds (aliases, variables for the ids)
            declared = ", ".join(f"$p{i}: SvcId" for i in range(len(projects)))
            fields = " ".join(
                f"p{i}: filterTaskIds(filter: [{{projectId: $p{i}}}])"
                for i in range(len(projects))
            )
            assigned = await self._run(
                f"query TaskHomes({declared}) {{ {fields} }}",
                {f"p{i}": p.id for i, p in enumerate(projects)},
            )
            for i, project in enumerate(projects):
                for task_id in assigned.get(f"p{i}") or []:
                    if task_id in homes:
                        homes[task_id].append(project.id)
        tasks = [
            TaskRow(t["id"], t["name"], (t.get("parent") or {}).get("id"),
                    tuple(homes[t["id"]]))
            for t in task_rows
        ]
        absences = [
            AbsenceRow(a["id"], a["name"], str(a.get("unit") or "day"))
            for a in data["getAvailableAbsenceTypes"] if a
        ]
        return build_catalogue(projects, tasks, absences)

    async def create(self, plan: RecordPlan) -> dict[str, Any]:
        """addTimeRecord, then the edits it has no arguments for; if any step fails, the
        record is deleted again and the error raised: a failed entry leaves no record."""
        data = await self._run(ADD, {
            "start": plan.start_ms, "end": plan.end_ms, "duration": plan.duration_ms,
            "person": self.person_id, "task": plan.task_id, "absence": plan.absence_id,
            "projects": list(plan.project_ids) or None,
        })
        record: dict[str, Any] = data["addTimeRecord"]
        try:
            if plan.comment:
                await self._run(EDIT_COMMENT, {"id": record["id"], "v": plan.comment})
                record["comment"] = plan.comment
            if plan.wfh:
                await self._run(EDIT_WFH, {"id": record["id"], "v": True})
                record["wfh"] = True
            if plan.non_billable is not None:
                await self._run(EDIT_NON_BILLABLE, {"id": record["id"], "v": plan.non_billable})
                record["nonBillable"] = plan.non_billable
        except ServiceClientError:
            try:
                await self.delete([record["id"]])
            except ServiceClientError:  # the original refusal is what the person must hear
                pass
            raise
        return record

    async def delete(self, ids: list[str]) -> list[str]:
        data = await self._run(DELETE, {"ids": ids})
        return [r["id"] for r in data["deleteTimeRecords"]]

    async def record(self, record_id: str) -> dict[str, Any]:
        return dict((await self._run(GET, {"id": record_id}))["getTimeRecord"])

    async def records(self, start_ms: int, end_ms: int) -> list[dict[str, Any]]:
        data = await self._run(RECORDS, {"person": self.person_id, "start": start_ms,
                                         "end": end_ms})
        return [r for r in data["getTimeRecords"] if r]

    async def approval_state(self, start_ms: int, end_ms: int) -> dict[str, Any]:
        data = await self._run(STATE, {"person": self.person_id, "start": start_ms,
                                       "end": end_ms})
        return dict(data.get("getApprovalState") or {"status": "d"})

    async def submit(self, start_ms: int, end_ms: int) -> dict[str, Any]:
        data = await self._run(SUBMIT, {"person": self.person_id, "start": start_ms,
                                        "end": end_ms})
        return dict(data["submitTimesheet"])
