"""No review request is lost: an organisation created beside a running server (`timebot service
init`, another process) is served from its first submission, and a submission whose webhook
the service gave up on while timebot was down is reconciled on start: the review e-mail (in the
Maildir outbox) and the Slack DM arrive exactly once, and a second pass sends nothing."""

from __future__ import annotations

import asyncio
import mailbox
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from starlette.applications import Starlette

from bot.slack.component import bot_of
from plumbing.clock import Clock
from service.embedded import EmbeddedService
from service.timesheets.models import (
    DELIVERY_FAILED,
    DELIVERY_PENDING,
    IntegrationWebhook,
    WebhookDelivery,
)
from service.webhooks.local import LOCAL_URL
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.harness import BOT_TOKEN, SIGNING_SECRET
from tests.mail.reviews_support import (
    add_record,
    org_events,
    outbox_rows,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.pg import drop_pg_database, pg_url
from tests.support import (
    GQL,
    LiveServer,
    Member,
    Org,
    mail_of,
    new_org,
    start_live_server,
    stop_live_server,
)
from tests.timebot.test_cli import cli_env, timebot
from timebot.notify.reconcile import Reconciler
from timebot.process.notifications import jobs_of
from timebot.process.runtime import Runtime

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


def runtime_of(live: LiveServer) -> Runtime:
    return live.app.state.runtime  # type: ignore[no-any-return]


def outbox_mails(data_dir: Path, address: str) -> list[bytes]:
    """The messages delivered to the Maildir outbox for `address`."""
    box = mailbox.Maildir(str(data_dir / "outbox"), create=False)
    found = []
    for key in box.keys():
        raw = box.get_bytes(key)
        envelope_to = raw.split(b"\r\n", 2)[1].decode()
        if address.lower() in envelope_to.lower():
            found.append(raw)
    return found


def database_env(live: LiveServer) -> dict[str, str]:
    if live.backend != "postgresql":
        return {}
    service_db, bot_db = live.databases
    return {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(service_db),
            "TIMEBOT_DATABASE_URL": pg_url(bot_db)}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_organisation_created_beside_a_running_server_is_served_at_once(
    backend: str, tmp_path: Path, http: httpx.AsyncClient
) -> None:
    data_dir = tmp_path / "data"
    live = await start_live_server(backend, data_dir, auto_subscribe=True)
    try:
        env = cli_env(
            data_dir, TIMEBOT_SECRET_KEY=live.settings.secret_key,
            TIMEBOT_HTTP_HOST="127.0.0.1", TIMEBOT_HTTP_PORT=str(live.settings.http_port),
            **database_env(live),
        )
        created = (await timebot(
            env, "service", "init", "--org", "Newco", "--admin-name", "Nell Admin",
            "--admin-email", f"nell.{uuid.uuid4().hex[:6]}@newco.example",
        )).json()
        admin = created["admin"]
        org = Org(created["organisation"]["id"], live, http, Member(
            admin["id"], "Nell Admin", admin["email"], admin["apikey"],
            GQL(http, live.graphql_url, admin["apikey"]),
        ))
        owner = await org.add_member("Otto Owner")
        approver = await org.add_member("Ava Approver", "manager")
        await set_stages(org, (approver,))
        await add_record(owner)
        await submit(owner)
        # The server's own loop would subscribe only after 30 s: the mail comes well before.
        await wait_for(lambda: _async(outbox_mails(data_dir, approver.email)), seconds=10,
                       what="the review e-mail in the outbox")
        assert len(outbox_mails(data_dir, approver.email)) == 1
    finally:
        await stop_live_server(live)


async def _async(value: Any) -> Any:
    return value


async def _exhaust_webhooks(service: EmbeddedService, clock: Clock, org_id: str) -> None:
    """Let the service give up on every delivery of the organisation (timebot is down): the
    retry schedule runs on the service clock, which is moved ahead instead of waited for.
    Deliveries to the in-process webhook stay queued: the service alone leaves them to a
    process that runs the fronts."""

    async def given_up() -> bool:
        async with service.sessions() as session:
            rows = (await session.execute(
                select(WebhookDelivery.status, IntegrationWebhook.url)
                .join(IntegrationWebhook, IntegrationWebhook.id == WebhookDelivery.webhook_id)
                .where(WebhookDelivery.organisation_id == org_id)
            )).all()
        if rows and all(
            status == DELIVERY_FAILED or (status == DELIVERY_PENDING and url == LOCAL_URL)
            for status, url in rows
        ):
            return True
        clock.advance(60_000)
        service.webhooks.kick()
        return False

    await wait_for(given_up, seconds=30, what="the webhook retries to be exhausted")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_submission_made_while_timebot_was_down_is_sent_once_on_start(
    backend: str, tmp_path: Path, http: httpx.AsyncClient
) -> None:
    data_dir = tmp_path / "data"
    fake = await FakeSlack.start()
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "TIMEBOT_SLACK_API_URL": fake.api_url,
           "SLACK_SIGNING_SECRET": SIGNING_SECRET}
    live = await start_live_server(backend, data_dir, env, auto_subscribe=True)
    databases: list[str] = []
    restarted: LiveServer | None = None
    try:
        org = await new_org(live, http)
        owner = await org.add_member("Dora Down")
        approver = await org.add_member("Sam Slack", "manager")
        fake.add_user("U" + uuid.uuid4().hex[:10].upper(), approver.email, name=approver.name)
        await set_stages(org, (approver,))
        await runtime_of(live).subscriptions.ensure(org.id)
        await add_record(owner)
        settings = live.settings
        databases, live.databases = live.databases, []
        await stop_live_server(live)

        # timebot is down; the service alone takes the submission and retries the webhook
        # until it gives up.
        clock = Clock()
        service = EmbeddedService(settings.service_database_url, clock=clock)
        await service.start()
        try:
            transport = httpx.ASGITransport(app=Starlette(routes=service.routes()))
            async with httpx.AsyncClient(transport=transport, base_url="http://svc") as alone:
                member = Member(owner.id, owner.name, owner.email, owner.apikey,
                                GQL(alone, "http://svc/graphql", owner.apikey))
                submitted = await submit(member)
                assert submitted["status"] == "s"
                await _exhaust_webhooks(service, clock, org.id)
        finally:
            await service.stop()
        assert not outbox_mails(data_dir, approver.email)

        restarted = await start_live_server(
            backend, data_dir, env, reuse_databases=databases, auto_subscribe=True
        )
        restarted.databases = databases
        await wait_for(lambda: _async(outbox_mails(data_dir, approver.email)), seconds=20,
                       what="the review e-mail in the outbox")
        dms = await fake.wait_for("chat.postMessage")
        assert "Dora Down" in str(dms[0].args.get("text"))

        # A second pass finds everything sent: nothing more goes out.
        runtime = runtime_of(restarted)
        reconciler = jobs_of(runtime).reconciler
        assert await reconciler.reconcile_organisation(org.id) == 0

        async def settled() -> bool:
            rows = [row for row in await runtime.events.all() if row.organisation_id == org.id]
            bot = bot_of(runtime)
            assert bot is not None
            outbox = mail_of(runtime).outbox
            queued = [row for row in await outbox.messages() if row.status != "done"]
            return bool(rows) and all(row.status == "done" for row in rows) and not queued \
                and await bot.deps.sender.pending() == 0

        await wait_for(settled, what="every event dispatched and every message sent")
        events = [row for row in await runtime.events.all() if row.organisation_id == org.id]
        # The in-process webhook's delivery, queued while timebot was down, arrives on start
        # as well as (or instead of) the reconciler's event: one mail and one DM all the same.
        assert 1 <= len(events) <= 2, [row.delivery_id for row in events]
        assert len(outbox_mails(data_dir, approver.email)) == 1
        assert len(fake.calls_to("chat.postMessage")) == 1
        assert [row.kind for row in await mail_of(runtime).outbox.messages()
                if approver.email in row.rcpt_tos] == ["review"]
    finally:
        if restarted is not None:
            await stop_live_server(restarted)
        elif databases:
            live.databases = databases
            for name in databases:
                await drop_pg_database(name)
        await fake.stop()


