"""Access is enforced where time and expenses are recorded, against the owner: addTimeRecord,
edits that change the projects or the absence type, cloneTimeRecords, addExpenseRecord and
its edits, and the legacy interface's time_entry.create; refused with a message naming the
person and the item. Through POST /graphql and POST /api/v2 on both backends."""

from __future__ import annotations

from typing import Any

from tests.service.access_support import absence_type, expense_type, link, project, switch
from tests.service.legacy.test_legacy import legacy_for
from tests.support import DAY_MS, Org

T0 = 1_780_000_000_000
ADD = """mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId], $a: SvcId) {
  addTimeRecord(personId: $p, startTime: $s, duration: 3600000, projectIds: $pr, absenceId: $a)
  { id } }"""
EDIT_PROJECTS = """mutation($id: SvcId!, $pr: [SvcId]!) {
  editTimeRecordProjects(id: $id, projectIds: $pr) { id } }"""
EDIT_ABSENCE = """mutation($id: SvcId!, $a: SvcId!) {
  editTimeRecordAbsence(id: $id, absenceId: $a) { id } }"""
CLONE = """mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!, $ts: SvcTimestamp!,
  $te: SvcTimestamp!) { cloneTimeRecords(personId: $p, sourceStartTime: $s, sourceEndTime: $e,
  targetStartTime: $ts, targetEndTime: $te) { id } }"""
ADD_EXPENSE = """mutation($t: SvcId!, $p: SvcId, $pr: SvcId) {
  addExpenseRecord(date: 1780000000000, expenseTypeId: $t, value: 1200, personId: $p,
  projectId: $pr) { id } }"""
COUNT = """query($p: SvcId!) { countTimeRecords(startTime: 0, endTime: 4000000000000,
  filter: [{personId: $p}]) }"""


async def count(org: Org, person_id: str) -> int:
    return int((await org.admin.gql(COUNT, {"p": person_id}))["countTimeRecords"])


