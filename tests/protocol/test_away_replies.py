"""Issue 28, away approvers are noticed: an out-of-office auto-reply to a review e-mail (sent
to the approver's reply address) is recorded as the approver's absence, with the return date it
states, and never answered; one from any other address is not recorded; a redelivery records
once. Real SMTP sessions (aiosmtplib) to a live timebot, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formatdate

import httpx
import pytest
from sqlalchemy import select

from tests.mail.reviews_support import mails, text_part, wait_for
from tests.protocol.reply_helpers import (
    DOMAIN,
    MailWorld,
    Sheet,
    no_receipt,
    receipt_for,
    reply,
    reply_token,
    smtp_send,
    smtp_world,
    submitted_sheet,
)
from tests.support import DAY_MS, Org, new_org
from timebot.process.notifications import jobs_of
from timebot.secret_key.tokens import reply_address
from timebot.state.away import ApproverAbsence


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[MailWorld]:
    async with smtp_world(request.param, tmp_path_factory.mktemp(f"away-{request.param}")) \
            as built:
        yield built


@pytest.fixture
async def org(world: MailWorld) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)




def auto_reply(sender: str, token: str, subject: str, body: str,
               headers: dict[str, str] | None = None) -> bytes:
    """An out-of-office reply as Exchange writes one to a review e-mail (unsigned)."""
    message = EmailMessage()
    message["From"] = f"Grace <{sender}>"
    message["To"] = reply_address(token, DOMAIN)
    message["Subject"] = subject
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@{sender.rpartition('@')[2]}>"
    message["In-Reply-To"] = f"<{token}.review@{DOMAIN}>"
    for name, value in (headers or {"Auto-Submitted": "auto-replied",
                                    "X-MS-Exchange-Inbox-Rules-Loop": sender}).items():
        message[name] = value
    message.set_content(body)
    return message.as_bytes(policy=SMTP)


async def settle_events(world: MailWorld) -> None:
    """Until every event the bot accepted was dispatched."""

    async def done() -> bool:
        return all(row.status == "done" for row in await world.runtime.events.all())

    await wait_for(done, what="events dispatched")


def today(world: MailWorld) -> date:
    return datetime.fromtimestamp(world.live.clock.now_ms() / 1000, UTC).date()


async def absences(world: MailWorld, sheet: Sheet) -> list[ApproverAbsence]:
    async with world.runtime.state_sessions() as session:
        return list(await session.scalars(select(ApproverAbsence).where(
            ApproverAbsence.approver_id == sheet.approver.id)))


async def test_an_out_of_office_reply_is_recorded_with_its_return_date_and_not_answered(
    world: MailWorld, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    back = today(world) + timedelta(days=9)
    raw = auto_reply(sheet.approver.email, token, "Automatic reply: Timesheet of Bob",
                     f"I am out of the office until {back.day} {back.strftime('%B %Y')}.")
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("ignored (auto-reply)"), row.outcome
    assert "absence recorded" in (row.outcome or ""), row.outcome
    [absence] = await absences(world, sheet)
    assert (absence.until, absence.source) == (back, "auto-reply")
    assert absence.organisation_id == org.id

    # the same auto-reply delivered again (a retry of the sending MTA): recorded once
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    await no_receipt(world, raw)
    [again] = await absences(world, sheet)
    assert (again.seen_ms, again.until) == (absence.seen_ms, back)

    # a later auto-reply (to the next review e-mail), in German, without a year: renewed
    world.live.clock.advance(DAY_MS)
    try:
        later = today(world) + timedelta(days=12)
        german = auto_reply(sheet.approver.email, token, "Abwesenheitsnotiz: Timesheet",
                            f"Ich bin bis zum {later.day}.{later.month}. nicht im Büro.")
        await smtp_send(world, german, reply_address(token, DOMAIN), sheet.approver.email)
        await no_receipt(world, german)
    finally:
        world.live.clock.advance(-DAY_MS)
    [renewed] = await absences(world, sheet)
    assert renewed.until == later and renewed.seen_ms > absence.seen_ms


async def test_an_auto_reply_from_another_address_is_not_recorded(
    world: MailWorld, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    raw = auto_reply("assistant@example.com", token, "Out of Office: Timesheet of Bob",
                     "I am out of the office until 2 December.")
    await smtp_send(world, raw, reply_address(token, DOMAIN), "assistant@example.com")
    row = await no_receipt(world, raw)
    assert "not from the approver's address" in (row.outcome or ""), row.outcome
    assert await absences(world, sheet) == []


async def test_an_autoresponder_that_is_not_an_absence_is_not_recorded(
    world: MailWorld, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    raw = auto_reply(sheet.approver.email, token, "Automatic reply: Timesheet of Bob",
                     "Thank you, your request #4411 has been received.")
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    row = await no_receipt(world, raw)
    assert "not an out-of-office reply" in (row.outcome or ""), row.outcome
    assert await absences(world, sheet) == []


async def test_an_absence_without_a_return_date_is_recorded_as_unknown(
    world: MailWorld, org: Org
) -> None:
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    raw = auto_reply(sheet.approver.email, token, "Respuesta automática: Timesheet",
                     "Estoy de vacaciones, sin acceso al correo.",
                     headers={"X-Autoreply": "yes"})
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    await no_receipt(world, raw)
    [absence] = await absences(world, sheet)
    assert absence.until is None


async def test_the_other_approver_is_asked_with_the_reason_once(
    world: MailWorld, org: Org
) -> None:
    """Part of issue 28's "someone who may decide is asked": Mia0's auto-reply to her review
    e-mail makes the stage (quorum any) ask Mia1, saying why; a redelivery asks nobody again."""
    sheet, (mia0, mia1) = await submitted_sheet(
        org, stages=[{"type": "ppm", "quorum": "any"}], approvers=2)
    token = reply_token(world, sheet, approver=mia0)
    back = today(world) + timedelta(days=5)
    raw = auto_reply(mia0.email, token, "Out of Office: Timesheet of Bob",
                     f"I am on leave until {back.isoformat()}.")
    await smtp_send(world, raw, reply_address(token, DOMAIN), mia0.email)
    row = await no_receipt(world, raw)
    assert "dispatched again" in (row.outcome or ""), row.outcome
    reason = f"Mia0 is away until {back.strftime('%a %d %b %Y')}"

    async def asked() -> list[str]:
        return [text for text in map(text_part, await mails(world.runtime, mia1, "review"))
                if reason in text]

    await wait_for(asked, what="the other approver asked")
    await smtp_send(world, raw, reply_address(token, DOMAIN), mia0.email)
    await no_receipt(world, raw)
    await settle_events(world)
    assert len(await asked()) == 1
    assert not [text for text in map(text_part, await mails(world.runtime, mia0, "review"))
                if "is away" in text]


async def test_an_escalation_racing_the_approvers_late_reply_decides_once(
    world: MailWorld, org: Org
) -> None:
    """Mia0, the stage's only approver, is away (her auto-reply); some working days later the
    administrator is asked, with the reason. Then Mia0 (back early) and the administrator
    both reply "approve" at once: exactly one decision, each receipt says what happened."""
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    back = today(world) + timedelta(days=9)
    raw = auto_reply(sheet.approver.email, token, "Out of Office: Timesheet of Bob",
                     f"I am out of the office until {back.isoformat()}.")
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    await no_receipt(world, raw)
    world.live.clock.advance(4 * DAY_MS)  # at least one working day, whatever today is
    try:
        escalator = jobs_of(world.runtime).escalator
        assert await escalator.run(org.id) == 1
        [asked] = [text_part(m) for m in await mails(world.runtime, org.admin, "review")]
        assert f"Mia0 is away until {back.strftime('%a %d %b %Y')}" in asked
        key = world.keys["example.com"]
        late = reply(sheet.approver.email, reply_token(world, sheet), "approve", sign_with=key)
        admin_token = reply_token(world, sheet, approver=org.admin)
        admin = reply(org.admin.email, admin_token, "Approve", sign_with=key)
        await asyncio.gather(
            smtp_send(world, late, reply_address(token, DOMAIN), sheet.approver.email),
            smtp_send(world, admin, reply_address(admin_token, DOMAIN), org.admin.email))
        answers = sorted([(await receipt_for(world, late)).text,
                          (await receipt_for(world, admin)).text])
        assert await escalator.run(org.id) == 0  # decided: nobody is asked any more
    finally:
        world.live.clock.advance(-4 * DAY_MS)
    state = (await org.admin.gql(
        "query($id: SvcId!) { getApprovalEventById(id: $id) { status } "
        "getMessages(of: {id: $id, type: \"approvalEvent\"}) { kind content } }",
        {"id": sheet.event_id}))
    assert state["getApprovalEventById"]["status"] == "a", state
    approvals = [m for m in state["getMessages"] if (m["content"] or "").startswith("Approved")]
    assert len(approvals) == 1, state["getMessages"]
    assert sum("You approved" in text for text in answers) == 1, answers
    assert sum("already approved" in text for text in answers) == 1, answers


async def test_an_icloud_vacation_reply_without_a_date_asks_the_other_approver(
    world: MailWorld, org: Org
) -> None:
    """Issue 43: iCloud's vacation reply (X-Apple-Action: VACATION, "Auto reply: …", the
    person's own words, no date) is an absence: recorded without a return date, and the
    stage's other approver is asked, saying so."""
    sheet, (mia0, mia1) = await submitted_sheet(
        org, stages=[{"type": "ppm", "quorum": "any"}], approvers=2)
    token = reply_token(world, sheet, approver=mia0)
    raw = auto_reply(mia0.email, token, "Auto reply: Timesheet of Bob",
                     "Thanks for your message. I will get back to you as soon as I can.",
                     headers={"X-Apple-Action": "VACATION"})
    await smtp_send(world, raw, reply_address(token, DOMAIN), mia0.email)
    row = await no_receipt(world, raw)
    assert "absence recorded: away until unknown" in (row.outcome or ""), row.outcome
    [absence] = await absences(world, sheet)
    assert absence.until is None

    async def asked() -> list[str]:
        return [text for text in map(text_part, await mails(world.runtime, mia1, "review"))
                if "Mia0 is away (return date unknown)" in text]

    await wait_for(asked, what="the other approver asked")


async def test_a_range_is_read_to_its_end(world: MailWorld, org: Org) -> None:
    """Issue 43: "traveling for work on December 3-13" is away until the 13th, not the 3rd."""
    sheet, _ = await submitted_sheet(org)
    token = reply_token(world, sheet)
    start = today(world)
    if start.day > 20:  # the range within one month: the first of the next
        start = (start.replace(day=1) + timedelta(days=32)).replace(day=1)
    end = start + timedelta(days=8)
    raw = auto_reply(sheet.approver.email, token, "Automatic reply: Timesheet of Bob",
                     f"I will be traveling for work on {start:%B} {start.day}-{end.day}.")
    await smtp_send(world, raw, reply_address(token, DOMAIN), sheet.approver.email)
    row = await no_receipt(world, raw)
    assert f"away until {end.isoformat()}" in (row.outcome or ""), row.outcome
    [absence] = await absences(world, sheet)
    assert absence.until == end
