"""Set-up helpers shared by the approval, journal and webhook tests (no tests here).

Everything goes through POST /graphql with the keys of the people involved; the structure
(projects, tasks, tags, managers) is set up by the admin with the other areas' operations."""

from __future__ import annotations

from typing import Any

from tests.support import DAY_MS, HOUR_MS, Member, Org

# Monday 2 March 2026, 00:00 UTC: the week under review in most tests.
WEEK = 1_772_409_600_000
WEEK_END = WEEK + 7 * DAY_MS

EVENT_FIELDS = "id submitId status stage comment rejectedStage systemAction " \
    "timeRecordIds { added modified deleted } person { id } by { id name }"
STATE_FIELDS = (
    "status currentStage currentStageType submitId pendingApprovers { id name } "
    "by { id } stageDetails { stage type skipped approvedBy { person { id } ts } "
    "pending { id } }"
)


async def add_project(org: Org, name: str, parent: str | None = None,
                      managers: tuple[Member, ...] = ()) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!, $p: SvcId) { addProject(name: $n, parentId: $p) { id } }",
        {"n": name, "p": parent},
    )
    project_id: str = data["addProject"]["id"]
    for manager in managers:
        await org.admin.gql(
            "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfProject(managerId: $m, "
            "projectId: $p) { id } }",
            {"m": manager.id, "p": project_id},
        )
    return project_id


async def add_task(org: Org, name: str, owner: Member | None = None) -> str:
    data = await org.admin.gql(
        "mutation($n: SvcName!) { addTask(name: $n) { id } }", {"n": name}
    )
    task_id: str = data["addTask"]["id"]
    if owner is not None:
        await org.admin.gql(
            "mutation($t: SvcId!, $p: SvcId!) { assignOwnerOfTask(taskId: $t, personId: $p) "
            "{ id } }",
            {"t": task_id, "p": owner.id},
        )
    return task_id


async def add_tag(org: Org, name: str, people: tuple[Member, ...] = ()) -> str:
    data = await org.admin.gql("mutation($n: SvcName!) { addTag(name: $n) { id } }", {"n": name})
    tag_id: str = data["addTag"]["id"]
    for person in people:
        await org.admin.gql(
            "mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) { id } }",
            {"t": tag_id, "p": person.id},
        )
    return tag_id


async def manage(org: Org, manager: Member, person: Member) -> None:
    await org.admin.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p) "
        "{ id } }",
        {"m": manager.id, "p": person.id},
    )


async def add_record(
    who: Member, owner: Member, day: int = 0, hours: int = 2,
    projects: tuple[str, ...] = (), task: str | None = None,
) -> str:
    data = await who.gql(
        "mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!, $pr: [SvcId], $t: SvcId) {"
        " addTimeRecord(startTime: $s, duration: $d, personId: $p, projectIds: $pr, taskId: $t)"
        " { id } }",
        {"s": WEEK + day * DAY_MS + 9 * HOUR_MS, "d": hours * HOUR_MS, "p": owner.id,
         "pr": list(projects) or None, "t": task},
    )
    record_id: str = data["addTimeRecord"]["id"]
    return record_id


SET_STAGES = (
    "mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s) "
    "{ id approvalStages { value { type quorum persons { id } tags { id } } "
    "path { id collection } } } }"
)


async def set_stages(org: Org, stages: list[dict[str, Any]] | None) -> Any:
    return (await org.admin.gql(SET_STAGES, {"s": stages}))["editOrganisationApprovalStages"]


SUBMIT = (
    "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    f"submitTimesheet(personId: $p, startTime: $s, endTime: $e) {{ {EVENT_FIELDS} }} }}"
)
APPROVE = f"mutation($id: SvcId!) {{ approveTimesheet(id: $id) {{ {EVENT_FIELDS} }} }}"
REJECT = (
    "mutation($id: SvcId!, $st: Int!, $c: String!) { "
    f"rejectTimesheet(id: $id, stage: $st, comment: $c) {{ {EVENT_FIELDS} }} }}"
)
STATE = (
    "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    f"getApprovalState(personId: $p, startTime: $s, endTime: $e) {{ {STATE_FIELDS} }} }}"
)
PENDING = (
    "query($all: Boolean) { getPendingApprovals(showAll: $all) { person { id } submitId "
    "status currentStage totalDuration pendingApprovers { id } startTime { ts } } }"
)


async def submit(who: Member, owner: Member) -> dict[str, Any]:
    data = await who.gql(SUBMIT, {"p": owner.id, "s": WEEK, "e": WEEK_END})
    event: dict[str, Any] = data["submitTimesheet"]
    return event


async def approve(who: Member, submit_id: str) -> dict[str, Any]:
    event: dict[str, Any] = (await who.gql(APPROVE, {"id": submit_id}))["approveTimesheet"]
    return event


async def reject(who: Member, submit_id: str, stage: int, comment: str) -> dict[str, Any]:
    data = await who.gql(REJECT, {"id": submit_id, "st": stage, "c": comment})
    event: dict[str, Any] = data["rejectTimesheet"]
    return event


async def state(who: Member, owner: Member) -> dict[str, Any]:
    data = await who.gql(STATE, {"p": owner.id, "s": WEEK, "e": WEEK_END})
    result: dict[str, Any] = data["getApprovalState"]
    return result


def pending_ids(current: dict[str, Any]) -> set[str]:
    return {p["id"] for p in current["pendingApprovers"]}
