"""GET /outbox (no relay configured): the list, one message, and an answer that goes into the
durable inbox as a real MIME reply, as the SMTP listener would put it there, and is processed
like any reply: the timesheet is approved and the receipt lands in the outbox."""

from __future__ import annotations

import re
from email import message_from_bytes

from tests.mail.reviews_support import (
    add_record,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.support import Member, Org, mail_of


async def submit_id_of(owner: Member) -> str:
    data = await owner.gql(
        "query($p: SvcId!) { getPersonApprovalEvents(personId: $p) { id submitId status } }",
        {"p": owner.id},
    )
    events = data["getPersonApprovalEvents"]
    return str(events[0]["submitId"] or events[0]["id"])


async def test_outbox_list_read_and_answer(org: Org) -> None:
    runtime = runtime_of(org)
    approver = await org.add_member("Olga Outbox", "manager")
    owner = await org.add_member("Oscar Owner")
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
        found = re.search(r'href="/outbox/([^"]+)">([^<]*Oscar Owner[^<]*)<', page.text)
        return found.group(1) if found else None

    key = await wait_for(listed, what="the message in the Maildir outbox")
    page = await org.http.get(f"{org.live.base_url}/outbox/{key}")
    assert page.status_code == 200
    assert "Oscar Owner" in page.text and "/a/" in page.text
    assert f"Answer as {approver.email}" in page.text

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
