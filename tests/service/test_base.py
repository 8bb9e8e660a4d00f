"""Authentication, errors and the response shape of POST /graphql."""

from __future__ import annotations

from sqlalchemy import update

from plumbing.db import unit_of_work
from service.models import Organisation, Person
from tests.support import Org


async def test_current_person_and_organisation(org: Org) -> None:
    data = await org.admin.gql(
        "{ currentPerson { id name email archived role { name } }"
        "  currentOrganisation { id name locked } }"
    )
    assert data["currentPerson"]["id"] == org.admin.id
    assert data["currentPerson"]["role"]["name"] == "Admin"
    assert data["currentOrganisation"]["id"] == org.id
    assert data["currentOrganisation"]["locked"] is False


async def test_missing_and_unknown_keys_are_invalid(org: Org) -> None:
    assert await org.gql_for(None).error("{ currentPerson { id } }") == "APIKeyError:InvalidKey"
    assert await org.gql_for("nope").error("{ currentPerson { id } }") == "APIKeyError:InvalidKey"


async def test_deleted_person_and_organisation_are_named(org: Org) -> None:
    bob = await org.add_member("Bob")
    async with unit_of_work(org.live.service.sessions) as session:
        await session.delete(await session.get(Person, bob.id))
    assert await bob.gql.error("{ currentPerson { id } }") == "APIKeyError:CantFindLinkedAccount"
    async with unit_of_work(org.live.service.sessions) as session:
        await session.delete(await session.get(Organisation, org.id))
    assert (
        await org.admin.gql.error("{ currentPerson { id } }")
        == "APIKeyError:CantFindLinkedOrganisation"
    )


async def test_inactive_account_is_refused_with_402(org: Org) -> None:
    async with unit_of_work(org.live.service.sessions) as session:
        await session.execute(
            update(Organisation).where(Organisation.id == org.id).values(active=False)
        )
    response = await org.admin.gql.raw("{ currentPerson { id } }")
    assert response.status_code == 402
    assert response.json()["errors"][0]["message"] == "AccountIsInactive"


async def test_employee_may_not_rename_the_organisation(org: Org) -> None:
    bob = await org.add_member("Bob")
    denied = await bob.gql.denied('mutation { editOrganisationName(name: "X") { name } }')
    assert denied == ["Mutation.editOrganisationName"]
    data = await org.admin.gql('mutation { editOrganisationName(name: "Renamed") { name } }')
    assert data["editOrganisationName"]["name"] == "Renamed"


async def test_malformed_requests(org: Org) -> None:
    response = await org.http.post(
        org.live.graphql_url, content=b"{not json", headers={"apikey": org.admin.apikey}
    )
    assert response.status_code == 400
    message = await org.admin.gql.error("{ nope }")
    assert "nope" in message


async def test_healthz_and_metrics(org: Org) -> None:
    health = await org.http.get(f"{org.live.base_url}/readyz")
    assert health.status_code == 200
    assert health.json()["checks"]["service_database"] == "ok"
    metrics = await org.http.get(f"{org.live.base_url}/metrics")
    assert "timebot_http_requests_total" in metrics.text
