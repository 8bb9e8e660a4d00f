"""The demo organisation has rates and a budget that reach a report (what `make run` shows)."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from plumbing.db import unit_of_work
from service.demo import find_demo_organisation, seed_demo
from service.models import Person
from service.organisation.provisioning import ensure_api_key
from tests.support import GQL, LiveServer


async def test_demo_rates_reach_the_report(live: LiveServer, http: httpx.AsyncClient) -> None:
    now = live.clock.now_ms()
    async with unit_of_work(live.service.sessions) as session:
        await seed_demo(session, now)
        organisation = await find_demo_organisation(session)
        assert organisation is not None
        grace = (await session.scalars(select(Person).where(
            Person.organisation_id == organisation.id,
            Person.email == "grace@northwind.example"))).one()
        key = await ensure_api_key(session, grace, now)
    gql = GQL(http, live.graphql_url, key)
    data = await gql(
        "query { currentOrganisation { billings { value { method amount { value currency } } } }"
        " getProjects { name budgets { billingAmount { value } } } runInlineReport("
        "records: [time], period: {target: last12Months}, attributes: {person: true}) {"
        " rows { entities { person { name } } quantities { hours hourBilling hourCost } } } }")
    assert data["currentOrganisation"]["billings"]["value"] == [
        {"method": "hourly", "amount": {"value": 9500, "currency": "EUR"}}]
    assert any(p["budgets"] for p in data["getProjects"])
    rows = data["runInlineReport"]["rows"]
    # Grace (a manager: her role may view rates) sees her people's amounts.
    assert rows and all(r["quantities"]["hours"] > 0 for r in rows)
    assert sum(r["quantities"]["hourBilling"] for r in rows) > 0
    assert all(r["quantities"]["hourCost"] > 0 for r in rows)
    # The demo has a custom role with permissions from the catalogue.
    roles = await gql("query { getRoles { name authorisations { name view manage } } }")
    accountant = next(r for r in roles["getRoles"] if r["name"] == "Accountant")
    assert {a["name"] for a in accountant["authorisations"]} == {
        "billingRates", "expenses", "reports"}
