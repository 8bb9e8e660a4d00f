"""The legacy interface v2 (POST /api/v2) through real HTTP: authentication, the account
setting, every service, external ids, errors, daily limits, and agreement with GraphQL."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select, update

from plumbing.db import unit_of_work
from service.legacy.limits import DAILY_BYTES, DAILY_REQUESTS, utc_day
from service.legacy.models import LegacyUsage
from service.models import Organisation
from tests.support import DAY_MS, HOUR_MS, Member, Org, start_live_server, stop_live_server

INVALID = "Invalid service request"
# Monday 2 March 2026, 10:00 UTC.
MONDAY_10_MS = int(datetime.datetime(2026, 3, 2, 10, tzinfo=datetime.UTC).timestamp() * 1000)


def basic(token: str, password: str = "x") -> str:
    return "Basic " + base64.b64encode(f"{token}:{password}".encode()).decode()


@dataclass
class Legacy:
    """POST /api/v2 with one person's token."""

    http: httpx.AsyncClient
    url: str
    token: str

    async def raw(self, payload: Any = None, content: bytes | None = None) -> httpx.Response:
        body = content if content is not None else json.dumps(payload).encode()
        return await self.http.post(
            self.url,
            content=body,
            headers={"Authorization": basic(self.token), "Content-Type": "application/json"},
        )

    async def ok(self, service: str, **members: Any) -> dict[str, Any]:
        response = await self.raw({"service": service, **members})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert body["status"] == "ok", body
        return body

    async def error(self, service: str, **members: Any) -> str:
        response = await self.raw({"service": service, **members})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "error", body
        assert isinstance(body["message"], str) and body["message"]
        return str(body["message"])


async def legacy_for(org: Org, member: Member) -> Legacy:
    data = await member.gql("mutation { issueLegacyToken }")
    return Legacy(org.http, f"{org.live.base_url}/api/v2", data["issueLegacyToken"])


async def add_project(org: Org, name: str, parent_id: str | None = None) -> str:
    data = await org.admin.gql(
        "mutation($name: SvcName!, $parentId: SvcId) {"
        " addProject(name: $name, parentId: $parentId) { id } }",
        {"name": name, "parentId": parent_id},
    )
    return str(data["addProject"]["id"])


async def set_usage(
    org: Org, person_id: str, requests: int, size: int, days_ago: int = 0
) -> None:
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(
            LegacyUsage(
                organisation_id=org.id,
                person_id=person_id,
                day=utc_day(org.live.clock.now_ms() - days_ago * DAY_MS),
                requests=requests,
                bytes=size,
            )
        )


async def usage_of(org: Org, person_id: str) -> LegacyUsage:
    async with unit_of_work(org.live.service.sessions) as session:
        return (
            await session.scalars(
                select(LegacyUsage).where(
                    LegacyUsage.person_id == person_id,
                    LegacyUsage.day == utc_day(org.live.clock.now_ms()),
                )
            )
        ).one()


# --- tokens, authentication, the account setting ------------------------------------------


async def test_token_module_read_issue_and_replace(org: Org) -> None:
    bob = await org.add_member("Bob")
    assert (await bob.gql("{ legacyToken }"))["legacyToken"] is None
    first = (await bob.gql("mutation { issueLegacyToken }"))["issueLegacyToken"]
    assert len(first) >= 32
    assert (await bob.gql("mutation { issueLegacyToken }"))["issueLegacyToken"] == first
    assert (await bob.gql("{ legacyToken }"))["legacyToken"] == first
    assert (await org.admin.gql("{ legacyToken }"))["legacyToken"] != first

    legacy = Legacy(org.http, f"{org.live.base_url}/api/v2", first)
    people = await legacy.ok("person.list")
    assert bob.id in {p.get("id") for p in people["persons"]}

    second = (await bob.gql("mutation { resetLegacyToken }"))["resetLegacyToken"]
    assert second != first
    assert (await bob.gql("{ legacyToken }"))["legacyToken"] == second
    refused = await legacy.raw({"service": "person.list"})
    assert refused.status_code == 401
    assert refused.json() == {"status": "error", "message": "Invalid token"}
    legacy.token = second
    await legacy.ok("person.list")


