"""Approving and rejecting by replying, end to end: real mail with swaks to the SMTP and LMTP
listeners of a live timebot and into a real Dovecot for its IMAP poller; the timesheet's state
read back through GraphQL, the receipt read from the Maildir outbox. With the spoofing suite:
each attempt changes nothing."""

from __future__ import annotations

import asyncio
import email
import email.policy
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from mail.queues.inbox import message_key
from tests.net import free_port
from tests.protocol.dovecot import Dovecot, start_dovecot
from tests.protocol.reply_helpers import (
    AUTHSERV,
    DOMAIN,
    IMAP_USER,
    DkimKey,
    MailWorld,
    Sheet,
    maildir_receipts,
    no_receipt,
    processed,
    receipt_for,
    receipt_rows,
    reply,
    reply_token,
    submitted_sheet,
    swaks,
)
from tests.service.test_approvals_support import (
    approve,
    manage,
    reject,
    set_stages,
    state,
)
from tests.support import HOUR_MS, Org, new_org, start_live_server, stop_live_server
from timebot.events.bus import ServiceEvent
from timebot.secret_key.tokens import reply_address
from timebot.state.models import InboxMessage, MailReply, OutboxMessage, ReceivedEvent

pytestmark = pytest.mark.skipif(
    shutil.which("swaks") is None or shutil.which("dovecot") is None,
    reason="swaks and dovecot are needed",
)

JOURNAL = (
    "query($r: SvcReferenceInput!) { getMessages(of: $r) { content type author { id } } }"
)


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    server = start_dovecot()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, dovecot: Dovecot
) -> AsyncIterator[MailWorld]:
    root = tmp_path_factory.mktemp(f"reply-{request.param}")
    keys = {domain: DkimKey.generate(domain) for domain in ("example.com", "attacker.test")}
    txt = root / "dkim.txt"
    txt.write_text("".join(f"{key.line()}\n" for key in keys.values()))
    smtp_port, lmtp_port = free_port(), free_port()
    mailbox = f"{IMAP_USER}-{request.param}"
    live = await start_live_server(request.param, root / "data", extra_env={
        "TIMEBOT_SMTP_PORT": str(smtp_port),
        "TIMEBOT_LMTP_PORT": str(lmtp_port),
        "TIMEBOT_MAIL_DOMAIN": DOMAIN,
        "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": AUTHSERV,
        "TIMEBOT_DKIM_TXT_FILE": str(txt),
        "TIMEBOT_IMAP_URL": f"imap://{mailbox}:imap-secret@127.0.0.1:{dovecot.port}/INBOX",
    })
    try:
        yield MailWorld(live, dovecot, smtp_port, lmtp_port, keys, mailbox)
    finally:
        await stop_live_server(live)


@pytest.fixture
async def org(world: MailWorld) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


async def send(world: MailWorld, raw: bytes, tmp_path: Path, *, lmtp: bool = False,
               rcpt: str | None = None, mail_from: str = "sender@example.com") -> str:
    import email

    to = rcpt or str(email.message_from_bytes(raw)["To"])
    code, output = await swaks(world.lmtp_port if lmtp else world.smtp_port, to, raw,
                               lmtp=lmtp, mail_from=mail_from, tmp=tmp_path)
    assert code == 0, output
    return output


async def status(org: Org, sheet_owner: object) -> str:
    current = await state(org.admin, sheet_owner)  # type: ignore[arg-type]
    return str(current["status"])


# --- the decisions ------------------------------------------------------------------------