async def add(gql: Any, person_id: str, start: int, projects: list[str] | None = None,
              absence: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = await gql.body(
        ADD, {"p": person_id, "s": start, "pr": projects, "a": absence}
    )
    return body


async def test_time_on_a_project_the_owner_may_not_use_is_refused(org: Org) -> None:
    org.live.clock.set(T0)
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    hermes = await project(org, "Hermes")
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    # Shown by default: Erin is on Apollo's exclusion list.
    refused = await add(erin.gql, erin.id, T0, [apollo])
    assert refused["errors"][0]["message"] == "Erin has no access to the project Apollo"
    # Made by the admin for Erin: checked against Erin, the owner.
    refused = await add(org.admin.gql, erin.id, T0, [hermes, apollo])
    assert refused["errors"][0]["message"] == "Erin has no access to the project Apollo"
    assert await count(org, erin.id) == 0
    # The admin is not on the list: their own time on Apollo is fine.
    assert not (await add(org.admin.gql, org.admin.id, T0, [apollo])).get("errors")
    # Hidden by default, the list grants: now Apollo is Erin's and Hermes is not.
    await switch(org, "Project", False)
    assert not (await add(erin.gql, erin.id, T0, [apollo])).get("errors")
    refused = await add(erin.gql, erin.id, T0 + 3_600_000, [hermes])
    assert refused["errors"][0]["message"] == "Erin has no access to the project Hermes"
    # Available to everyone: the override wins.
    await org.admin.gql("mutation($id: SvcId!) { editProjectAvailability(id: $id, "
                        "availability: true) { id } }", {"id": hermes})
    assert not (await add(erin.gql, erin.id, T0 + 3_600_000, [hermes])).get("errors")
    assert await count(org, erin.id) == 2


async def test_edits_and_clones_are_checked_too(org: Org) -> None:
    org.live.clock.set(T0)
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    hermes = await project(org, "Hermes")
    vacation = await absence_type(org, "Vacation")
    sick = await absence_type(org, "Sick leave")
    first = (await add(erin.gql, erin.id, T0, [apollo]))["data"]["addTimeRecord"]["id"]
    leave = (await add(erin.gql, erin.id, T0 + 7_200_000, absence=vacation))["data"][
        "addTimeRecord"]["id"]
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", hermes)
    await link(org, "assignAbsenceTypeToPerson", "personId", erin.id, "absenceTypeId", sick)
    message = await erin.gql.error(EDIT_PROJECTS, {"id": first, "pr": [apollo, hermes]})
    assert message == "Erin has no access to the project Hermes"
    message = await erin.gql.error(EDIT_ABSENCE, {"id": leave, "a": sick})
    assert message == "Erin has no access to the absence type Sick leave"
    # Apollo stays on the record; an edit that changes nothing she may not use passes.
    await erin.gql(EDIT_PROJECTS, {"id": first, "pr": [apollo]})
    # Apollo closed to Erin later: a clone of the week would record it again and is refused.
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    variables = {"p": erin.id, "s": T0, "e": T0 + DAY_MS, "ts": T0 + 7 * DAY_MS,
                 "te": T0 + 8 * DAY_MS}
    assert await erin.gql.error(CLONE, variables) == "Erin has no access to the project Apollo"
    assert await count(org, erin.id) == 2


async def test_time_off_the_owner_may_not_use_is_refused(org: Org) -> None:
    org.live.clock.set(T0)
    erin = await org.add_member("Erin")
    vacation = await absence_type(org, "Vacation")
    await switch(org, "AbsenceType", False)
    refused = await add(org.admin.gql, erin.id, T0, absence=vacation)
    assert refused["errors"][0]["message"] == "Erin has no access to the absence type Vacation"
    await link(org, "assignAbsenceTypeToPerson", "personId", erin.id, "absenceTypeId", vacation)
    assert not (await add(erin.gql, erin.id, T0, absence=vacation)).get("errors")


async def test_expenses_follow_the_type_lists_and_the_projects_it_is_limited_to(
    org: Org,
) -> None:
    erin = await org.add_member("Erin")
    travel = await expense_type(org, "Travel")
    apollo = await project(org, "Apollo")
    docs = await project(org, "Docs", apollo)
    hermes = await project(org, "Hermes")
    await link(org, "assignExpenseTypeToPerson", "personId", erin.id, "expenseTypeId", travel)
    message = await erin.gql.error(ADD_EXPENSE, {"t": travel, "p": erin.id})
    assert message == "Erin has no access to the expense type Travel"
    await link(org, "unassignExpenseTypeFromPerson", "personId", erin.id, "expenseTypeId",
               travel)
    await link(org, "assignExpenseTypeToProject", "projectId", apollo, "expenseTypeId", travel)
    # Limited to Apollo: its subproject Docs counts, Hermes does not, nor no project.
    await erin.gql(ADD_EXPENSE, {"t": travel, "p": erin.id, "pr": docs})
    message = await erin.gql.error(ADD_EXPENSE, {"t": travel, "p": erin.id, "pr": hermes})
    assert message == "the expense type Travel is not available on the project Hermes"
    message = await erin.gql.error(ADD_EXPENSE, {"t": travel, "p": erin.id})
    assert message == "the expense type Travel is limited to projects: name a project"
    # The project itself must be Erin's.
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    message = await erin.gql.error(ADD_EXPENSE, {"t": travel, "p": erin.id, "pr": apollo})
    assert message == "Erin has no access to the project Apollo"


async def test_the_legacy_time_entry_is_checked(org: Org) -> None:
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    as_erin = await legacy_for(org, erin)
    entry = {"start": "2026-03-02 09:00:00", "duration": 3600, "project": {"id": apollo}}
    message = await as_erin.error("time_entry.create", time_entry=entry)
    assert message == "Erin has no access to the project Apollo"
    as_admin = await legacy_for(org, org.admin)
    message = await as_admin.error(
        "time_entry.create", time_entry={**entry, "person": {"id": erin.id}}
    )
    assert message == "Erin has no access to the project Apollo"
    await as_admin.ok("time_entry.create", time_entry=entry)
    assert await count(org, erin.id) == 0


async def test_subprojects_are_checked_against_their_ancestors_lists(org: Org) -> None:
    """The check reads only the record's projects and their ancestors: a grandchild of a
    project the owner is excluded from is refused, one of another project is not."""
    org.live.clock.set(T0)
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    docs = await project(org, "Docs", apollo)
    guides = await project(org, "Guides", docs)
    hermes = await project(org, "Hermes")
    notes = await project(org, "Notes", await project(org, "Manuals", hermes))
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    refused = await add(erin.gql, erin.id, T0, [guides])
    assert refused["errors"][0]["message"] == "Erin has no access to the project Guides"
    refused = await add(org.admin.gql, erin.id, T0, [notes, docs])
    assert refused["errors"][0]["message"] == "Erin has no access to the project Docs"
    assert await count(org, erin.id) == 0
    assert not (await add(erin.gql, erin.id, T0, [notes])).get("errors")
    assert await count(org, erin.id) == 1


async def test_a_tag_given_earlier_in_the_same_request_counts(org: Org) -> None:
    """The owner's tags are read once per request until it writes: a record on an open
    project, then the owner tagged, then a record on a project open to that tag — all in
    one request — goes through."""
    org.live.clock.set(T0)
    erin = await org.add_member("Erin")
    apollo = await project(org, "Apollo")
    hermes = await project(org, "Hermes")
    tag = (await org.admin.gql('mutation { addTag(name: "Crew") { id } }'))["addTag"]["id"]
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { assignProjectToTag(tagId: $t, "
                        "projectId: $p) { id } }", {"t": tag, "p": hermes})
    await switch(org, "Project", False)  # hidden by default: only the lists grant
    await link(org, "assignProjectToPerson", "personId", erin.id, "projectId", apollo)
    body = await org.admin.gql.body(
        """mutation($e: SvcId!, $t: SvcId!, $a: [SvcId], $h: [SvcId], $s: SvcTimestamp!,
                    $s2: SvcTimestamp!) {
          first: addTimeRecord(personId: $e, startTime: $s, duration: 3600000, projectIds: $a)
          { id }
          tagPerson(tagId: $t, personId: $e) { id }
          second: addTimeRecord(personId: $e, startTime: $s2, duration: 3600000,
                                projectIds: $h) { id }
        }""",
        {"e": erin.id, "t": tag, "a": [apollo], "h": [hermes], "s": T0, "s2": T0 + 3_600_000},
    )
    assert not body.get("errors"), body
    assert await count(org, erin.id) == 2


async def test_the_callers_own_tag_given_earlier_in_the_same_request_counts(org: Org) -> None:
    """Authentication notes that the caller carries no tag (so that their own writes need not
    read their tags); a tag the caller gives themself earlier in the request still counts."""
    org.live.clock.set(T0)
    hermes = await project(org, "Hermes")
    tag = (await org.admin.gql('mutation { addTag(name: "Crew") { id } }'))["addTag"]["id"]
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { assignProjectToTag(tagId: $t, "
                        "projectId: $p) { id } }", {"t": tag, "p": hermes})
    await switch(org, "Project", False)  # hidden by default: only the lists grant
    admin = org.admin.id
    refused = await add(org.admin.gql, admin, T0, [hermes])
    assert refused["errors"][0]["message"].endswith("has no access to the project Hermes")
    body = await org.admin.gql.body(
        """mutation($me: SvcId!, $t: SvcId!, $h: [SvcId], $s: SvcTimestamp!) {
          tagPerson(tagId: $t, personId: $me) { id }
          addTimeRecord(personId: $me, startTime: $s, duration: 3600000, projectIds: $h)
          { id }
        }""",
        {"me": admin, "t": tag, "h": [hermes], "s": T0},
    )
    assert not body.get("errors"), body
    assert await count(org, admin) == 1
