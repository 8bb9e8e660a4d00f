"""Hosted mode with several organisations (#27): one fronts timebot serves two organisations of
a "hosted" service (a second live server with its own service), each registered with
`timebot orgs add --integration-key …` (checked with currentOrganisation, stored sealed), each
with its own webhook; a review of each goes to its own approver, and a reply by mail decides in
the organisation its reply token names, never in the other. `timebot orgs list|remove`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from mail.queues.inbox import message_key
from tests.mail.reviews_support import outbox_rows, parse
from tests.protocol.reply_helpers import DOMAIN, DkimKey, reply
from tests.service.test_approvals_support import WEEK, WEEK_END, add_record, submit
from tests.support import (
    TEST_SECRET_KEY,
    LiveServer,
    Member,
    Org,
    mail_of,
    new_org,
    start_live_server,
    stop_live_server,
)
from tests.timebot.cli_in_process import timebot_in_process
from tests.timebot.test_cli import Run, cli_env, timebot
from timebot.state.models import InboxMessage, WebhookRegistration
from timebot.state.org_models import HostedOrganisation

KEY = DkimKey.generate("example.com")
STATE = ("query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalState("
         "personId: $p, startTime: $s, endTime: $e) { status } }")


@dataclass
class Hosted:
    hosted: LiveServer
    fronts: LiveServer
    http: httpx.AsyncClient
    a: Org
    b: Org
    env: dict[str, str]

    async def cli(self, *args: str) -> Run:
        """The `timebot` command run in this process (tests.timebot.cli_in_process): the same
        code as the installed command, without its start-up of several seconds."""
        return await timebot_in_process(self.env, *args)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def two(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Hosted]:
    root = tmp_path_factory.mktemp(f"hosted-{request.param}")
    (root / "dkim.txt").write_text(f"{KEY.line()}\n")
    hosted = await start_live_server(request.param, root / "hosted" / "data")
    fronts = await start_live_server(request.param, root / "fronts" / "data", extra_env={
        "TIMEBOT_ROLE": "fronts", "TIMEBOT_SERVICE_URL": hosted.graphql_url,
        "TIMEBOT_MAIL_DOMAIN": DOMAIN, "TIMEBOT_DKIM_TXT_FILE": str(root / "dkim.txt"),
    }, auto_subscribe=True)
    http = httpx.AsyncClient(timeout=30)
    env = cli_env(Path(fronts.settings.data_dir), TIMEBOT_ROLE="fronts",
                  TIMEBOT_SERVICE_URL=hosted.graphql_url, TIMEBOT_SECRET_KEY=TEST_SECRET_KEY,
                  TIMEBOT_DATABASE_URL=fronts.settings.database_url,
                  TIMEBOT_PUBLIC_URL=fronts.base_url, TIMEBOT_MAIL_DOMAIN=DOMAIN)
    try:
        yield Hosted(hosted, fronts, http, await new_org(hosted, http, "A"),
                     await new_org(hosted, http, "B"), env)
    finally:
        await stop_live_server(fronts)
        await stop_live_server(hosted)
        await http.aclose()


async def webhook_urls(org: Org) -> list[str]:
    data = await org.admin.gql("{ currentOrganisation { integrations { webhooks { url } } } }")
    return [hook["url"] for hook in data["currentOrganisation"]["integrations"]["webhooks"]]


async def approver_and_owner(two: Hosted, org: Org) -> tuple[Member, Member]:
    """An approver and an owner of `org`, both linked in the fronts (their own keys), the
    owner's timesheet asking the approver."""
    approver, owner = await org.add_member("Approver"), await org.add_member("Owner")
    await org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.id, "s": [{"type": "person", "personIds": [approver.id],
                                "quorum": "any"}]})
    for member in (approver, owner):
        await two.fronts.app.state.runtime.directory.link(member.email, member.apikey)
    await add_record(owner, owner, day=0, hours=3)
    return approver, owner


async def review_to(two: Hosted, approver: Member) -> Any:
    runtime = two.fronts.app.state.runtime
    for _ in range(400):
        rows = await outbox_rows(runtime, approver.email, "review")
        if rows:
            assert len(rows) == 1
            return parse(rows[0].raw)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no review mail to {approver.email}")