async def test_approve_over_smtp(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    raw = reply(sheet.approver.email, token, "Approved, thanks!",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "a"
    assert receipt.first_line == "Approved"
    original = receipt.message
    assert receipt.envelope_from == "<>"
    assert receipt.envelope_to == sheet.approver.email
    reply_id = str(__import__("email").message_from_bytes(raw)["Message-ID"])
    assert original["In-Reply-To"] == reply_id
    assert original["References"].split() == [f"<{token}.review@{DOMAIN}>", reply_id]
    assert original["Subject"] == "Re: Timesheet of Bob for 2026-03-02 to 2026-03-08"
    assert original["Auto-Submitted"] == "auto-replied"
    assert original["Reply-To"] == reply_address(token, DOMAIN)
    assert "<strong>Approved</strong>" in receipt.html
    assert "Bob" in receipt.text and "2026-03-02 to 2026-03-08" in receipt.text


async def test_approve_directly_above_the_attribution(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    """No blank line between the decision and the client's "On … wrote:" line."""
    sheet, _ = await submitted_sheet(org)
    body = (f"Approve\nOn Mon, 9 Mar 2026, Mia <timebot@{DOMAIN}> wrote:\n"
            "> Bob submitted his timesheet. Reply approve, or reject with a reason.")
    raw = reply(sheet.approver.email, reply_token(world, sheet), body,
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "a"
    assert receipt.first_line == "Approved"


async def test_a_comment_directly_above_the_attribution_is_posted(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, _ = await submitted_sheet(org)
    text = "Please fix Tuesday's hours."
    body = f"{text}\nOn Mon, 9 Mar 2026, Mia <timebot@{DOMAIN}> wrote:\n> Reply approve."
    raw = reply(sheet.approver.email, reply_token(world, sheet), body,
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "s"
    assert "Journal" in receipt.text
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    mine = [m for m in journal["getMessages"] if m["type"] == "message"]
    assert [(m["content"], m["author"]["id"]) for m in mine] == [(text, sheet.approver.id)]


async def test_reject_with_reason_over_lmtp(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet),
                "Reject: Tuesday's client meeting is missing.\nPlease add it.",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path, lmtp=True)
    receipt = await receipt_for(world, raw)
    current = await state(org.admin, sheet.owner)
    assert current["status"] == "r"
    assert receipt.first_line == "Rejected"
    assert "Tuesday's client meeting is missing." in receipt.text
    assert "Please add it." in receipt.text
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    rejected = [m for m in journal["getMessages"] if m["type"] == "timesheetRejected"]
    assert rejected and rejected[0]["author"]["id"] == sheet.approver.id
    assert "Tuesday's client meeting is missing." in rejected[0]["content"]


async def owner_notices(world: MailWorld, owner_email: str) -> list[OutboxMessage]:
    rows = await world.mail.outbox.messages("owner-notice")
    return [row for row in rows if owner_email in row.rcpt_tos]


async def delivered_to(world: MailWorld, address: str, subject_part: str,
                       wait_s: float = 20.0) -> list[Any]:
    """The messages in the Maildir outbox to `address` whose subject has `subject_part`
    (waits for the first)."""
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        found = []
        for path in sorted(world.maildir.glob("*")):
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            if message["To"] == address and subject_part in str(message["Subject"]):
                found.append(message)
        if found or asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.05)


async def all_dispatched(world: MailWorld, org: Org) -> None:
    for _ in range(400):
        async with world.runtime.state_sessions() as session:
            statuses = list(await session.scalars(select(ReceivedEvent.status).where(
                ReceivedEvent.organisation_id == org.id)))
        if statuses and all(status == "done" for status in statuses):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"events not dispatched: {statuses}")


async def test_a_rejection_by_reply_tells_the_owner_once_with_the_reason(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    await world.runtime.subscriptions.ensure(org.id)  # the service's events reach timebot
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet),
                "Reject: Tuesday's client meeting is missing.",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert receipt.first_line == "Rejected" and "has been told why" in receipt.text
    [notice] = await delivered_to(world, sheet.owner.email, "was rejected")
    text = notice.get_body(("plain",)).get_content()
    assert "Mia0 rejected your timesheet for Mon 02 Mar to Sun 08 Mar 2026" in text
    assert "Tuesday's client meeting is missing." in text
    await all_dispatched(world, org)
    async with world.runtime.state_sessions() as session:
        rows = list(await session.scalars(select(ReceivedEvent).where(
            ReceivedEvent.organisation_id == org.id)))
    for row in rows:  # the organisation's events dispatched again, as a retry would
        await world.runtime.bus.dispatch(ServiceEvent(
            row.delivery_id, row.event, row.organisation_id, row.timestamp_ms, dict(row.data)))
    assert len(await owner_notices(world, sheet.owner.email)) == 1


async def test_only_the_final_approval_tells_the_owner(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    await world.runtime.subscriptions.ensure(org.id)
    sheet, _ = await submitted_sheet(
        org, stages=[{"type": "ppm", "quorum": "any"}, {"type": "admin"}], approvers=1
    )
    raw = reply(sheet.approver.email, reply_token(world, sheet), "Approve",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert receipt.first_line == "Approved" and "stage 1 of 2" in receipt.text
    await all_dispatched(world, org)
    assert await owner_notices(world, sheet.owner.email) == []
    await approve(org.admin, sheet.event_id)  # the admins' stage: the final approval
    [notice] = await delivered_to(world, sheet.owner.email, "is approved")
    assert "Mon 02 Mar to Sun 08 Mar 2026" in str(notice["Subject"])
    await all_dispatched(world, org)
    assert len(await owner_notices(world, sheet.owner.email)) == 1


async def test_receipt_dates_are_the_owners(world: MailWorld, org: Org, tmp_path: Path) -> None:
    """A Berlin week (Mon 16 - Sun 22 Nov 2026) starts at 2026-11-15T23:00Z."""
    await world.runtime.subscriptions.ensure(org.id)
    owner = await org.add_member("Bob", "employee")
    manager = await org.add_member("Mia", "manager")
    await manage(org, manager, owner)
    await set_stages(org, [{"type": "ppm"}])
    await org.admin.gql(
        "mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id, "
        "timeZone: \"Europe/Berlin\") { id } }", {"id": owner.id})
    start = 1_794_783_600_000  # 2026-11-15T23:00:00Z = 2026-11-16 00:00 in Berlin
    await owner.gql(
        "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, "
        "duration: 3600000, personId: $p) { id } }", {"s": start + 9 * HOUR_MS, "p": owner.id})
    event = (await owner.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
        "personId: $p, startTime: $s, endTime: $e) { submitId } }",
        {"p": owner.id, "s": start, "e": start + 7 * 86_400_000}))["submitTimesheet"]
    sheet = Sheet(org, owner, manager, event["submitId"])
    raw = reply(manager.email, reply_token(world, sheet), "Approved",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert receipt.first_line == "Approved"
    assert "2026-11-16 to 2026-11-22" in receipt.text
    [notice] = await delivered_to(world, owner.email, "is approved")
    assert "Mon 16 Nov to Sun 22 Nov 2026" in str(notice["Subject"])


async def test_reject_without_reason_changes_nothing(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "Reject.",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "s"
    assert receipt.first_line == "Nothing changed"
    assert "reason" in receipt.text and "What to do" in receipt.text


async def test_a_comment_goes_to_the_journal(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    text = "Could you split the workshop hours by project?"
    raw = reply(sheet.approver.email, reply_token(world, sheet), text,
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "s"
    assert receipt.first_line == "Nothing changed"
    assert "Journal" in receipt.text
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    mine = [m for m in journal["getMessages"] if m["type"] == "message"]
    assert [(m["content"], m["author"]["id"]) for m in mine] == [(text, sheet.approver.id)]


async def test_a_stage_that_moved_on(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, managers = await submitted_sheet(
        org, stages=[{"type": "ppm", "quorum": "any"}, {"type": "admin"}], approvers=2
    )
    first, second = managers
    await approve(first, sheet.event_id)  # stage 0 is done: now at the admins' stage
    raw = reply(second.email, reply_token(world, sheet, second), "approve",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    current = await state(org.admin, sheet.owner)
    assert current["status"] == "s" and current["currentStage"] == 1
    assert [a["person"]["id"] for a in current["stageDetails"][0]["approvedBy"]] == [first.id]
    assert receipt.first_line == "Nothing changed"
    assert "moved on" in receipt.text


async def test_already_decided(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    await reject(org.admin, sheet.event_id, 0, "wrong week")
    raw = reply(sheet.approver.email, reply_token(world, sheet), "OK",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "r"
    assert receipt.first_line == "Nothing changed"
    assert "already been rejected" in receipt.text


async def test_an_expired_token(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet, expires_in_ms=-2 * HOUR_MS),
                "approve", sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await status(org, sheet.owner) == "s"
    assert receipt.first_line == "Nothing changed"
    assert "expired" in receipt.text


async def test_an_unverified_sender_gets_no_receipt(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    """Its From may be anyone's: answering would mail the approver on a stranger's behalf."""
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "approve")  # no DKIM
    await send(world, raw, tmp_path)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("sender-not-verified; no receipt"), row.outcome
    assert await status(org, sheet.owner) == "s"


async def test_one_error_receipt_per_hour(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    key = world.keys["example.com"]
    first = reply(sheet.approver.email, token, "reject", sign_with=key)
    await send(world, first, tmp_path)
    receipt = await receipt_for(world, first)
    assert receipt.first_line == "Nothing changed" and "reason" in receipt.text
    second = reply(sheet.approver.email, token, "reject", sign_with=key)
    await send(world, second, tmp_path)
    row = await no_receipt(world, second)
    assert "rate-limited" in (row.outcome or "")
    world.live.clock.advance(HOUR_MS + 60_000)
    try:
        third = reply(sheet.approver.email, token, "reject", sign_with=key)
        await send(world, third, tmp_path)
        assert (await receipt_for(world, third)).first_line == "Nothing changed"
    finally:
        world.live.clock.advance(-(HOUR_MS + 60_000))
    assert await status(org, sheet.owner) == "s"


async def test_auto_replies_bounces_and_our_own_mail_get_no_receipt(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    key = world.keys["example.com"]
    out_of_office = reply(sheet.approver.email, token, "I am away until Monday.",
                          subject="Automatic reply: Timesheet of Bob",
                          headers={"Auto-Submitted": "auto-replied"}, sign_with=key)
    vacation = reply(sheet.approver.email, token, "approve", headers={"Precedence": "bulk"},
                     sign_with=key)
    bounce = reply(f"MAILER-DAEMON@{'example.com'}", token, "Delivery failed",
                   subject="Undelivered Mail Returned to Sender")
    ours = reply(f"timebot@{DOMAIN}", token, "approve")
    await send(world, out_of_office, tmp_path)
    await send(world, vacation, tmp_path)
    await send(world, bounce, tmp_path, mail_from="<>")
    await send(world, ours, tmp_path)
    for raw in (out_of_office, vacation, bounce, ours):
        row = await no_receipt(world, raw)
        assert (row.outcome or "").startswith("ignored"), row.outcome
    assert await status(org, sheet.owner) == "s"


async def test_the_same_reply_over_smtp_and_imap_has_one_effect_and_one_receipt(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "yes",
                sign_with=world.keys["example.com"])
    world.dovecot.deliver(world.imap_user, raw)
    receipt = await receipt_for(world, raw)  # processed from IMAP alone
    assert receipt.first_line == "Approved"
    assert await status(org, sheet.owner) == "a"
    output = await send(world, raw, tmp_path)  # and again over SMTP, and LMTP
    assert "250 2.0.0 Message accepted" in output
    await send(world, raw, tmp_path, lmtp=True)
    assert len(await receipt_rows(world, raw)) == 1
    assert len(maildir_receipts(world, raw)) == 1
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    assert len([m for m in journal["getMessages"] if m["type"] == "timesheetApproved"]) == 1


async def test_a_retry_after_a_crash_between_acting_and_answering(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    """The approval was applied, then the process died before the receipt was committed: the
    retry answers Approved (not "already decided") and approves nothing twice."""
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "approve",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    await receipt_for(world, raw)
    key = message_key(raw)
    async with world.runtime.state_sessions() as session:  # undo what followed the action
        await session.execute(update(MailReply).where(MailReply.message_key == key)
                              .values(outcome=None))
        await session.execute(update(OutboxMessage)
                              .where(OutboxMessage.dedupe_key == f"receipt:{key}")
                              .values(dedupe_key=f"lost:{key}", kind="lost"))
        await session.execute(update(InboxMessage).where(InboxMessage.message_key == key)
                              .values(status="queued", outcome=None))
        await session.commit()
    row = await processed(world, raw)
    assert (row.outcome or "").startswith("approved"), row.outcome
    rows = await receipt_rows(world, raw)
    assert len(rows) == 1 and b"Approved" in rows[0].raw
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    assert len([m for m in journal["getMessages"] if m["type"] == "timesheetApproved"]) == 1


# --- the spoofing suite: each attempt changes nothing -------------------------------------


async def test_forged_from_is_not_verified(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "approve",
                on_top=[f"Received: from evil.example by {AUTHSERV}"])
    await send(world, raw, tmp_path, mail_from=sheet.approver.email)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await status(org, sheet.owner) == "s"


async def test_dkim_of_another_domain(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "approve",
                sign_with=world.keys["attacker.test"])
    await send(world, raw, tmp_path)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await status(org, sheet.owner) == "s"


async def test_a_forged_authentication_results_below_ours(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    forged = reply(sheet.approver.email, token, "approve", on_top=[
        f"Authentication-Results: {AUTHSERV}; dkim=none; dmarc=fail header.from=example.com",
        f"Authentication-Results: {AUTHSERV}; dkim=pass header.d=example.com; dmarc=pass "
        "header.from=example.com",
    ])
    await send(world, forged, tmp_path)
    row = await no_receipt(world, forged)
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await status(org, sheet.owner) == "s"
    # the control: the same with our MTA's genuine pass on top is applied
    genuine = reply(sheet.approver.email, token, "approve", on_top=[
        f"Authentication-Results: {AUTHSERV}; dmarc=pass header.from=example.com",
    ])
    await send(world, genuine, tmp_path)
    assert (await receipt_for(world, genuine)).first_line == "Approved"
    assert await status(org, sheet.owner) == "a"


async def test_another_approver_using_someone_elses_token(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, managers = await submitted_sheet(org, approvers=2)
    mia, other = managers
    raw = reply(other.email, reply_token(world, sheet, mia), "approve",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)  # signed: an authenticated stranger
    assert receipt.first_line == "Nothing changed" and "another approver" in receipt.text
    assert receipt.message["Reply-To"] is None  # never someone else's reply token
    assert "approvals+" not in receipt.message.as_string()
    assert await status(org, sheet.owner) == "s"


async def test_a_replayed_reply(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    raw = reply(sheet.approver.email, reply_token(world, sheet), "reject: the hours are wrong",
                sign_with=world.keys["example.com"])
    await send(world, raw, tmp_path)
    assert (await receipt_for(world, raw)).first_line == "Rejected"
    # Bob resubmits; the old signed reply is sent again: the same message, nothing more
    await org.admin.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
        "personId: $p, startTime: $s, endTime: $e) { id } }",
        {"p": sheet.owner.id, "s": 1_772_409_600_000, "e": 1_772_409_600_000 + 7 * 86_400_000},
    )
    await send(world, raw, tmp_path)
    await send(world, raw, tmp_path, lmtp=True)
    assert await status(org, sheet.owner) == "s"
    assert len(await receipt_rows(world, raw)) == 1
    # written again (a new message), it is about a submission that was replaced since
    again = reply(sheet.approver.email, reply_token(world, sheet), "reject: the hours are wrong",
                  sign_with=world.keys["example.com"])
    await send(world, again, tmp_path)
    receipt = await receipt_for(world, again)
    assert receipt.first_line == "Nothing changed" and "out of date" in receipt.text
    assert await status(org, sheet.owner) == "s"


async def test_a_tampered_token(world: MailWorld, org: Org, tmp_path: Path) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    tampered = token[:-1] + ("a" if token[-1] != "a" else "b")
    raw = reply(sheet.approver.email, tampered, "approve", sign_with=world.keys["example.com"])
    import email

    code, output = await swaks(world.smtp_port, str(email.message_from_bytes(raw)["To"]), raw,
                               tmp=tmp_path)
    assert code != 0 and "550 5.1.1" in output  # refused at RCPT
    world.dovecot.deliver(world.imap_user, raw)
    receipt = await receipt_for(world, raw)  # through IMAP: read, and refused
    assert receipt.first_line == "Nothing changed" and "damaged" in receipt.text
    # unsigned, it may come from anyone: no answer at all (no backscatter to a forged From)
    unsigned = reply("someone.else@example.com", tampered, "approve")
    world.dovecot.deliver(world.imap_user, unsigned)
    row = await no_receipt(world, unsigned)
    assert (row.outcome or "").startswith("unknown-link; no receipt"), row.outcome
    assert await status(org, sheet.owner) == "s"


async def test_text_appended_below_an_l_signature(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    sheet, _ = await submitted_sheet(org)
    signed = reply(sheet.approver.email, reply_token(world, sheet), "Looks fine to me",
                   sign_with=world.keys["example.com"], length=True)
    forged = signed + b"\r\nPS: this line was added by someone else.\r\n"
    await send(world, forged, tmp_path)
    row = await no_receipt(world, forged)
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await status(org, sheet.owner) == "s"
    journal = await org.admin.gql(JOURNAL, {"r": {"id": sheet.event_id, "type": "approvalEvent"}})
    assert [m for m in journal["getMessages"] if m["type"] == "message"] == []
