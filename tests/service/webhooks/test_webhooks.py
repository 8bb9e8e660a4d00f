"""Integration webhooks through POST /graphql: registration and secrets, signed deliveries of
every transition, retries on the service clock, and a restart that loses and repeats nothing."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from service.webhooks.queue import RETRY_DELAYS_S, TIMEOUT_S
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_project,
    add_record,
    approve,
    manage,
    reject,
    set_stages,
    submit,
)
from tests.support import (
    GQL,
    LiveServer,
    Member,
    Org,
    free_port,
    new_org,
    start_live_server,
    stop_live_server,
)

WEBHOOKS = (
    "{ currentOrganisation { integrations { webhooks { id name url secret events active } } } }"
)
ADD = (
    "mutation($n: String!, $u: String!, $e: [String]!) { addIntegrationWebhook(name: $n, url: $u,"
    " events: $e) { integrations { webhooks { id secret } } } }"
)


@dataclass
class Receiver:
    """A webhook receiver on loopback: records every request, answers `status`."""

    port: int = field(default_factory=free_port)
    status: int = 200
    delay_s: float = 0.0
    requests: list[tuple[dict[str, str], bytes, int]] = field(default_factory=list)
    runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self._handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
            self.requests.append((dict(request.headers), body, 0))  # the sender gave up
            return web.Response(status=self.status)
        self.requests.append((dict(request.headers), body, self.status))
        return web.Response(status=self.status)

    def accepted(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _h, body, status in self.requests if status == 200]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    found = Receiver()
    await found.start()
    try:
        yield found
    finally:
        await found.stop()


async def until(condition: Callable[[], bool], live: LiveServer, seconds: float = 10.0) -> None:
    """Wake the delivery worker until the condition holds."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        live.service.webhooks.kick()
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def register(org: Org, url: str, events: list[str]) -> dict[str, str]:
    data = await org.admin.gql(ADD, {"n": "bot", "u": url, "e": events})
    hook: dict[str, str] = data["addIntegrationWebhook"]["integrations"]["webhooks"][-1]
    return hook


def transitions(receiver: Receiver) -> list[tuple[str, str, int]]:
    return [
        (b["data"]["action"], b["data"]["status"], b["data"]["stage"])
        for b in receiver.accepted() if b["event"] == "approvalEventUpdate"
    ]


async def test_webhooks_are_admin_only_and_validated(org: Org) -> None:
    bob = await org.add_member("Bob")
    assert await bob.gql.denied(ADD, {"n": "x", "u": "https://example.com/h", "e": ["*"]}) == [
        "Mutation.addIntegrationWebhook"
    ]
    message = await org.admin.gql.error(ADD, {"n": "x", "u": "ftp://x", "e": ["*"]})
    assert message.startswith('Invalid argument "url"')
    message = await org.admin.gql.error(ADD, {"n": "x", "u": "https://e.com/h", "e": ["nope"]})
    assert message.startswith('Invalid argument "events[0]"')
    hook = await register(org, "https://example.com/hook", ["approvalEventUpdate"])
    assert len(hook["secret"]) == 64
    listed = (await org.admin.gql(WEBHOOKS))["currentOrganisation"]["integrations"]["webhooks"]
    assert listed == [{"id": hook["id"], "name": "bot", "url": "https://example.com/hook",
                       "secret": hook["secret"], "events": ["approvalEventUpdate"],
                       "active": True}]
    assert await bob.gql.denied(WEBHOOKS) == ["SvcIntegrations.webhooks"]
    rotate = (
        "mutation($id: SvcId!) { regenerateIntegrationWebhookSecret(id: $id) "
        "{ integrations { webhooks { secret } } } }"
    )
    assert await bob.gql.denied(rotate, {"id": hook["id"]}) == [
        "Mutation.regenerateIntegrationWebhookSecret"
    ]
    rotated = await org.admin.gql(rotate, {"id": hook["id"]})
    new_secret = rotated["regenerateIntegrationWebhookSecret"]["integrations"]["webhooks"][0]
    assert new_secret["secret"] != hook["secret"]
    for mutation, variables in (
        ("editIntegrationWebhookName(id: $id, name: \"renamed\")", {}),
        ("editIntegrationWebhookUrl(id: $id, url: \"https://example.org/h\")", {}),
        ("editIntegrationWebhookEvents(id: $id, events: [\"*\"])", {}),
        ("editIntegrationWebhookActive(id: $id, active: false)", {}),
    ):
        await org.admin.gql(f"mutation($id: SvcId!) {{ {mutation} {{ id }} }}",
                            {"id": hook["id"], **variables})
    listed = (await org.admin.gql(WEBHOOKS))["currentOrganisation"]["integrations"]["webhooks"]
    assert (listed[0]["name"], listed[0]["url"], listed[0]["events"], listed[0]["active"]) == (
        "renamed", "https://example.org/h", ["*"], False
    )
    await org.admin.gql("mutation($id: SvcId!) { deleteIntegrationWebhook(id: $id) { id } }",
                        {"id": hook["id"]})
    assert (await org.admin.gql(WEBHOOKS))["currentOrganisation"]["integrations"][
        "webhooks"] == []


