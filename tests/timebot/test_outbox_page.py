"""GET /outbox (no relay configured): the list, one message, and (in the demo) an answer that
goes into the durable inbox as a real MIME reply, as the SMTP listener would put it there, and
is processed like any reply: the timesheet is approved and the receipt lands in the outbox.

The mail there holds sign-in codes and one-click links: the page answers only a client on
this machine (a loopback peer, no forwarding header), 404 to anyone else, and its answer form
exists only in the demo. Clients elsewhere are a browser behind `X-Forwarded-For` over real
HTTP (uvicorn takes the loopback proxy's word: the peer is then 203.0.113.7), one on loopback
whose `Forwarded` header names another client, and the app driven with another peer in its
ASGI scope (`httpx.ASGITransport(client=…)`); and a local browser that reached the server under
another site's name (DNS rebinding: its Host header is not a loopback name)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from email import message_from_bytes
from email.message import EmailMessage

import httpx
import pytest
from sqlalchemy import select

from mail.outbound.outbox_page import compose_answer, first_address
from tests.mail.reviews_support import (
    STATE,
    WEEK,
    WEEK_END,
    add_record,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.support import (
    LiveServer,
    Member,
    Org,
    mail_of,
    new_org,
    start_live_server,
    stop_live_server,
)
from timebot.state.models import InboxMessage


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def demo(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[LiveServer]:
    """A `--demo` server (TIMEBOT_DEMO), no relay."""
    server = await start_live_server(
        request.param, tmp_path_factory.mktemp(f"outbox-demo-{request.param}"),
        extra_env={"TIMEBOT_DEMO": "1"},
    )
    try:
        yield server
    finally:
        await stop_live_server(server)


@pytest.fixture
async def demo_org(demo: LiveServer, http: httpx.AsyncClient) -> Org:
    return await new_org(demo, http)


def elsewhere(live: LiveServer) -> list[httpx.AsyncClient]:
    """Clients that are not on this machine, each its own way; and a page of another site
    in the local browser, its name re-pointed at 127.0.0.1 (DNS rebinding)."""
    return [
        httpx.AsyncClient(base_url=live.base_url, timeout=30,
                          headers={"host": f"rebound.example:{live.settings.http_port}"}),
        httpx.AsyncClient(base_url=live.base_url, timeout=30,
                          headers={"x-forwarded-for": "203.0.113.7"}),
        httpx.AsyncClient(base_url=live.base_url, timeout=30,
                          headers={"forwarded": "for=203.0.113.8"}),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=live.app, client=("203.0.113.5", 40000)),
            base_url=live.base_url, timeout=30,
        ),
    ]


async def submit_id_of(owner: Member) -> str:
    data = await owner.gql(
        "query($p: SvcId!) { getPersonApprovalEvents(personId: $p) { id submitId status } }",
        {"p": owner.id},
    )
    events = data["getPersonApprovalEvents"]
    return str(events[0]["submitId"] or events[0]["id"])


async def review_mail(org: Org, approver_name: str, owner_name: str
                      ) -> tuple[Member, Member, EmailMessage, str]:
    """An owner's submitted timesheet; its review e-mail to the approver, and its key in the
    outbox page's list (read from loopback)."""
    runtime = runtime_of(org)
    approver = await org.add_member(approver_name, "manager")
    owner = await org.add_member(owner_name)
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, approver.email, "review"), what="review mail")
    [sent] = await mails(runtime, approver, "review")

    async def listed() -> str | None:
        page = await org.http.get(f"{org.live.base_url}/outbox")
        assert page.status_code == 200
        found = re.search(rf'href="/outbox/([^"]+)">([^<]*{owner_name}[^<]*)<', page.text)
        return found.group(1) if found else None

    key = await wait_for(listed, what="the message in the Maildir outbox")
    return approver, owner, sent, key


async def status_of(org: Org, owner: Member) -> str:
    data = await org.admin.gql(STATE, {"p": owner.id, "s": WEEK, "e": WEEK_END})
    return str(data["getApprovalState"]["status"])