async def test_authentication_is_basic_with_token_and_x(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    url = legacy.url
    payload = json.dumps({"service": "company.list"})
    missing = await org.http.post(url, content=payload)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Basic ")
    assert missing.json()["status"] == "error"
    for header in (
        basic("not-a-token"),
        basic(legacy.token, "secret"),
        basic(legacy.token, ""),
        "Basic !!!notbase64",
        f"Bearer {legacy.token}",
    ):
        response = await org.http.post(url, content=payload, headers={"Authorization": header})
        assert response.status_code == 401, header
        body = response.json()
        assert body["status"] == "error" and body["message"], header
    # The GraphQL key is not a legacy token.
    response = await org.http.post(
        url, content=payload, headers={"Authorization": basic(org.admin.apikey)}
    )
    assert response.status_code == 401
    get = await org.http.get(url, headers={"Authorization": basic(legacy.token)})
    assert get.status_code == 405
    await legacy.ok("company.list")


async def test_disabled_api_calls_are_refused(org: Org) -> None:
    bob = await org.add_member("Bob")
    legacy = await legacy_for(org, bob)
    await legacy.ok("person.list")
    data = await org.admin.gql("{ currentOrganisation { legacyApiEnabled } }")
    assert data["currentOrganisation"]["legacyApiEnabled"] is True

    toggle = (
        "mutation($on: Boolean!) { editOrganisationLegacyApiEnabled(enabled: $on)"
        " { legacyApiEnabled } }"
    )
    assert await bob.gql.denied(toggle, {"on": False}) == [
        "Mutation.editOrganisationLegacyApiEnabled"
    ]
    data = await org.admin.gql(toggle, {"on": False})
    assert data["editOrganisationLegacyApiEnabled"]["legacyApiEnabled"] is False
    response = await legacy.raw({"service": "person.list"})
    assert response.status_code == 403
    body = response.json()
    assert body["status"] == "error" and "disabled" in body["message"]
    # GraphQL is not affected by the legacy setting.
    await bob.gql("{ currentPerson { id } }")

    await org.admin.gql(toggle, {"on": True})
    await legacy.ok("person.list")


async def test_inactive_account_is_refused_with_402(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    async with unit_of_work(org.live.service.sessions) as session:
        await session.execute(
            update(Organisation).where(Organisation.id == org.id).values(active=False)
        )
    response = await legacy.raw({"service": "company.list"})
    assert response.status_code == 402
    assert response.json() == {"status": "error", "message": "AccountIsInactive"}


# --- malformed requests -------------------------------------------------------------------


async def test_malformed_bodies_and_unknown_services(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    for content in (b"{not json", b"", b"[1, 2]", b'"company.list"', b"\xff\xfe"):
        response = await legacy.raw(content=content)
        assert response.status_code == 200, content
        body = response.json()
        assert body["status"] == "error"
        assert body["message"].startswith(INVALID), body
    for payload in ({}, {"service": 7}, {"service": ""}):
        response = await legacy.raw(payload)
        assert response.json()["message"].startswith(INVALID), payload
    message = await legacy.error("company.explode")
    assert message.startswith(INVALID) and "company.explode" in message
    assert "company.list" in message  # says which services exist
    # Payload errors are invalid service requests too, and write nothing.
    assert (await legacy.error("company.create")).startswith(INVALID)
    assert (await legacy.error("company.create", company="Acme")).startswith(INVALID)
    assert (await legacy.error("company.create", company={"name": "  "})).startswith(INVALID)
    assert (await legacy.error("company.create", company={"name": "A", "xid": 5})).startswith(
        INVALID
    )
    assert (await legacy.error("company.get")).startswith(INVALID)
    assert (await legacy.ok("company.list"))["companies"] == []


# --- companies and the external-id rule ---------------------------------------------------


async def test_company_create_get_list_and_the_xid_rule(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    created = await legacy.ok("company.create", company={"xid": "ACME-1", "name": "Acme"})
    assert created == {"status": "ok", "xid": "ACME-1"}
    plain = await legacy.ok("company.create", company={"name": "Beta"})
    assert set(plain) == {"status", "id"}
    beta_id = plain["id"]

    got = await legacy.ok("company.get", xid="ACME-1")
    assert got["company"] == {
        "xid": "ACME-1", "name": "Acme", "active": True, "projects": {"count": 0}
    }
    assert (await legacy.ok("company.get", id=beta_id))["company"] == {
        "id": beta_id, "name": "Beta", "active": True, "projects": {"count": 0}
    }

    # The GraphQL interface sees the same companies as top-level projects.
    projects = (
        await org.admin.gql("{ getProjects { id name level parent { id } category { id } } }")
    )["getProjects"]
    by_name = {p["name"]: p for p in projects}
    assert by_name["Acme"]["level"] == 0 and by_name["Acme"]["parent"] is None
    assert by_name["Beta"]["id"] == beta_id
    acme_id = by_name["Acme"]["id"]

    # From now on the xid replaces the id: the id no longer finds the company.
    assert (await legacy.error("company.get", id=acme_id)).startswith("Company not found")
    assert (await legacy.error("company.get", xid="NOPE")).startswith("Company not found")
    assert (await legacy.error("company.get", xid=beta_id)).startswith("Company not found")

    # Subprojects (at any depth) are the company's projects.
    web = await add_project(org, "Website", acme_id)
    await add_project(org, "Design", web)
    await add_project(org, "App", acme_id)
    got = await legacy.ok("company.get", company={"xid": "ACME-1"})
    assert got["company"]["projects"] == {"count": 3}
    # A subproject is not a company.
    assert (await legacy.error("company.get", id=web)).startswith("Company not found")

    listed = (await legacy.ok("company.list"))["companies"]
    assert listed == [
        {"xid": "ACME-1", "name": "Acme", "active": True, "projects": {"count": 3}},
        {"id": beta_id, "name": "Beta", "active": True, "projects": {"count": 0}},
    ]

    # Archived in GraphQL: inactive in the legacy interface.
    await org.admin.gql("mutation($id: SvcId!) { archiveProject(id: $id) { id } }", {"id": beta_id})
    assert (await legacy.ok("company.get", id=beta_id))["company"]["active"] is False
    active = (await legacy.ok("company.list", company={"active": True}))["companies"]
    assert [c["name"] for c in active] == ["Acme"]

    # An xid is unique among the organisation's companies and projects.
    duplicate = await legacy.error("company.create", company={"xid": "ACME-1", "name": "Again"})
    assert "ACME-1" in duplicate and "already used" in duplicate
    assert len((await legacy.ok("company.list"))["companies"]) == 2

    # Creating a company is an administrator's act, and it is audited.
    bob = await legacy_for(org, await org.add_member("Bob"))
    refused = await bob.error("company.create", company={"name": "Mine"})
    assert refused.startswith("Permission denied")
    trail = await org.admin.gql(
        '{ getAuditTrails(operations: ["addProject"]) { operationName person { id } } }'
    )
    assert len(trail["getAuditTrails"]) >= 2


async def test_xid_of_a_deleted_company_can_be_reused(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    await legacy.ok("company.create", company={"xid": "X1", "name": "Old"})
    projects = (await org.admin.gql("{ getProjects { id name } }"))["getProjects"]
    old_id = next(p["id"] for p in projects if p["name"] == "Old")
    await org.admin.gql("mutation($id: SvcId!) { deleteProject(id: $id) { id } }", {"id": old_id})
    assert (await legacy.error("company.get", xid="X1")).startswith("Company not found")
    assert (await legacy.ok("company.create", company={"xid": "X1", "name": "New"}))["xid"] == "X1"
    assert (await legacy.ok("company.get", xid="X1"))["company"]["name"] == "New"


# --- projects, absences, persons ----------------------------------------------------------


async def test_project_list_shows_company_references_by_xid(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    await legacy.ok("company.create", company={"xid": "C1", "name": "Acme"})
    other = (await legacy.ok("company.create", company={"name": "Other"}))["id"]
    projects = (await org.admin.gql("{ getProjects { id name } }"))["getProjects"]
    acme_id = next(p["id"] for p in projects if p["name"] == "Acme")
    web = await add_project(org, "Website", acme_id)
    design = await add_project(org, "Design", web)
    misc = await add_project(org, "Misc", other)

    listed = (await legacy.ok("project.list"))["projects"]
    assert listed == [
        {"id": design, "name": "Design", "active": True, "level": 2,
         "company": {"xid": "C1"}, "parent": {"id": web}},
        {"id": misc, "name": "Misc", "active": True, "level": 1,
         "company": {"id": other}, "parent": {"id": other}},
        {"id": web, "name": "Website", "active": True, "level": 1,
         "company": {"xid": "C1"}, "parent": {"xid": "C1"}},
    ]
    mine = (await legacy.ok("project.list", company={"xid": "C1"}))["projects"]
    assert {p["id"] for p in mine} == {web, design}
    count = (await legacy.ok("company.get", xid="C1"))["company"]["projects"]["count"]
    assert count == len(mine)
    assert (await legacy.error("project.list", company={"id": acme_id})).startswith(
        "Company not found"
    )
    # Agreement with GraphQL: every project below the top level, same names.
    graphql = (await org.admin.gql("{ getProjects { id name level } }"))["getProjects"]
    assert {p["id"] for p in graphql if p["level"] > 0} == {p["id"] for p in listed}


async def test_absence_list_agrees_with_graphql(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    for name in ("Vacation", "Sick leave"):
        await org.admin.gql(
            "mutation($n: SvcName!) { addAbsenceType(name: $n) { id } }", {"n": name}
        )
    company = (await legacy.ok("company.create", company={"name": "Acme"}))["id"]
    body = await legacy.ok("absence.list", company={"id": company})
    graphql = (await org.admin.gql("{ getAbsenceTypes { id name unit involveCosts } }"))[
        "getAbsenceTypes"
    ]
    assert sorted(body["absences"], key=lambda a: a["id"]) == sorted(
        (
            {"id": a["id"], "name": a["name"], "unit": a["unit"],
             "involve_costs": a["involveCosts"], "active": True}
            for a in graphql
        ),
        key=lambda a: a["id"],
    )
    assert [a["name"] for a in body["absences"]] == ["Sick leave", "Vacation"]
    assert (await legacy.ok("absence.list"))["absences"] == body["absences"]
    missing = await legacy.error("absence.list", company={"id": "0" * 24})
    assert missing.startswith("Company not found")


async def test_person_list_and_get_agree_with_graphql(org: Org) -> None:
    bob = await org.add_member("Bob", role="manager")
    carol = await org.add_member("Carol")
    legacy = await legacy_for(org, carol)
    persons = (await legacy.ok("person.list"))["persons"]
    graphql = (await org.admin.gql("{ getPersons { id name email archived role { name } } }"))[
        "getPersons"
    ]
    assert {p["id"]: p for p in persons} == {
        p["id"]: {"id": p["id"], "name": p["name"], "email": p["email"],
                  "active": not p["archived"], "role": p["role"]["name"]}
        for p in graphql
    }
    assert [p["name"] for p in persons] == ["Ada Admin", "Bob", "Carol"]
    got = await legacy.ok("person.get", id=bob.id)
    assert got["person"] == {
        "id": bob.id, "name": "Bob", "email": bob.email, "active": True, "role": "Manager"
    }
    assert (await legacy.ok("person.get", person={"id": carol.id}))["person"]["name"] == "Carol"
    assert (await legacy.error("person.get", id="f" * 24)).startswith("Person not found")

    await org.admin.gql("mutation($id: SvcId!) { archivePerson(id: $id) { id } }", {"id": bob.id})
    active = (await legacy.ok("person.list", person={"active": True}))["persons"]
    assert [p["name"] for p in active] == ["Ada Admin", "Carol"]
    assert (await legacy.ok("person.get", id=bob.id))["person"]["active"] is False


# --- time entries -------------------------------------------------------------------------

RECORD_FIELDS = (
    "id startTime { ts } endTime { ts } duration comment nonBillable wfh"
    " person { id } projects { id } absence { id } task { id }"
)


async def test_time_entries_agree_with_graphql(org: Org) -> None:
    legacy = await legacy_for(org, org.admin)
    await legacy.ok("company.create", company={"xid": "C1", "name": "Acme"})
    projects = (await org.admin.gql("{ getProjects { id name } }"))["getProjects"]
    acme_id = projects[0]["id"]
    web = await add_project(org, "Website", acme_id)
    vacation = (await org.admin.gql('mutation { addAbsenceType(name: "Vacation") { id } }'))[
        "addAbsenceType"
    ]["id"]

    first = await legacy.ok(
        "time_entry.create",
        time_entry={
            "xid": "T-1",
            "project": {"id": web},
            "start": "2026-03-02 09:00:00",
            "end": "2026-03-02 11:30:00",
            "comment": "kick-off",
            "billable": False,
        },
    )
    assert first == {"status": "ok", "xid": "T-1"}
    second = await legacy.ok(
        "time_entry.create",
        time_entry={"project": {"xid": "C1"}, "start": "2026-03-03 14:00:00", "duration": 5400,
                    "wfh": True},
    )
    assert set(second) == {"status", "id"}
    await legacy.ok(
        "time_entry.create",
        time_entry={"absence": {"id": vacation}, "start": "2026-03-04 00:00:00",
                    "duration": 8 * 3600},
    )
    # A record logged through GraphQL shows in the legacy list.
    graphql_added = await org.admin.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId]) {"
        " addTimeRecord(personId: $p, startTime: $s, duration: 3600000, projectIds: $pr) { id } }",
        {"p": org.admin.id, "s": MONDAY_10_MS + 4 * DAY_MS, "pr": [web]},
    )
    graphql_id = graphql_added["addTimeRecord"]["id"]

    entries = (await legacy.ok("time_entry.list"))["time_entries"]
    assert entries == [
        {"xid": "T-1", "person": {"id": org.admin.id}, "project": {"id": web}, "task": None,
         "absence": None, "start": "2026-03-02 09:00:00", "end": "2026-03-02 11:30:00",
         "duration": 9000, "comment": "kick-off", "billable": False, "wfh": False},
        {"id": second["id"], "person": {"id": org.admin.id}, "project": {"xid": "C1"},
         "task": None, "absence": None, "start": "2026-03-03 14:00:00",
         "end": "2026-03-03 15:30:00", "duration": 5400, "comment": "", "billable": True,
         "wfh": True},
        {"id": entries[2].get("id"), "person": {"id": org.admin.id}, "project": None,
         "task": None, "absence": {"id": vacation}, "start": "2026-03-04 00:00:00",
         "end": "2026-03-04 08:00:00", "duration": 28800, "comment": "", "billable": True,
         "wfh": False},
        {"id": graphql_id, "person": {"id": org.admin.id}, "project": {"id": web}, "task": None,
         "absence": None, "start": "2026-03-06 10:00:00", "end": "2026-03-06 11:00:00",
         "duration": 3600, "comment": "", "billable": True, "wfh": False},
    ]

    records = (
        await org.admin.gql(
            f"query($s: SvcTimestamp, $e: SvcTimestamp) {{ getTimeRecords(startTime: $s,"
            f" endTime: $e) {{ {RECORD_FIELDS} }} }}",
            {"s": MONDAY_10_MS - DAY_MS, "e": MONDAY_10_MS + 7 * DAY_MS},
        )
    )["getTimeRecords"]
    assert len(records) == 4
    by_start = {r["startTime"]["ts"]: r for r in records}
    kickoff = by_start[MONDAY_10_MS - HOUR_MS]
    assert kickoff["duration"] == 9000 * 1000
    assert kickoff["endTime"]["ts"] == MONDAY_10_MS + HOUR_MS + HOUR_MS // 2
    assert kickoff["comment"] == "kick-off" and kickoff["nonBillable"] is True
    assert kickoff["projects"] == [{"id": web}]
    second_record = by_start[MONDAY_10_MS + DAY_MS + 4 * HOUR_MS]
    assert second_record["id"] == second["id"]
    assert second_record["wfh"] is True and second_record["projects"] == [{"id": acme_id}]
    assert second_record["endTime"] is None and second_record["duration"] == 5400 * 1000
    assert by_start[MONDAY_10_MS + 2 * DAY_MS - 10 * HOUR_MS]["absence"] == {"id": vacation}

    # Filters: a window, a project (its subprojects included), a person.
    window = await legacy.ok(
        "time_entry.list",
        time_entry={"from": "2026-03-03 00:00:00", "to": "2026-03-04 00:00:00"},
    )
    assert [e["id"] for e in window["time_entries"]] == [second["id"]]
    on_acme = await legacy.ok("time_entry.list", time_entry={"project": {"xid": "C1"}})
    assert len(on_acme["time_entries"]) == 3
    on_web = await legacy.ok("time_entry.list", time_entry={"project": {"id": web}})
    assert [e.get("xid") or e.get("id") for e in on_web["time_entries"]] == ["T-1", graphql_id]
    mine = await legacy.ok("time_entry.list", time_entry={"person": {"id": org.admin.id}})
    assert len(mine["time_entries"]) == 4

    # The external id replaces the id: the record is not found by its id.
    t1_id = kickoff["id"]
    # Xids are per kind: T-1 names a time entry, not a project.
    wrong_kind = await legacy.error("time_entry.list", time_entry={"project": {"xid": "T-1"}})
    assert wrong_kind.startswith("Project not found")
    duplicate = await legacy.error(
        "time_entry.create",
        time_entry={"xid": "T-1", "start": "2026-03-02 09:00:00", "duration": 60},
    )
    assert "already used" in duplicate
    assert t1_id not in json.dumps(await legacy.ok("time_entry.list"))


async def test_time_entry_permissions_and_bad_input(org: Org) -> None:
    boss = await org.add_member("Boss", role="manager")
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    await org.admin.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p)"
        " { id } }",
        {"m": boss.id, "p": bob.id},
    )
    as_bob = await legacy_for(org, bob)
    as_boss = await legacy_for(org, boss)
    entry = {"start": "2026-03-02 09:00:00", "duration": 3600}
    await as_bob.ok("time_entry.create", time_entry=entry)
    refused = await as_bob.error(
        "time_entry.create", time_entry={**entry, "person": {"id": carol.id}}
    )
    assert refused.startswith("Permission denied")
    assert (await as_boss.error(
        "time_entry.create", time_entry={**entry, "person": {"id": carol.id}}
    )).startswith("Permission denied")
    await as_boss.ok("time_entry.create", time_entry=entry)
    as_admin = await legacy_for(org, org.admin)
    await as_admin.ok("time_entry.create", time_entry={**entry, "person": {"id": carol.id}})

    # Lists show what the caller may see: own entries, a manager's people's, an admin all.
    def owners(body: dict[str, Any]) -> list[str]:
        return sorted(e["person"]["id"] for e in body["time_entries"])

    assert owners(await as_bob.ok("time_entry.list")) == [bob.id]
    assert owners(await as_boss.ok("time_entry.list")) == sorted([bob.id, boss.id])
    assert owners(await as_admin.ok("time_entry.list")) == sorted([bob.id, boss.id, carol.id])

    for bad in (
        {"start": "02/03/2026 09:00", "duration": 60},
        {"start": "2026-03-02T09:00:00", "duration": 60},
        {"start": "2026-03-02 09:00:00"},
        {"start": "2026-03-02 09:00:00", "duration": -5},
        {"start": "2026-03-02 09:00:00", "duration": "1h"},
        {"start": "2026-03-02 09:00:00", "end": "2026-03-02 08:00:00"},
        {"start": "2026-03-02 09:00:00", "end": "2026-03-02 10:00:00", "duration": 60},
        {"start": "2026-03-02 09:00:00", "duration": 60, "billable": "yes"},
        {"start": "2026-03-02 09:00:00", "duration": 60, "project": "web"},
    ):
        message = await as_bob.error("time_entry.create", time_entry=bad)
        assert message.startswith(INVALID), (bad, message)
    missing = await as_bob.error(
        "time_entry.create", time_entry={**entry, "project": {"id": "a" * 24}}
    )
    assert missing.startswith("Project not found")
    assert (await as_bob.error("time_entry.list", time_entry={"from": "yesterday"})).startswith(
        INVALID
    )
    assert len((await as_bob.ok("time_entry.list"))["time_entries"]) == 1


async def test_time_entries_obey_the_timesheet_rules(org: Org) -> None:
    bob = await org.add_member("Bob")
    legacy = await legacy_for(org, bob)
    entry = {"start": "2026-03-02 09:00:00", "duration": 3600}
    await legacy.ok("time_entry.create", time_entry=entry)
    # Without a workflow a submitted timesheet is approved at once, and locked for its owner.
    event = await bob.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
        " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { status } }",
        {"p": bob.id, "s": MONDAY_10_MS - 10 * HOUR_MS, "e": MONDAY_10_MS + 14 * HOUR_MS},
    )
    assert event["submitTimesheet"]["status"] == "a"
    refused = await legacy.error("time_entry.create", time_entry=entry)
    assert not refused.startswith((INVALID, "Permission denied"))
    assert "approved" in refused
    assert len((await legacy.ok("time_entry.list"))["time_entries"]) == 1
    # An admin may still edit it.
    admin = await legacy_for(org, org.admin)
    await admin.ok("time_entry.create", time_entry={**entry, "person": {"id": bob.id}})
    assert len((await legacy.ok("time_entry.list"))["time_entries"]) == 2


async def test_times_are_in_the_organisation_time_zone(org: Org) -> None:
    async with unit_of_work(org.live.service.sessions) as session:
        await session.execute(
            update(Organisation).where(Organisation.id == org.id).values(timezone="Europe/Paris")
        )
    legacy = await legacy_for(org, org.admin)
    created = await legacy.ok(
        "time_entry.create", time_entry={"start": "2026-03-02 11:00:00", "duration": 3600}
    )
    record = (
        await org.admin.gql(
            "query($id: SvcId!) { getTimeRecord(id: $id) { startTime { ts } } }",
            {"id": created["id"]},
        )
    )["getTimeRecord"]
    assert record["startTime"]["ts"] == MONDAY_10_MS  # 11:00 in Paris is 10:00 UTC
    entry = (await legacy.ok("time_entry.list"))["time_entries"][0]
    assert (entry["start"], entry["end"]) == ("2026-03-02 11:00:00", "2026-03-02 12:00:00")


# --- daily limits -------------------------------------------------------------------------


async def test_daily_request_limit_until_the_next_utc_day(org: Org) -> None:
    org.live.clock.set(MONDAY_10_MS + 13 * HOUR_MS + 59 * 60_000)  # 23:59 UTC
    bob = await org.add_member("Bob")
    legacy = await legacy_for(org, bob)
    await set_usage(org, bob.id, DAILY_REQUESTS - 1, 0)
    await set_usage(org, bob.id, 5, 500, days_ago=40)
    await legacy.ok("person.list")  # the 4000th request of the day
    refused = await legacy.raw({"service": "person.list"})
    assert refused.status_code == 429
    body = refused.json()
    assert body["status"] == "error"
    assert "4000 requests" in body["message"] and "2026-03-03 00:00:00 UTC" in body["message"]
    assert refused.headers["retry-after"] == "60"
    assert (await legacy.raw({"service": "person.list"})).status_code == 429
    # Others, and the GraphQL interface, are not limited.
    await (await legacy_for(org, org.admin)).ok("person.list")
    await bob.gql("{ currentPerson { id } }")

    org.live.clock.advance(60_000)  # the next UTC day
    await legacy.ok("person.list")
    assert (await usage_of(org, bob.id)).requests == 1
    # The first request of a day forgets counters older than a month.
    async with unit_of_work(org.live.service.sessions) as session:
        days = await session.scalars(
            select(LegacyUsage.day).where(LegacyUsage.person_id == bob.id)
        )
        assert sorted(days) == [datetime.date(2026, 3, 2), datetime.date(2026, 3, 3)]


async def test_daily_transfer_limit_counts_both_directions(org: Org) -> None:
    org.live.clock.set(MONDAY_10_MS)
    bob = await org.add_member("Bob")
    legacy = await legacy_for(org, bob)
    await set_usage(org, bob.id, 0, DAILY_BYTES - 100)
    response = await legacy.raw({"service": "person.list"})
    assert response.status_code == 200 and response.json()["status"] == "ok"
    usage = await usage_of(org, bob.id)
    assert usage.requests == 1
    assert usage.bytes == DAILY_BYTES - 100 + len(response.request.content) + len(response.content)
    assert usage.bytes >= DAILY_BYTES  # this transfer crossed the line: it completed

    refused = await legacy.raw({"service": "person.list"})
    assert refused.status_code == 429
    assert "2048 KB" in refused.json()["message"]
    assert refused.headers["retry-after"] == str(14 * 3600)

    org.live.clock.advance(14 * HOUR_MS)
    await legacy.ok("person.list")


async def test_a_body_larger_than_a_days_transfer_is_refused(org: Org) -> None:
    org.live.clock.set(MONDAY_10_MS)
    bob = await org.add_member("Bob")
    legacy = await legacy_for(org, bob)
    response = await legacy.raw(content=b" " * (DAILY_BYTES + 1))
    assert response.status_code == 413
    assert response.json() == {
        "status": "error", "message": "The request body is larger than 2048 KB"
    }
    usage = await usage_of(org, bob.id)
    assert (usage.requests, usage.bytes) == (1, DAILY_BYTES)
    assert (await legacy.raw({"service": "person.list"})).status_code == 429


async def test_limits_are_shared_by_processes_on_one_database(
    org: Org, tmp_path: Path
) -> None:
    """A second server on the same database: concurrent requests on both never pass 4000."""
    org.live.clock.set(MONDAY_10_MS)
    other = await start_live_server(
        "sqlite",
        tmp_path,
        {"TIMEBOT_SERVICE_DATABASE_URL": org.live.settings.service_database_url},
    )
    try:
        other.clock.set(MONDAY_10_MS)
        bob = await org.add_member("Bob")
        first = await legacy_for(org, bob)
        second = Legacy(org.http, f"{other.base_url}/api/v2", first.token)
        await set_usage(org, bob.id, DAILY_REQUESTS - 10, 0)
        responses = await asyncio.gather(
            *(
                (first if i % 2 else second).raw({"service": "company.list"})
                for i in range(30)
            )
        )
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [200] * 10 + [429] * 20
        assert (await usage_of(org, bob.id)).requests == DAILY_REQUESTS + 20
    finally:
        await stop_live_server(other)


# --- the command line ---------------------------------------------------------------------


def run_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TIMEBOT_", "SLACK_"))},
        "TIMEBOT_DATA_DIR": str(data_dir),
    }
    timebot = Path(sys.executable).parent / "timebot"
    return subprocess.run(
        [str(timebot), *args], env=env, cwd=data_dir, capture_output=True, text=True,
        timeout=60, check=False,
    )


def test_cli_prints_and_resets_the_legacy_token(tmp_path: Path) -> None:
    init = run_cli(
        tmp_path, "service", "init", "--org", "Acme", "--admin-name", "Ada",
        "--admin-email", "ada@example.com",
    )
    assert init.returncode == 0, init.stderr
    token = json.loads(init.stdout)["admin"]["legacyToken"]
    assert token
    shown = run_cli(tmp_path, "service", "legacy-token", "--email", "ADA@example.com")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == token
    org_id = json.loads(init.stdout)["organisation"]["id"]
    reset = run_cli(
        tmp_path, "service", "legacy-token", "--email", "ada@example.com", "--org", org_id,
        "--reset",
    )
    assert reset.returncode == 0, reset.stderr
    assert reset.stdout.strip() not in ("", token)
    assert len(reset.stdout.strip()) == len(token)