async def test_every_transition_is_delivered_signed(org: Org, receiver: Receiver) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}, {"type": "ppm"}])
    hook = await register(org, receiver.url, ["approvalEventUpdate"])
    await add_record(bob, bob, projects=(apollo,))
    submit_id = (await submit(bob, bob))["id"]
    await until(lambda: len(receiver.requests) == 1, org.live)
    headers, body, _status = receiver.requests[0]
    expected = "sha256=" + hmac.new(hook["secret"].encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-Svc-Signature"] == expected
    assert headers["X-Svc-Event"] == "approvalEventUpdate"
    payload = json.loads(body)
    assert headers["X-Svc-Delivery"] == payload["id"]
    data = payload["data"]
    assert payload["event"] == "approvalEventUpdate" and payload["organisationId"] == org.id
    assert data["person"]["id"] == bob.id and data["submitId"] == submit_id
    assert (data["startTime"], data["endTime"]) == (WEEK, WEEK_END)
    assert (data["status"], data["stage"], data["stageType"]) == ("s", 0, "pm")
    assert [p["id"] for p in data["pendingApprovers"]] == [pam.id]

    await approve(pam, submit_id)
    await reject(mia, submit_id, 1, "too much")
    second = (await submit(bob, bob))["id"]
    await approve(mia, second)
    await until(lambda: len(receiver.requests) == 5, org.live)
    # The resubmission starts past stage 0: Pam's projects did not change, her approval stands.
    assert transitions(receiver) == [
        ("submitted", "s", 0), ("approved", "s", 1), ("rejected", "r", 1),
        ("submitted", "s", 1), ("approved", "a", 1),
    ]
    last = receiver.accepted()
    assert [p["id"] for p in last[1]["data"]["pendingApprovers"]] == [mia.id]
    assert last[2]["data"]["comment"] == "too much"
    assert last[4]["data"]["pendingApprovers"] == []
    assert len({b["id"] for b in last}) == 5


async def test_failed_deliveries_are_retried_then_given_up(
    org: Org, receiver: Receiver
) -> None:
    assert TIMEOUT_S == 10.0 and RETRY_DELAYS_S == (5, 10, 15, 25, 40)
    clock = org.live.clock
    clock.set(WEEK_END + 86_400_000)
    bob = await org.add_member("Bob")
    await register(org, receiver.url, ["approvalEventUpdate"])
    receiver.status = 500
    await add_record(bob, bob)
    await submit(bob, bob)  # no workflow: approved at once, one event
    await until(lambda: len(receiver.requests) == 1, org.live)
    for delay in RETRY_DELAYS_S:
        await recorded(org, len(receiver.requests))
        clock.advance(delay * 1000 - 1)
        org.live.service.webhooks.kick()
        await asyncio.sleep(0.3)
        attempts = len(receiver.requests)
        clock.advance(1)
        await until(lambda attempts=attempts: len(receiver.requests) == attempts + 1, org.live)
    assert len(receiver.requests) == 6
    clock.advance(3_600_000)
    org.live.service.webhooks.kick()
    await asyncio.sleep(0.5)
    assert len(receiver.requests) == 6  # given up after the fifth retry
    assert len({h["X-Svc-Delivery"] for h, _b, _s in receiver.requests}) == 1

    # A delivery that fails once succeeds on its first retry, once.
    eve = await org.add_member("Eve")
    await add_record(eve, eve)
    await submit(eve, eve)
    await until(lambda: len(receiver.requests) == 7, org.live)
    await recorded(org, 7)
    receiver.status = 200
    clock.advance(5_000)
    await until(lambda: len(receiver.requests) == 8, org.live)
    clock.advance(60_000)
    org.live.service.webhooks.kick()
    await asyncio.sleep(0.3)
    assert len(receiver.requests) == 8 and len(receiver.accepted()) == 1


async def recorded(org: Org, attempts: int) -> None:
    """Wait until the worker has recorded `attempts` failed attempts (and so scheduled the next
    one from the clock as it was): moving the frozen clock before that would race it."""
    from sqlalchemy import func, select

    from service.timesheets.models import IntegrationWebhook, WebhookDelivery

    for _ in range(400):
        async with org.live.service.sessions() as session:
            total = await session.scalar(
                select(func.coalesce(func.sum(WebhookDelivery.attempts), 0))
                .join(IntegrationWebhook, IntegrationWebhook.id == WebhookDelivery.webhook_id)
                .where(
                    IntegrationWebhook.organisation_id == org.id,
                    WebhookDelivery.last_error.is_not(None),
                )
            )
        if total is not None and total >= attempts:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the worker did not record {attempts} failed attempts")


def rebind(member: Member, http: httpx.AsyncClient, live: LiveServer) -> Member:
    return Member(member.id, member.name, member.email, member.apikey,
                  GQL(http, live.graphql_url, member.apikey))


async def test_restart_loses_and_repeats_no_transition(
    live: LiveServer, http: httpx.AsyncClient, receiver: Receiver, tmp_path: Path
) -> None:
    first = await start_live_server(live.backend, tmp_path)
    try:
        org = await new_org(first, http)
        bob = await org.add_member("Bob")
        mia = await org.add_member("Mia", role="manager")
        await manage(org, mia, bob)
        await set_stages(org, [{"type": "ppm"}])
        await register(org, receiver.url, ["approvalEventUpdate"])
        await add_record(bob, bob)
        submit_id = (await submit(bob, bob))["id"]
        await until(lambda: len(receiver.accepted()) == 1, first)
        receiver.status = 503  # the receiver is down: the next transitions wait in the queue
        await reject(mia, submit_id, 0, "add Friday")
        second = (await submit(bob, bob))["id"]
        await until(lambda: len(receiver.requests) == 3, first)
    finally:
        databases, first.databases = first.databases, []
        await stop_live_server(first)

    receiver.status = 200
    restarted = await start_live_server(live.backend, tmp_path, reuse_databases=databases)
    try:
        restarted.clock.advance(60_000)  # past the first retry
        mia = rebind(mia, http, restarted)
        await until(lambda: len(receiver.accepted()) == 3, restarted)
        await approve(mia, second)
        await until(lambda: len(receiver.accepted()) == 4, restarted)
        restarted.clock.advance(600_000)
        restarted.service.webhooks.kick()
        await asyncio.sleep(0.3)
    finally:
        await stop_live_server(restarted)
    assert transitions(receiver) == [
        ("submitted", "s", 0), ("rejected", "r", 0), ("submitted", "s", 0), ("approved", "a", 0)
    ]
    assert len({b["id"] for b in receiver.accepted()}) == 4


async def test_timesheet_reminders_skip_submitted_and_approved(
    org: Org, receiver: Receiver
) -> None:
    mia = await org.add_member("Mia", role="manager")
    names = ("Bob", "Eve", "Carl", "Dan", "Fay")
    people = {n: await org.add_member(n) for n in names}
    for person in people.values():
        await manage(org, mia, person)
    await set_stages(org, [{"type": "ppm"}])
    await org.admin.gql(  # Fay has no workflow: approved at once
        "mutation($id: SvcId!) { editPersonApprovalStages(id: $id, stages: []) { id } }",
        {"id": people["Fay"].id},
    )
    for name in ("Bob", "Carl", "Dan", "Fay"):
        await add_record(people[name], people[name])
    carl = (await submit(people["Carl"], people["Carl"]))["id"]
    await reject(mia, carl, 0, "redo")
    await submit(people["Dan"], people["Dan"])
    assert (await submit(people["Fay"], people["Fay"]))["status"] == "a"
    await register(org, receiver.url, ["timesheetReminder"])
    remind = (
        "mutation($p: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { sendTimesheetReminder("
        "personIds: $p, startTime: $s, endTime: $e) }"
    )
    variables = {"p": [p.id for p in people.values()], "s": WEEK, "e": WEEK_END}
    assert await people["Eve"].gql.denied(remind, variables) == [
        "Mutation.sendTimesheetReminder"
    ]
    assert (await mia.gql(remind, variables))["sendTimesheetReminder"] is True
    await until(lambda: len(receiver.requests) == 3, org.live)
    got = sorted((b["data"]["person"]["name"], b["data"]["status"], b["data"]["entries"])
                 for b in receiver.accepted())
    assert got == [("Bob", "d", 1), ("Carl", "r", 1), ("Eve", "d", 0)]
    assert {b["event"] for b in receiver.accepted()} == {"timesheetReminder"}


async def test_approvers_are_reminded_after_n_days(org: Org, receiver: Receiver) -> None:
    clock = org.live.clock
    clock.set(WEEK_END)
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    await org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 2) { id } }"
    )
    assert 'Invalid argument "approvalReminder"' in await org.admin.gql.error(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 999) { id } }"
    )
    await register(org, receiver.url, ["approvalReminder"])
    await add_record(bob, bob)
    submit_id = (await submit(bob, bob))["id"]
    clock.advance(86_400_000)
    org.live.service.webhooks.kick()
    await asyncio.sleep(0.3)
    assert receiver.requests == []
    clock.advance(86_400_000)
    await until(lambda: len(receiver.requests) == 1, org.live)
    reminder = receiver.accepted()[0]
    assert reminder["event"] == "approvalReminder"
    assert reminder["data"]["action"] == "reminder" and reminder["data"]["submitId"] == submit_id
    assert [p["id"] for p in reminder["data"]["pendingApprovers"]] == [mia.id]
    clock.advance(86_400_000)
    org.live.service.webhooks.kick()
    await asyncio.sleep(0.3)
    assert len(receiver.requests) == 1
    clock.advance(86_400_000)
    await until(lambda: len(receiver.requests) == 2, org.live)
    await approve(mia, submit_id)
    clock.advance(10 * 86_400_000)
    org.live.service.webhooks.kick()
    await asyncio.sleep(0.3)
    assert len(receiver.requests) == 2


async def test_a_receiver_slower_than_the_timeout_is_retried(
    org: Org, receiver: Receiver
) -> None:
    worker = org.live.service.webhooks
    assert worker.timeout_s == TIMEOUT_S == 10.0
    org.live.clock.set(WEEK_END)
    bob = await org.add_member("Bob")
    await register(org, receiver.url, ["approvalEventUpdate"])
    receiver.delay_s = 1.0
    worker.timeout_s = 0.2  # the 10 s timeout, shortened for the test
    try:
        await add_record(bob, bob)
        await submit(bob, bob)
        await until(lambda: len(receiver.requests) == 1, org.live)
        receiver.delay_s = 0.0
        org.live.clock.advance(5_000)
        await until(lambda: len(receiver.accepted()) == 1, org.live)
    finally:
        worker.timeout_s = TIMEOUT_S
    assert len({h["X-Svc-Delivery"] for h, _b, _s in receiver.requests}) == 1