async def reply_with(two: Hosted, sender: Member, reply_to: str, body: str) -> InboxMessage:
    token = re.sub(r"^approvals\+|@.*$", "", reply_to)
    raw = reply(sender.email, token, body, to=reply_to, sign_with=KEY)
    mail = mail_of(two.fronts.app.state.runtime)
    assert await mail.inbox.accept(raw, sender.email, [reply_to], "smtp")
    two.fronts.app.state.mail.wake_inbox()
    for _ in range(400):
        async with two.fronts.app.state.runtime.state_sessions() as session:
            row = await session.scalar(
                select(InboxMessage).where(InboxMessage.message_key == message_key(raw)))
        if row is not None and row.status in ("done", "failed"):
            return row  # type: ignore[no-any-return]
        await asyncio.sleep(0.05)
    raise AssertionError("the reply was not processed")


async def status(org: Org, owner: Member) -> str:
    data = await org.admin.gql(STATE, {"p": owner.id, "s": WEEK, "e": WEEK_END})
    return str(data["getApprovalState"]["status"])


async def test_two_organisations_each_with_its_own_key_webhook_and_mail(two: Hosted) -> None:
    # A key the service does not know is refused; nothing is stored.
    refused = await two.cli("orgs", "add", "--integration-key", "not-a-key")
    assert refused.code != 0 and "Error" in refused.err, refused
    for org in (two.a, two.b):
        added = await two.cli("orgs", "add", "--integration-key", org.admin.apikey)
        assert added.code == 0, added
        assert f"serving organisation {org.id} (" in added.out, added
        # Its own webhook, registered at once with its own key.
        assert await webhook_urls(org) == [f"{two.fronts.base_url}/svc/webhooks"]
    listed = await two.cli("orgs", "list")
    assert listed.code == 0, listed
    lines = listed.out.strip().splitlines()
    assert [line.split()[0] for line in lines] == [two.a.id, two.b.id]
    assert all(line.endswith("webhook registered") for line in lines), lines
    assert two.a.admin.apikey not in listed.out and two.b.admin.apikey not in listed.out
    # Sealed at rest with TIMEBOT_SECRET_KEY.
    runtime = two.fronts.app.state.runtime
    async with runtime.state_sessions() as session:
        rows = list(await session.scalars(select(HostedOrganisation)))
    assert {row.organisation_id for row in rows} == {two.a.id, two.b.id}
    for row in rows:
        assert two.a.admin.apikey not in row.integration_key_sealed
        assert two.b.admin.apikey not in row.integration_key_sealed
        assert runtime.box.open(row.integration_key_sealed) in (
            two.a.admin.apikey, two.b.admin.apikey)

    # A submission in each organisation: each review reaches its own approver.
    approver_a, owner_a = await approver_and_owner(two, two.a)
    approver_b, owner_b = await approver_and_owner(two, two.b)
    await submit(owner_a, owner_a)
    await submit(owner_b, owner_b)
    review_a, review_b = await review_to(two, approver_a), await review_to(two, approver_b)
    reply_a, reply_b = str(review_a["Reply-To"]), str(review_b["Reply-To"])
    assert reply_a != reply_b and reply_a.startswith("approvals+")

    # A's approver answering B's review decides nothing in B (B's token names B's approver).
    await reply_with(two, approver_a, reply_b, "approve")
    assert await status(two.b, owner_b) == "s"
    # Each reply decides in the organisation its token names.
    await reply_with(two, approver_a, reply_a, "approve")
    assert (await status(two.a, owner_a), await status(two.b, owner_b)) == ("a", "s")
    await reply_with(two, approver_b, reply_b, "approve")
    assert await status(two.b, owner_b) == "a"

    # Removing B deletes its webhook on the service and forgets its key; A is still served.
    removed = await two.cli("orgs", "remove", "--org", two.b.id)
    assert removed.code == 0, removed
    assert await webhook_urls(two.b) == []
    assert await webhook_urls(two.a) == [f"{two.fronts.base_url}/svc/webhooks"]
    async with runtime.state_sessions() as session:
        assert await session.get(WebhookRegistration, two.b.id) is None
        assert await session.get(HostedOrganisation, two.b.id) is None
    unknown = await two.cli("orgs", "remove", "--org", two.b.id)
    assert unknown.code != 0 and "not registered" in unknown.err
    # A delivery for B no longer verifies (its secret is gone, and no key of B is held).
    body = b'{"id": "d1", "event": "approvalEventUpdate", "organisationId": "' + \
        two.b.id.encode() + b'", "data": {}}'
    answer = await two.http.post(f"{two.fronts.base_url}/svc/webhooks", content=body,
                                 headers={"X-Svc-Signature": "sha256=00"})
    assert answer.status_code == 401


