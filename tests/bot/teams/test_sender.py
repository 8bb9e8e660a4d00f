"""bot.teams.outgoing and bot.teams.sender_worker on each backend, against a fake Bot Connector
(the real connector client, its HTTP answered by the fake): a send goes once whatever queues
it twice; a card updated before it goes is sent current, after it is replaced in place; a 429
pauses and the same call goes again; a 403 marks the user removed without holding the queue
back; nothing goes into a tenant that does not serve the row's organisation; an answer to
someone who acted goes before a fan-out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.teams.connector import AppTokens, Connector, Credentials
from bot.teams.endpoints import TeamsEndpoints
from bot.teams.outgoing import Recipient, Send, TeamsOutbox
from bot.teams.sender_worker import NOT_SERVING, TeamsSenderWorker
from plumbing.clock import Clock
from tests.bot.slack.sender_fixtures import state_sessions  # noqa: F401
from timebot.state.db import unit_of_work
from timebot.state.queue import DONE, FAILED, QUEUED
from timebot.state.teams_models import TeamsOutgoing, TeamsTenant, TeamsUser

BASE = "http://127.0.0.1:9"  # never dialled: the fake answers in the client's transport
SERVICE_URL = f"{BASE}/amer/"
ORG, OTHER_ORG = "org-a", "org-b"
TENANT, OTHER_TENANT = "tenant-a", "tenant-b"

Answer = Callable[[httpx.Request], httpx.Response | None]


@dataclass
class FakeConnector:
    """The Bot Connector and its token service: records every activity call; `answers` may
    answer a call before the normal answer (an error, a 429)."""

    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    ids: int = 0

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": "app-token", "expires_in": 3600})
        assert request.headers["authorization"] == "Bearer app-token"
        for answer in list(self.answers):
            response = answer(request)
            if response is not None:
                return response
        body = json.loads(request.content or b"{}")
        self.calls.append((request.method, request.url.path, body))
        self.ids += 1
        return httpx.Response(200, json={"id": f"act-{self.ids}"})

    def sent_to(self, conversation: str) -> list[tuple[str, dict[str, Any]]]:
        return [(method, body) for method, path, body in self.calls
                if f"/conversations/{conversation}/" in path]


@pytest.fixture
async def fake() -> AsyncIterator[FakeConnector]:
    yield FakeConnector()


@pytest.fixture
async def world(sessions: async_sessionmaker[AsyncSession], fake: FakeConnector
                ) -> AsyncIterator[tuple[TeamsOutbox, TeamsSenderWorker]]:
    async with unit_of_work(sessions) as session:
        session.add(TeamsTenant(tenant_id=TENANT, organisation_id=ORG, service_url=SERVICE_URL,
                                consented_at_ms=0))
        session.add(TeamsTenant(tenant_id=OTHER_TENANT, organisation_id=OTHER_ORG,
                                service_url=SERVICE_URL, consented_at_ms=0))
        for name in ("ann", "bob", "cy"):
            session.add(TeamsUser(tenant_id=TENANT, aad_object_id=f"aad-{name}",
                                  organisation_id=ORG, person_id=f"p-{name}",
                                  teams_user_id=f"29:{name}", conversation_id=f"a:{name}",
                                  service_url=SERVICE_URL, linked_at_ms=0))
    endpoints = TeamsEndpoints.of(BASE)
    async with httpx.AsyncClient(transport=httpx.MockTransport(fake.handle)) as http:
        connector = Connector(http, endpoints,
                              AppTokens(http, endpoints, Credentials("app", "secret")))
        worker = TeamsSenderWorker(sessions, sessions, connector, at_once=1)
        outbox = TeamsOutbox(sessions, sessions, Clock(), wake=worker.wake)
        yield outbox, worker


def to(name: str, tenant: str = TENANT, organisation: str = ORG) -> Recipient:
    return Recipient(tenant, organisation, f"a:{name}", SERVICE_URL)


def card(text: str) -> dict[str, Any]:
    return {"type": "message", "text": text}


async def drain(worker: TeamsSenderWorker) -> None:
    while await worker.run_once():
        pass


async def rows(sessions: async_sessionmaker[AsyncSession]) -> dict[str, TeamsOutgoing]:
    async with sessions() as session:
        found = await session.scalars(select(TeamsOutgoing).order_by(TeamsOutgoing.seq))
        return {row.dedupe_key or row.id: row for row in found}


async def test_a_send_goes_once_whatever_queues_it_twice(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector,
        sessions: async_sessionmaker[AsyncSession]) -> None:
    outbox, worker = world
    assert await outbox.send(to("ann"), card("review"), key="review:1:ann")
    assert not await outbox.send(to("ann"), card("review again"), key="review:1:ann")
    await drain(worker)
    assert fake.sent_to("a:ann") == [("POST", card("review"))]
    row = (await rows(sessions))["review:1:ann"]
    assert (row.status, row.activity_id) == (DONE, "act-1")


async def test_a_card_is_sent_current_or_replaced_in_place(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector,
        sessions: async_sessionmaker[AsyncSession]) -> None:
    outbox, worker = world
    await outbox.send(to("ann"), card("asked"), key="k-ann")
    await outbox.send(to("bob"), card("asked"), key="k-bob")
    ann = (await rows(sessions))["k-ann"]
    assert await outbox.update_row(ann.id, card("approved"), context={"outcome": "yes"})
    await drain(worker)
    assert fake.sent_to("a:ann") == [("POST", card("approved"))]  # one send, current
    bob = (await rows(sessions))["k-bob"]
    assert await outbox.update_row(bob.id, card("approved"), context={"outcome": "yes"})
    await drain(worker)
    assert fake.sent_to("a:bob") == [("POST", card("asked")),
                                     ("PUT", {**card("approved"), "id": bob.activity_id})]
    assert (await rows(sessions))["k-bob"].context == {"outcome": "yes"}


async def test_a_429_pauses_and_the_same_call_goes_again(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector,
        sessions: async_sessionmaker[AsyncSession]) -> None:
    outbox, worker = world
    limited = [1]

    def once(request: httpx.Request) -> httpx.Response | None:
        if limited:
            limited.pop()
            return httpx.Response(429, headers={"Retry-After": "1"})
        return None

    fake.answers.append(once)
    await outbox.send(to("ann"), card("review"), key="k")
    assert await worker.run_once() == 1
    row = (await rows(sessions))["k"]
    assert row.status == QUEUED and worker.paused_until_ms >= row.next_attempt_ms - 1
    await drain(worker)  # waits the second out
    assert fake.sent_to("a:ann") == [("POST", card("review"))]
    row = (await rows(sessions))["k"]
    assert row.status == DONE and row.attempts == 1  # the 429 is no failure of the row


async def test_a_403_marks_the_user_removed_and_holds_nothing_back(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector,
        sessions: async_sessionmaker[AsyncSession]) -> None:
    outbox, worker = world

    def ann_gone(request: httpx.Request) -> httpx.Response | None:
        return httpx.Response(403, text="BotDisabledByUser") if (
            "a:ann" in request.url.path) else None

    fake.answers.append(ann_gone)
    await outbox.send_many([Send(to("ann"), card("1"), "ann-1"), Send(to("ann"), card("2"),
                            "ann-2"), Send(to("bob"), card("1"), "bob-1")])
    await drain(worker)
    assert fake.sent_to("a:bob") == [("POST", card("1"))]
    found = await rows(sessions)
    assert found["ann-1"].status == FAILED and "403" in str(found["ann-1"].last_error)
    assert found["ann-2"].status == FAILED and found["bob-1"].status == DONE
    async with sessions() as session:
        ann = await session.get(TeamsUser, (TENANT, "aad-ann"))
        bob = await session.get(TeamsUser, (TENANT, "aad-bob"))
    assert ann is not None and ann.removed_at_ms is not None
    assert bob is not None and bob.removed_at_ms is None
    fake.answers.clear()
    await outbox.send(to("ann"), card("3"), key="ann-3")  # queued before anyone knew
    await drain(worker)
    assert fake.sent_to("a:ann") == []  # not even tried
    assert (await rows(sessions))["ann-3"].status == FAILED


async def test_nothing_goes_into_a_tenant_that_does_not_serve_the_organisation(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector,
        sessions: async_sessionmaker[AsyncSession]) -> None:
    outbox, worker = world
    # a row of org-a that names org-b's tenant (a bug, a tenant reassigned meanwhile)
    await outbox.send(to("ann", tenant=OTHER_TENANT, organisation=ORG), card("x"), key="wrong")
    await outbox.send(to("bob"), card("y"), key="right")
    await drain(worker)
    assert [path for _method, path, _body in fake.calls] == [
        "/amer/v3/conversations/a:bob/activities"]
    found = await rows(sessions)
    assert (found["wrong"].status, found["wrong"].last_error) == (FAILED, NOT_SERVING)
    async with unit_of_work(sessions) as session:  # consent removed: nothing more goes
        tenant = await session.get(TeamsTenant, TENANT)
        assert tenant is not None
        tenant.removed_at_ms = 1
    await outbox.send(to("cy"), card("z"), key="after")
    await drain(worker)
    assert len(fake.calls) == 1 and (await rows(sessions))["after"].status == FAILED


async def test_a_temporary_failure_is_retried_later(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector,
        sessions: async_sessionmaker[AsyncSession]) -> None:
    outbox, worker = world
    fake.answers.append(lambda request: httpx.Response(503))
    await outbox.send(to("ann"), card("x"), key="k")
    await worker.run_once()
    row = (await rows(sessions))["k"]
    assert row.status == QUEUED and row.next_attempt_ms > row.created_ms
    assert row.context.get("failures") == 0  # the connector's, not the row's


async def test_an_answer_to_someone_who_acted_goes_before_a_fan_out(
        world: tuple[TeamsOutbox, TeamsSenderWorker], fake: FakeConnector) -> None:
    outbox, worker = world
    await outbox.send_many([Send(to(name), card("review"), f"fan-{name}")
                            for name in ("ann", "bob")])
    await outbox.send(to("cy"), card("your answer"), key="answer", bulk=False)
    await drain(worker)
    assert [body["text"] for _m, _p, body in fake.calls] == [
        "your answer", "review", "review"]