async def test_outbox_list_read_and_answer_in_the_demo(demo_org: Org) -> None:
    org = demo_org
    runtime = runtime_of(org)
    approver, owner, sent, key = await review_mail(org, "Olga Outbox", "Oscar Owner")
    page = await org.http.get(f"{org.live.base_url}/outbox/{key}")
    assert page.status_code == 200
    assert "Oscar Owner" in page.text and "/a/" in page.text
    assert f"Answer as {approver.email}" in page.text

    # From elsewhere there is nothing here, not even in the demo: no list, no message, no
    # answer (which would count as the approver's authenticated reply).
    for client in elsewhere(org.live):
        async with client:
            for path in ("/outbox", f"/outbox/{key}", "/outbox/nope"):
                response = await client.get(path)
                assert response.status_code == 404, (path, response.text)
                assert "Oscar Owner" not in response.text
            answer = await client.post(f"/outbox/{key}/reply", data={"body": "approve"})
            assert answer.status_code == 404
    assert not [row for row in await mail_of(runtime).inbox.all() if row.source == "outbox"
                and approver.email in row.mail_from]

    answer = await org.http.post(f"{org.live.base_url}/outbox/{key}/reply",
                                 data={"body": "approve"}, follow_redirects=True)
    assert answer.status_code == 200 and 'id="notice"' in answer.text  # after the redirect
    rows = [row for row in await mail_of(runtime).inbox.all() if row.source == "outbox"
            and approver.email in row.mail_from]
    assert len(rows) == 1
    reply = message_from_bytes(rows[0].raw)
    assert reply["From"] == approver.email
    assert reply["To"] == str(sent["Reply-To"])
    assert rows[0].rcpt_tos == [str(sent["Reply-To"])]
    assert reply["In-Reply-To"] == sent["Message-ID"]
    assert reply["Subject"] == f"Re: {sent['Subject']}"
    payload = reply.get_payload(decode=True)
    assert isinstance(payload, bytes)
    body = payload.decode().replace("\r\n", "\n")
    assert body.startswith("approve\n") and "> " in body

    async def approved() -> bool:
        data = await owner.gql(
            "query($id: SvcId!) { getApprovalEventById(id: $id) { status } }",
            {"id": submit_id},
        )
        return data["getApprovalEventById"]["status"] == "a"

    submit_id = await submit_id_of(owner)
    await wait_for(approved, what="the timesheet approved by the outbox answer")
    receipts = await wait_for(
        lambda: outbox_rows(runtime, approver.email, "receipt"), what="the receipt"
    )
    assert receipts

    missing = await org.http.get(f"{org.live.base_url}/outbox/nope")
    assert missing.status_code == 404


async def test_outside_the_demo_the_outbox_is_read_only_and_local(org: Org) -> None:
    """The shared live server: no relay, no --demo. A sign-in code is mailed to the
    administrator: a browser on this machine lists it; no one elsewhere does."""
    approver, _owner, _sent, key = await review_mail(org, "Rita Readonly", "Rolf Reader")
    async with httpx.AsyncClient(base_url=org.live.base_url, timeout=30) as local:
        requested = await local.post("/signin/code", data={"email": org.admin.email})
        assert requested.status_code == 200

        async def code_listed() -> bool:
            listing = await local.get("/outbox")
            return listing.status_code == 200 and "sign-in code" in listing.text

        await wait_for(code_listed, what="the sign-in code in the local outbox")
        page = await local.get(f"/outbox/{key}")
        assert page.status_code == 200 and "Rolf Reader" in page.text
        assert 'id="answer-demo-only"' in page.text
        assert "Answer as" not in page.text and "/reply" not in page.text
        answer = await local.post(f"/outbox/{key}/reply", data={"body": "approve"})
        assert answer.status_code == 404
        port = org.live.settings.http_port
        for host in (f"localhost:{port}", f"[::1]:{port}", f"demo.localhost:{port}"):
            assert (await local.get("/outbox", headers={"host": host})).status_code == 200
    for client in elsewhere(org.live):
        async with client:
            for path in ("/outbox", f"/outbox/{key}"):
                response = await client.get(path)
                assert response.status_code == 404, (path, response.text)
                assert "sign-in code" not in response.text and "Rolf" not in response.text
    rows = await mail_of(runtime_of(org)).inbox.all()
    assert not [row for row in rows if approver.email in row.mail_from]


async def test_an_answer_from_the_page_counts_only_in_the_demo(org: Org) -> None:
    """An answer the page wrote in a demo run, still in the inbox when the server runs
    without --demo (the page itself writes none then): it is mail like any other, from no
    mail server that vouches for its sender. The approval does not happen, and nothing is
    sent to a sender who did not authenticate: the inbox row says why."""
    runtime = runtime_of(org)
    approver, owner, sent, _key = await review_mail(org, "Nina Nodemo", "Nils Nodemo")
    sender = first_address(str(sent["To"]))
    raw = compose_answer(sent, "approve", sender=sender,
                         mail_domain=org.live.settings.mail_domain)
    recipient = first_address(str(sent["Reply-To"]))
    mail = mail_of(runtime)
    assert await mail.inbox.accept(raw, sender, [recipient], "outbox", headers_trusted=False)
    mail.wake_inbox()

    async def outcome() -> list[str]:
        async with runtime.state_sessions() as session:
            rows = (await session.scalars(select(InboxMessage).where(
                InboxMessage.source == "outbox", InboxMessage.status == "done"))).all()
        return [row.outcome or "" for row in rows if sender in (row.outcome or "")
                or "sender-not-verified" in (row.outcome or "")]

    [processed] = await wait_for(outcome, what="the answer processed")
    assert processed.startswith("sender-not-verified; no receipt"), processed
    assert await outbox_rows(runtime, approver.email, "receipt") == []
    assert await status_of(org, owner) == "s"

