"""Deciding a whole daily digest by replying to it, end to end: the digest is sent by the live
timebot (its Reply-To carries the digest's token), the reply goes in over SMTP with swaks, the
timesheets' states are read back through GraphQL and the one receipt from the Maildir outbox."""

from __future__ import annotations

import email
import email.policy
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from mail.outbound.digest import send_digest
from mail.queues.inbox import message_key
from mail.review_component import component_of
from tests.protocol.reply_helpers import (
    MailWorld,
    maildir_receipts,
    no_receipt,
    processed,
    receipt_for,
    receipt_rows,
    reply,
    smtp_world,
    swaks,
)
from tests.service.test_approvals_support import (
    add_record,
    approve,
    manage,
    reject,
    set_stages,
    state,
    submit,
)
from tests.support import DAY_MS, HOUR_MS, Member, Org, new_org
from timebot.secret_key.tokens import REPLY_LOCAL_PREFIX, verify_token
from timebot.state.digests import MailDigest
from timebot.state.models import InboxMessage, MailReply, OutboxMessage

pytestmark = pytest.mark.skipif(shutil.which("swaks") is None, reason="swaks is needed")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[MailWorld]:
    root = tmp_path_factory.mktemp(f"digest-{request.param}")
    async with smtp_world(request.param, root) as world:
        yield world


@pytest.fixture
async def org(world: MailWorld) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


class Digest:
    """Three timesheets (Bob, Cleo, Dan) waiting for their people manager Mia, and the daily
    digest she was sent about them."""

    def __init__(self, owners: list[Member], approver: Member, events: list[str],
                 message: Any) -> None:
        self.owners, self.approver, self.events, self.message = owners, approver, events, message

    @property
    def token(self) -> str:
        address = email.utils.parseaddr(str(self.message["Reply-To"]))[1]
        return address.split("@")[0][len(REPLY_LOCAL_PREFIX):]


async def digest_of_three(world: MailWorld, org: Org) -> Digest:
    mia = await org.add_member("Mia", "manager")
    owners = [await org.add_member(name, "employee") for name in ("Bob", "Cleo", "Dan")]
    await set_stages(org, [{"type": "ppm"}])
    events = []
    for owner in owners:
        await manage(org, mia, owner)
        await add_record(owner, owner, day=1, hours=8)
        events.append(str((await submit(owner, owner))["submitId"]))
    clock = world.live.clock
    hour = clock.now_ms() // HOUR_MS % 24
    shift = (10 - hour) % 24 * HOUR_MS  # to 10:00 or a little after: a digest goes from 08:00
    clock.advance(shift)
    try:
        ctx = component_of(world.runtime).ctx
        assert await send_digest(ctx, org.id, mia.id) == 1
    finally:
        clock.advance(-shift)
    [row] = [row for row in await world.mail.outbox.messages("digest")
             if mia.email in row.rcpt_tos]
    message = email.message_from_bytes(row.raw, policy=email.policy.default)
    text = str(message.get_body(("plain",)).get_content())
    assert [line.split(",")[0] for line in text.splitlines() if line[:2] in ("1.", "2.", "3.")
            ] == ["1. Bob", "2. Cleo", "3. Dan"]
    assert "approve all" in text
    return Digest(owners, mia, events, message)


async def send(world: MailWorld, raw: bytes, tmp_path: Path) -> None:
    to = str(email.message_from_bytes(raw)["To"])
    code, output = await swaks(world.smtp_port, to, raw, tmp=tmp_path)
    assert code == 0, output


def answer(world: MailWorld, digest: Digest, body: str, *, signed: bool = True) -> bytes:
    return reply(digest.approver.email, digest.token, body,
                 subject="Re: 3 timesheets waiting for your approval",
                 sign_with=world.keys["example.com"] if signed else None)


async def statuses(org: Org, digest: Digest) -> list[str]:
    return [str((await state(org.admin, owner))["status"]) for owner in digest.owners]


