"""The client's direct path to the embedded service of its own process (`timebot serve`, role
all: shell.executor_call): the same answers as over HTTP, no HTTP request at all, and nothing
shared between the caller's objects and the service's."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from plumbing.db import unit_of_work
from service.graphql.execution import GraphQLResponse
from service.organisation.account_life import set_subscription
from shell.executor_call import ExecutorCall
from tests.support import LiveServer, Org
from timebot.client import TYPE_FIELDS, ServiceClient
from timebot.errors import (
    AccountInactive,
    InvalidCredentials,
    PermissionRefused,
    ServiceRequestError,
    ServiceUnavailable,
)
from timebot.process.runtime import Runtime

PERSON = "query Me { currentPerson { id name } }"
RENAME = 'mutation { editOrganisationName(name: "X") { name } }'


def _embedded_client(live: LiveServer) -> ServiceClient:
    runtime: Runtime = live.app.state.runtime
    assert runtime.client._direct is not None  # the embedded default: the direct path
    return runtime.client


async def _outcome(
    client: ServiceClient, query: str, variables: dict[str, Any] | None, apikey: str,
    allow_partial: bool = False,
) -> tuple[str, Any]:
    """What execute and execute_raw make of a request: the data and the raw answer, or the
    exception's type and arguments."""
    try:
        raw = await client.execute_raw(query, variables, apikey=apikey)
        data = await client.execute(query, variables, apikey=apikey, allow_partial=allow_partial)
    except Exception as error:
        return type(error).__name__, error.args
    return "answer", (data, raw)


async def test_the_direct_path_answers_as_http_does(org: Org) -> None:
    employee = await org.add_member("Bob")
    direct = _embedded_client(org.live)
    http = ServiceClient(org.live.graphql_url)
    cases: list[tuple[str, dict[str, Any] | None, str, bool, str]] = [
        (PERSON, None, org.admin.apikey, False, "answer"),
        (TYPE_FIELDS, {"name": "SvcPerson"}, employee.apikey, False, "answer"),
        ("{ nothingHere }", None, org.admin.apikey, False, ServiceRequestError.__name__),
        (TYPE_FIELDS, {"name": 5}, org.admin.apikey, False, ServiceRequestError.__name__),
        (RENAME.replace('"X"', '"  "'), None, org.admin.apikey, False,
         ServiceRequestError.__name__),  # a resolver's refusal
        (PERSON, None, "no-such-key", False, InvalidCredentials.__name__),
        (RENAME, None, employee.apikey, False, PermissionRefused.__name__),
        (RENAME, None, employee.apikey, True, "answer"),
        (PERSON, {"when": datetime.date(2024, 1, 1)}, org.admin.apikey, False,
         ServiceUnavailable.__name__),  # variables that cannot be sent: nothing is
    ]
    try:
        for query, variables, key, partial, expected in cases:
            over_http = await _outcome(http, query, variables, key, partial)
            assert over_http[0] == expected, (query, over_http)
            assert await _outcome(direct, query, variables, key, partial) == over_http, query
        async with unit_of_work(org.live.service.sessions) as session:
            await set_subscription(session, org.id, False)
        try:
            over_http = await _outcome(http, PERSON, None, org.admin.apikey)
            assert over_http[0] == AccountInactive.__name__, over_http
            assert await _outcome(direct, PERSON, None, org.admin.apikey) == over_http
        finally:
            async with unit_of_work(org.live.service.sessions) as session:
                await set_subscription(session, org.id, True)
    finally:
        await http.close()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[httpx.Request]]:
    """Every request an httpx client sends (aiohttp's transport included: it is below)."""
    requests: list[httpx.Request] = []
    send = httpx.AsyncClient.send

    async def recording(self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any
                        ) -> httpx.Response:
        requests.append(request)
        return await send(self, request, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "send", recording)
    yield requests


async def test_the_embedded_default_makes_no_http_request(
    org: Org, sent: list[httpx.Request]
) -> None:
    client = _embedded_client(org.live)
    data = await client.execute(PERSON, apikey=org.admin.apikey)
    assert data["currentPerson"]["id"] == org.admin.id
    with pytest.raises(InvalidCredentials):
        await client.execute(PERSON, apikey="no-such-key")
    assert await client.offers("SvcPerson", "name", apikey=org.admin.apikey)
    assert client._transport is None
    assert sent == []
    # The recording itself works: the same call over HTTP is seen.
    http = ServiceClient(org.live.graphql_url)
    try:
        await http.execute(PERSON, apikey=org.admin.apikey)
    finally:
        await http.close()
    assert [str(request.url) for request in sent] == [org.live.graphql_url]


class _KeepingExecutor:
    """An executor that keeps what it is given and what it answers (as a JSON scalar may)."""

    def __init__(self) -> None:
        self.kept: dict[str, Any] = {"settings": {"colour": "red"}}
        self.payloads: list[dict[str, Any]] = []

    async def run(self, payload: Any, apikey: str | None) -> GraphQLResponse:
        self.payloads.append(payload)
        return GraphQLResponse(200, {"data": {"org": self.kept}})


async def test_caller_and_service_share_no_objects() -> None:
    executor = _KeepingExecutor()
    client = ServiceClient("http://embedded/graphql", direct=ExecutorCall(executor))  # type: ignore[arg-type]
    variables = {"input": {"settings": {"colour": "blue"}}, "ids": ["a"]}
    data = await client.execute("query Q($input: X) { org }", variables, apikey="k")
    assert executor.payloads[0]["variables"] == variables
    variables["input"]["settings"]["colour"] = "green"
    variables["ids"].append("b")
    assert executor.payloads[0]["variables"] == {
        "input": {"settings": {"colour": "blue"}}, "ids": ["a"]
    }
    data["org"]["settings"]["colour"] = "changed by the caller"
    assert executor.kept == {"settings": {"colour": "red"}}


async def test_a_crash_in_the_service_is_its_http_500() -> None:
    class Crashing:
        async def run(self, payload: Any, apikey: str | None) -> GraphQLResponse:
            raise RuntimeError("boom")

    class Unwritable:
        async def run(self, payload: Any, apikey: str | None) -> GraphQLResponse:
            return GraphQLResponse(200, {"data": {"x": float("nan")}})

    for executor in (Crashing(), Unwritable()):
        client = ServiceClient("http://embedded/graphql", direct=ExecutorCall(executor))  # type: ignore[arg-type]
        with pytest.raises(ServiceUnavailable, match="HTTP 500, not JSON"):
            await client.execute("{ x }", apikey="k")