async def test_orgs_is_refused_beside_an_embedded_service(tmp_path: Path) -> None:
    run = await timebot(cli_env(tmp_path / "d"), "orgs", "list")
    assert run.code != 0 and "TIMEBOT_SERVICE_URL" in run.err


async def test_one_webhook_when_subscriptions_race_and_duplicates_are_removed(
        two: Hosted) -> None:
    """Subscribing one organisation from several places at once (`orgs add` beside the
    running server's loop, or several calls in one process) leaves one webhook of ours: the
    per-organisation lease lets one list-then-create at a time. One found twice (a race of
    an older timebot) is removed, the same one whoever looks."""
    c = await new_org(two.hosted, two.http, "C")
    added = await two.cli("orgs", "add", "--integration-key", c.admin.apikey)
    assert added.code == 0, added
    ours = f"{two.fronts.base_url}/svc/webhooks"
    assert await webhook_urls(c) == [ours]
    runtime = two.fronts.app.state.runtime
    # Forget it on both sides, then subscribe three times at once.
    await runtime.subscriptions.unsubscribe(c.id)
    assert await webhook_urls(c) == []
    secrets = await asyncio.gather(*(runtime.subscriptions.ensure(c.id) for _ in range(3)))
    assert await webhook_urls(c) == [ours]
    assert len(set(secrets)) == 1

    # A duplicate made behind timebot's back is removed at the next look; the kept one is
    # the one whose secret is stored.
    await c.admin.gql(
        "mutation($u: String!) { addIntegrationWebhook(name: \"timebot\", url: $u, "
        "events: [\"*\"]) { id } }", {"u": ours})
    assert await webhook_urls(c) == [ours, ours]
    secret = await runtime.subscriptions.ensure(c.id, refresh=True)
    data = await c.admin.gql(
        "{ currentOrganisation { integrations { webhooks { id secret } } } }")
    hooks = data["currentOrganisation"]["integrations"]["webhooks"]
    assert [hook["secret"] for hook in hooks] == [secret]
    async with runtime.state_sessions() as session:
        row = await session.get(WebhookRegistration, c.id)
    assert row is not None and row.webhook_id == hooks[0]["id"]
    removed = await two.cli("orgs", "remove", "--org", c.id)
    assert removed.code == 0, removed


async def test_a_webhook_subscribed_to_every_event_is_narrowed_by_the_server(
        two: Hosted) -> None:
    """`timebot orgs add` runs none of the fronts' consumers: it subscribes a new webhook to
    "*" (issue #40). The running server's loop, which finds an organisation it has not set the
    events of (as it does once for each at its start), sets them to what its consumers handle;
    two loops at once (two processes) leave one webhook, its secret unchanged."""
    d = await new_org(two.hosted, two.http, "D")
    added = await two.cli("orgs", "add", "--integration-key", d.admin.apikey)
    assert added.code == 0, added
    runtime = two.fronts.app.state.runtime
    query = "{ currentOrganisation { integrations { webhooks { id url secret events } } } }"

    async def hooks() -> list[dict[str, Any]]:
        data = await d.admin.gql(query)
        return list(data["currentOrganisation"]["integrations"]["webhooks"])

    [before] = await hooks()
    assert before["events"] == ["*"]
    await asyncio.gather(runtime.subscriptions.ensure_all(), runtime.subscriptions.ensure_all())
    wanted = runtime.bus.events()
    assert "*" not in wanted and "approvalEventUpdate" in wanted
    assert await hooks() == [{**before, "events": wanted}]
    assert await runtime.subscriptions.secret_for(d.id) == before["secret"]
    removed = await two.cli("orgs", "remove", "--org", d.id)
    assert removed.code == 0, removed
