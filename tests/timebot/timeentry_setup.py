"""Set-up shared by the quick time entry tests (core, mail, Slack): an organisation with
projects, a task, absence types, and an employee; the clock pinned to a Wednesday."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tests.support import Member, Org

#: Wednesday 18 March 2026, 15:00 UTC (16:00 in Berlin)
NOW_MS = int(datetime(2026, 3, 18, 15, 0, tzinfo=UTC).timestamp() * 1000)
MONDAY_BERLIN_MS = int(datetime(2026, 3, 15, 23, 0, tzinfo=UTC).timestamp() * 1000)
WEEK_MS = 7 * 86_400_000

RECORDS = """query($p: SvcId!) { getTimeRecords(filter: [{personId: $p}]) {
  id duration comment wfh nonBillable startTime { ts } endTime { ts }
  projects { id name } task { id name } absence { id name } } }"""


@dataclass
class Fixture:
    org: Org
    employee: Member
    ids: dict[str, str]

    async def records(self) -> list[dict[str, Any]]:
        data = await self.org.admin.gql(RECORDS, {"p": self.employee.id})
        return sorted(data["getTimeRecords"], key=lambda r: (r["startTime"]["ts"], r["id"]))


async def build(org: Org, zone: str = "Europe/Berlin") -> Fixture:
    org.live.clock.set(NOW_MS)
    gql = org.admin.gql
    ids: dict[str, str] = {}

    async def project(name: str, parent: str | None = None) -> str:
        data = await gql("mutation($n: SvcName!, $p: SvcId) { addProject(name: $n, parentId: $p)"
                         " { id } }", {"n": name, "p": parent})
        return str(data["addProject"]["id"])

    ids["acme"] = await project("Acme")
    ids["website"] = await project("Website", ids["acme"])
    ids["beta"] = await project("Beta")
    ids["alpha"] = await project("Alpha")
    ids["alps"] = await project("Alps")
    task = await gql('mutation { addTask(name: "Design") { id } }')
    ids["design"] = task["addTask"]["id"]
    await gql("mutation($t: SvcId!, $p: SvcId!) { assignTaskToProject(taskId: $t, projectId: $p)"
              " { id } }", {"t": ids["design"], "p": ids["website"]})
    for name in ("Vacation", "Sick leave"):
        data = await gql("mutation($n: SvcName!) { addAbsenceType(name: $n) { id unit } }",
                         {"n": name})
        ids[name.lower()] = data["addAbsenceType"]["id"]
    employee = await org.add_member("Erin Employee")
    await gql("mutation($id: SvcId!, $z: SvcTimeZone) { editPersonLocalisationTimeZone("
              "id: $id, timeZone: $z) { id } }", {"id": employee.id, "z": zone})
    return Fixture(org, employee, ids)


async def require_approval(org: Org) -> None:
    """A one-stage workflow (admins approve): a submitted timesheet is locked for its owner."""
    await org.admin.gql(
        "mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s)"
        " { id } }", {"s": [{"type": "admin"}]},
    )


async def add_employee(fx: Fixture, name: str, zone: str = "Europe/Berlin") -> Member:
    """Another employee of the fixture's organisation, in `zone`."""
    member = await fx.org.add_member(name)
    await fx.org.admin.gql(
        "mutation($id: SvcId!, $z: SvcTimeZone) { editPersonLocalisationTimeZone("
        "id: $id, timeZone: $z) { id } }", {"id": member.id, "z": zone})
    return member


async def records_of(org: Org, person_id: str) -> list[dict[str, Any]]:
    data = await org.admin.gql(RECORDS, {"p": person_id})
    return sorted(data["getTimeRecords"], key=lambda r: (r["startTime"]["ts"], r["id"]))
