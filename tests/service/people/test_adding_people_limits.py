"""Rate limits for adding people (the specification's "inviting people" and "sign-up"):
addPerson at most 50 times an hour per admin and, with the users created on their first
single sign-on, 200 times an hour per organisation; a sliding window counted in the
database, so a second process (a real `timebot serve`) sees the same budget."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from oidc_provider_mock import run_server_in_thread

from service.rate_limit import HOUR_MS
from tests.net import free_port
from tests.support import GQL, Org, new_org, start_live_server, stop_live_server
from tests.timebot.serve_process import serve_env, serving
from tests.timebot.signin_support import browser

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

ADD = "mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { addPerson(name: $n, email: $e, roleId: $r) { id } }"  # noqa: E501


async def _role(gql: GQL, name: str = "Employee") -> str:
    roles = (await gql("{ getRoles { id name } }"))["getRoles"]
    return next(str(role["id"]) for role in roles if role["name"] == name)


async def _add_many(gql: GQL, count: int) -> None:
    """`count` addPerson in one request (aliases: each counts, all or nothing)."""
    role = await _role(gql)
    fields = " ".join(
        f'a{i}: addPerson(name: "P {i}", email: "p{i}.{uuid.uuid4().hex[:8]}@example.com", '
        f'roleId: "{role}") {{ id }}' for i in range(count)
    )
    data = await gql(f"mutation {{ {fields} }}")
    assert len(data) == count


async def _add_one(gql: GQL) -> str | None:
    """The error of one more addPerson (None: added)."""
    body = await gql.body(ADD, {"n": "One more", "e": f"x.{uuid.uuid4().hex[:8]}@example.com",
                                "r": await _role(gql)})
    return str(body["errors"][0]["message"]) if body.get("errors") else None


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


async def test_fifty_additions_an_hour_per_admin(org: Org) -> None:
    clock = org.live.clock
    clock.set(clock.now_ms())
    await _add_many(org.admin.gql, 50)
    refused = await _add_one(org.admin.gql)
    assert refused == ("Rate limit: adding people is allowed at most 50 times an hour per "
                       "person; try again later")
    # A refusal is not counted against anything, and adds nobody.
    count = await org.admin.gql("{ countPersons }")
    assert count["countPersons"] == 51
    other = await org.add_member("Other Admin", role="admin")
    assert await _add_one(other.gql) is None  # another admin's own budget
    clock.advance(HOUR_MS // 2)
    assert await _add_one(org.admin.gql) is not None  # a sliding window, not a fixed hour
    clock.advance(HOUR_MS // 2 + 1)
    assert await _add_one(org.admin.gql) is None


async def test_two_hundred_an_hour_per_organisation_with_sso_sign_ups(org: Org,
                                                                      provider: str) -> None:
    org.live.clock.set(org.live.clock.now_ms())
    admins = [org.admin.gql] + [
        (await org.add_member(f"Admin {n}", role="admin")).gql for n in range(4)
    ]
    for gql in admins[:4]:
        await _add_many(gql, 50)
    refused = await _add_one(admins[4])
    assert refused == ("Rate limit: adding people is allowed at most 200 times an hour per "
                       "organisation; try again later")
    # Users created on their first single sign-on use the same budget.
    domain = f"acme-{org.id}.example"
    await org.admin.gql(
        "mutation($c: SvcCustomSSOInput) { editCustomSSO(customSSO: $c) { id } }",
        {"c": {"issuer": provider, "clientId": "timebot", "clientSecret": "s3cret"}},
    )
    await org.admin.gql("mutation($g: SvcGoogleSSOInput!) { editGoogleSSO(google: $g) { id } }",
                        {"g": {"domains": [domain], "autoUser": True}})
    async with browser(org.live) as client:
        started = await client.get(f"/sso/{org.id}/custom/initiate")
        async with httpx.AsyncClient(timeout=30) as idp:
            answered = await idp.post(started.headers["location"],
                                      data={"sub": f"newcomer@{domain}"})
        back = urlsplit(answered.headers["location"])
        signed = await client.get(f"{back.path}?{back.query}")
        assert signed.status_code == 403
        assert "at most 200 times an hour per organisation" in signed.text
        assert "timebot_session" not in client.cookies
    people = (await org.admin.gql("{ getPersons { email } }"))["getPersons"]
    assert f"newcomer@{domain}" not in [p["email"] for p in people]


async def test_the_budget_is_shared_by_a_second_process(tmp_path: Path,
                                                        http: httpx.AsyncClient) -> None:
    first = await start_live_server("sqlite", tmp_path)
    try:
        org = await new_org(first, http)
        await _add_many(org.admin.gql, 50)
    finally:
        await stop_live_server(first)
    port = free_port()
    env = serve_env(tmp_path, TIMEBOT_HTTP_PORT=str(port), TIMEBOT_SMTP_PORT="0")
    async with serving(env, cwd=tmp_path) as served:
        second = GQL(http, f"{served.base}/graphql", org.admin.apikey)
        refused = await _add_one(second)
        assert refused is not None and "at most 50 times an hour per person" in refused


async def test_concurrent_additions_cannot_both_take_the_last_place(org: Org) -> None:
    await _add_many(org.admin.gql, 49)
    outcomes = await asyncio.gather(*(_add_one(org.admin.gql) for _ in range(6)))
    assert sorted(outcomes, key=str) == [None] + [
        "Rate limit: adding people is allowed at most 50 times an hour per person; "
        "try again later"
    ] * 5
    assert (await org.admin.gql("{ countPersons }"))["countPersons"] == 51


async def test_duplicate_person_shares_the_budget(org: Org) -> None:
    """duplicatePerson adds a person too: no side door around addPerson's limit."""
    org.live.clock.set(org.live.clock.now_ms())
    duplicate = ("mutation($id: SvcId!, $n: SvcName!) { duplicatePerson(id: $id, name: $n) "
                 "{ id } }")
    fields = " ".join(f'd{i}: duplicatePerson(id: "{org.admin.id}", name: "Copy {i}") {{ id }}'
                      for i in range(50))
    assert len(await org.admin.gql(f"mutation {{ {fields} }}")) == 50
    limit = ("Rate limit: adding people is allowed at most 50 times an hour per person; "
             "try again later")
    assert await org.admin.gql.error(duplicate, {"id": org.admin.id, "n": "One more"}) == limit
    assert await _add_one(org.admin.gql) == limit  # the copies used addPerson's budget
    assert (await org.admin.gql("{ countPersons }"))["countPersons"] == 51