async def approvers_of(org: Org, owner: Member) -> list[str]:
    current = await state(org.admin, owner)
    return [given["person"]["id"] for detail in current["stageDetails"]
            for given in detail["approvedBy"] or [] if given and given["person"]]


def item_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:1].isdigit()]


# --- the decisions ------------------------------------------------------------------------


async def test_the_digest_reply_address_is_a_signed_digest_token(
    world: MailWorld, org: Org
) -> None:
    digest = await digest_of_three(world, org)
    token = verify_token(world.live.settings.secret_key, "digest-reply", digest.token,
                         now_ms=world.live.clock.now_ms())
    assert token.approver_id == digest.approver.id
    assert str(digest.message["Message-ID"]).startswith(f"<{digest.token}.")


async def test_approve_all_with_one_decided_meanwhile(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    await approve(org.admin, digest.events[1])  # Cleo's, by someone else, meanwhile
    raw = answer(world, digest, "Approve all, thanks!")
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await statuses(org, digest) == ["a", "a", "a"]
    assert receipt.first_line == "Approved"
    lines = item_lines(receipt.text)
    assert [line.split(":")[0] for line in lines] == [
        "1. approved", "2. already decided", "3. approved"]
    assert "Bob" in lines[0] and "Cleo" in lines[1] and "Dan" in lines[2]
    assert await approvers_of(org, digest.owners[0]) == [digest.approver.id]  # as Mia
    assert receipt.message["In-Reply-To"] == str(email.message_from_bytes(raw)["Message-ID"])
    assert digest.token in str(receipt.message["Reply-To"])

    # Redelivered (the same message again): one receipt, nothing decided twice.
    await send(world, raw, tmp_path)
    assert len(await receipt_rows(world, raw)) == 1 and len(maildir_receipts(world, raw)) == 1
    # The same words in a second reply: everything is already decided.
    again = answer(world, digest, "approve all")
    await send(world, again, tmp_path)
    second = await receipt_for(world, again)
    assert second.first_line == "Nothing changed"
    assert [line.split(":")[0] for line in item_lines(second.text)] == [
        "1. already decided", "2. already decided", "3. already decided"]
    assert await approvers_of(org, digest.owners[2]) == [digest.approver.id]


async def test_approve_by_numbers_and_a_number_out_of_range(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    raw = answer(world, digest, "approve 1, 3 and 7")
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await statuses(org, digest) == ["a", "s", "a"]
    assert receipt.first_line == "Approved"
    assert [line.split(":")[0] for line in item_lines(receipt.text)] == [
        "1. approved", "3. approved", "7. no such item"]
    assert "the digest listed 3" in receipt.text


async def test_reject_one_by_its_number(world: MailWorld, org: Org, tmp_path: Path) -> None:
    digest = await digest_of_three(world, org)
    raw = answer(world, digest, "reject 2 too many hours")
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await statuses(org, digest) == ["s", "r", "s"]
    assert receipt.first_line == "Rejected"
    [line] = item_lines(receipt.text)
    assert line.startswith("2. rejected:") and "Cleo" in line
    assert line.endswith("Reason: too many hours")
    current = await state(org.admin, digest.owners[1])
    assert current["status"] == "r"


async def test_approve_one_reject_another_in_one_reply(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    raw = answer(world, digest, "approve 1\nreject 3: Friday is missing")
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await statuses(org, digest) == ["a", "s", "r"]
    assert receipt.first_line == "Rejected"  # a rejection in it: the first line says so
    assert [line.split(":")[0] for line in item_lines(receipt.text)] == [
        "1. approved", "3. rejected"]


async def test_a_reply_that_names_nothing_changes_nothing(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    raw = answer(world, digest, "approve")  # which? nothing by accident
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert await statuses(org, digest) == ["s", "s", "s"]
    assert receipt.first_line == "Nothing changed" and "approve all" in receipt.text


async def test_an_unauthenticated_sender_gets_nothing(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    raw = answer(world, digest, "approve all", signed=False)
    await send(world, raw, tmp_path)
    row = await no_receipt(world, raw)
    assert (row.outcome or "").startswith("sender-not-verified"), row.outcome
    assert await statuses(org, digest) == ["s", "s", "s"]


async def test_a_retry_after_a_crash_decides_nothing_twice(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    """The items were decided, then the process died before the receipt was committed: the
    retry answers as the first attempt did and approves nothing twice."""
    digest = await digest_of_three(world, org)
    raw = answer(world, digest, "approve all")
    await send(world, raw, tmp_path)
    await receipt_for(world, raw)
    key = message_key(raw)
    async with world.runtime.state_sessions() as session:  # undo what followed the actions
        intents = list(await session.scalars(
            select(MailReply).where(MailReply.message_key.like("digest:%"))
        ))
        assert len([i for i in intents if i.event_id in digest.events]) == 3
        await session.execute(update(MailReply).where(MailReply.message_key == key)
                              .values(outcome=None))
        await session.execute(update(OutboxMessage)
                              .where(OutboxMessage.dedupe_key == f"receipt:{key}")
                              .values(dedupe_key=f"lost:{key}", kind="lost"))
        await session.execute(update(InboxMessage).where(InboxMessage.message_key == key)
                              .values(status="queued", outcome=None))
        await session.commit()
    row = await processed(world, raw)
    assert (row.outcome or "").startswith("digest-approved"), row.outcome
    [receipt] = await receipt_rows(world, raw)
    text = email.message_from_bytes(receipt.raw, policy=email.policy.default)
    body = str(text.get_body(("plain",)).get_content())  # type: ignore[union-attr]
    assert body.splitlines()[0] == "Approved"
    assert [line.split(":")[0] for line in item_lines(body)] == [
        "1. approved", "2. approved", "3. approved"]
    for owner in digest.owners:
        assert await approvers_of(org, owner) == [digest.approver.id]




async def test_an_expired_digest_decides_nothing_and_is_pruned(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    later = 31 * DAY_MS + HOUR_MS
    world.live.clock.advance(later)
    try:
        raw = answer(world, digest, "approve all")
        await send(world, raw, tmp_path)
        receipt = await receipt_for(world, raw)
        assert receipt.first_line == "Nothing changed" and "expired" in receipt.text
        assert await statuses(org, digest) == ["s", "s", "s"]
        # The next digest stores its list and removes the expired one.
        hour = world.live.clock.now_ms() // HOUR_MS % 24
        shift = (10 - hour) % 24 * HOUR_MS
        world.live.clock.advance(shift)
        later += shift
        assert await send_digest(component_of(world.runtime).ctx, org.id, digest.approver.id)
        async with world.runtime.state_sessions() as session:
            kept = list(await session.scalars(
                select(MailDigest).where(MailDigest.approver_id == digest.approver.id)))
        assert len(kept) == 1 and kept[0].id != verify_token(
            world.live.settings.secret_key, "digest-reply", digest.token,
            now_ms=world.live.clock.now_ms() - later).event_id
    finally:
        world.live.clock.advance(-later)


async def test_an_item_no_longer_waiting_for_the_approver_is_reported(
    world: MailWorld, org: Org, tmp_path: Path
) -> None:
    digest = await digest_of_three(world, org)
    # Dan's timesheet was rejected by an administrator and resubmitted since: the digest's
    # item is out of date (a new review request asks for the new submission).
    dan = digest.owners[2]
    await reject(org.admin, digest.events[2], 0, "fix Tuesday")
    resubmitted = await submit(dan, dan)
    assert resubmitted["submitId"] != digest.events[2]
    raw = answer(world, digest, "approve all")
    await send(world, raw, tmp_path)
    receipt = await receipt_for(world, raw)
    assert [line.split(":")[0] for line in item_lines(receipt.text)] == [
        "1. approved", "2. approved", "3. no longer yours"]
    assert await statuses(org, digest) == ["a", "a", "s"]