async def test_reconcilers_racing_a_webhook_send_one_review_request(org: Org) -> None:
    """Two processes' reconcilers and the webhook delivery of the same submission at once:
    one review e-mail. Then a submission no webhook brought: one event, one e-mail, and the
    passes after it send nothing."""
    runtime = runtime_of(org.live)
    first, second = Reconciler(runtime), Reconciler(runtime)
    owner = await org.add_member("Rita Race")
    approver = await org.add_member("Abe Approver", "manager")
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    await submit(owner)
    await asyncio.gather(first.reconcile({org.id}), second.reconcile({org.id}))
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, approver.email, "review"), what="review mail")
    await settle(runtime, org.id, len(await org_events(runtime, org.id)))
    assert await first.reconcile({org.id}) == 0
    assert len(await outbox_rows(runtime, approver.email, "review")) == 1

    other = await org.add_member("Nora Nohook")
    await add_record(other)
    webhook = await runtime.subscriptions.registrations()
    assert any(row.organisation_id == org.id for row in webhook)
    await org.admin.gql(
        "mutation($id: SvcId!) { deleteIntegrationWebhook(id: $id) { id } }",
        {"id": next(r.webhook_id for r in webhook if r.organisation_id == org.id)},
    )
    await submit(other)
    counts = await asyncio.gather(first.reconcile({org.id}), second.reconcile({org.id}))
    assert sum(counts) == 1
    await wait_for(lambda: _len_at_least(outbox_rows(runtime, approver.email, "review"), 2),
                   what="the reconciled review mail")
    assert await first.reconcile({org.id}) == 0
    assert await second.reconcile({org.id}) == 0
    await settle(runtime, org.id, len(await org_events(runtime, org.id)))
    assert len(await outbox_rows(runtime, approver.email, "review")) == 2


async def _len_at_least(rows: Any, count: int) -> bool:
    return len(await rows) >= count


async def test_a_pass_during_a_fan_out_leaves_the_queued_submissions_to_their_events(
    org: Org,
) -> None:
    """A pass that comes while the submissions' events still wait in the event store (a
    fan-out under way) feeds nothing for them — before, it fed each a second event (#40: 861
    of 900) — and their review e-mails still go, once each, when the events are dispatched."""
    runtime = runtime_of(org.live)
    approver = await org.add_member("Quinn Queue", "manager")
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    await runtime.event_worker.stop()
    try:
        owners = [await org.add_member(f"Fan Out {n}") for n in range(3)]
        for owner in owners:
            await add_record(owner)
            await submit(owner)
        await wait_for(lambda: _len_at_least(_submissions_queued(runtime, org.id), 3),
                       what="the submissions' events in the store")
        assert await Reconciler(runtime).reconcile({org.id}) == 0
    finally:
        runtime.event_worker.start()
    await wait_for(lambda: _len_at_least(outbox_rows(runtime, approver.email, "review"), 3),
                   what="the review mails")
    await settle(runtime, org.id, len(await org_events(runtime, org.id)))
    assert await Reconciler(runtime).reconcile({org.id}) == 0
    assert len(await outbox_rows(runtime, approver.email, "review")) == 3


async def _submissions_queued(runtime: Runtime, org_id: str) -> list[str]:
    return [row.delivery_id for row in await org_events(runtime, org_id)
            if row.status == "queued" and row.data.get("action") == "submitted"]
