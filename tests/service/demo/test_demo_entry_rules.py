"""The demo organisation shows the entry rules (what `make run` shows): its Discovery phase
has a lock date and requires a comment, and the service holds entries to both (the lock date
everyone but an admin)."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from plumbing.db import unit_of_work
from service.demo import find_demo_organisation, seed_demo
from service.models import Person
from service.organisation.provisioning import ensure_api_key
from tests.support import GQL, HOUR_MS, LiveServer


async def test_demo_discovery_is_locked_and_needs_a_comment(live: LiveServer,
                                                            http: httpx.AsyncClient) -> None:
    now = live.clock.now_ms()
    async with unit_of_work(live.service.sessions) as session:
        await seed_demo(session, now)
        organisation = await find_demo_organisation(session)
        assert organisation is not None
        ada, margaret = [(await session.scalars(select(Person).where(
            Person.organisation_id == organisation.id,
            Person.email == f"{name}@northwind.example"))).one() for name in ("ada", "margaret")]
        key = await ensure_api_key(session, ada, now)
        employee_key = await ensure_api_key(session, margaret, now)
    gql = GQL(http, live.graphql_url, key)
    employee = GQL(http, live.graphql_url, employee_key)
    projects = (await gql("query { getProjects { id name timeSettings {"
                          " lockDate { value { ts } } forceComment { value } } } }"))["getProjects"]
    discovery = next(p for p in projects if p["name"] == "Discovery")
    lock = discovery["timeSettings"]["lockDate"]["value"]["ts"]
    assert lock <= now and discovery["timeSettings"]["forceComment"]["value"] is True
    add = ("mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId]) { addTimeRecord("
           "personId: $p, startTime: $s, duration: 3600000, projectIds: $pr) { id } }")
    early = {"s": lock - HOUR_MS, "pr": [discovery["id"]]}
    message = await employee.error(add, {"p": margaret.id, **early})
    assert "(lockDate of project Discovery)" in message
    assert await gql(add, {"p": ada.id, **early})  # an admin may
    record = (await gql(add, {"p": ada.id, "s": now, "pr": [discovery["id"]]}))[
        "addTimeRecord"]["id"]
    message = await gql.error("mutation($id: SvcId!) { editTimeRecordComment(id: $id,"
                              ' comment: "") { id } }', {"id": record})
    assert "(forceComment of project Discovery)" in message
