"""The owner's notices in Slack, end to end: when the timesheet is rejected (with the reason)
or finally approved, the owner linked to a Slack user gets one DM; intermediate stage
approvals tell them nothing, and the same service event dispatched again posts nothing
more. (The e-mail half: tests/protocol/test_reply_e2e.py.)"""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_approvals import submitted
from tests.service.test_approvals_support import approve, reject
from timebot.events.bus import ServiceEvent
from timebot.state.models import OutboxMessage, ReceivedEvent, SlackOutgoing
from timebot.state.queue import DONE


async def _owner_dms(h: SlackHarness, slack_id: str) -> list[SlackOutgoing]:
    """The posts queued to the owner (the Slack queue: what is or will be posted)."""
    async with h.live.app.state.runtime.state_sessions() as session:
        return list(await session.scalars(select(SlackOutgoing).where(
            SlackOutgoing.channel == slack_id, SlackOutgoing.method == "chat.postMessage")))


async def _all_dispatched(h: SlackHarness) -> None:
    """Wait until every event of the organisation received so far was dispatched."""
    runtime = h.live.app.state.runtime
    for _ in range(400):
        async with runtime.state_sessions() as session:
            statuses = list(await session.scalars(select(ReceivedEvent.status).where(
                ReceivedEvent.organisation_id == h.org.id)))
        if statuses and all(status == DONE for status in statuses):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"events not dispatched: {statuses}")


async def _redispatch(h: SlackHarness, submit_id: str) -> None:
    """The decision events of this submission dispatched once more (as a retry would).
    (Not its earlier "submitted" events: ApprovalsPart would ask an approver again for a
    stale one — a separate issue.)"""
    runtime = h.live.app.state.runtime
    async with runtime.state_sessions() as session:
        rows = list(await session.scalars(
            select(ReceivedEvent).where(ReceivedEvent.organisation_id == h.org.id)
            .order_by(ReceivedEvent.received_ms)))
    for row in rows:
        if row.data.get("submitId") != submit_id or row.data.get("status") not in ("a", "r"):
            continue
        await runtime.bus.dispatch(ServiceEvent(
            row.delivery_id, row.event, row.organisation_id, row.timestamp_ms, dict(row.data)))


async def _owner_mails(h: SlackHarness, email: str) -> list[OutboxMessage]:
    rows = await h.live.app.state.mail.outbox.messages("owner-notice")
    return [row for row in rows if email in row.rcpt_tos]


async def _wait_mail(h: SlackHarness, email: str) -> OutboxMessage:
    """The owner's notice mail, once queued: the DM may be posted before the event's writes
    (the mail among them) are committed with its outcome."""
    for _ in range(400):
        if found := await _owner_mails(h, email):
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no owner notice mailed to {email}")


async def test_rejection_tells_the_owner_once_with_the_reason(h: SlackHarness) -> None:
    owner, (ann,), event, _dms = await submitted(h, approvers=1)
    await reject(ann.member, event["submitId"], 0, "Tuesday's client call is missing")
    [dm] = await h.fake.wait_for("chat.postMessage", channel=owner.slack_id)
    text = str(dm.args["text"])
    assert "Appr0 rejected your timesheet" in text
    assert "Tuesday's client call is missing" in text
    assert "stage 1 of 1" in text
    mail = await _wait_mail(h, owner.member.email)
    assert "was rejected" in mail.subject
    await _redispatch(h, event["submitId"])
    assert len(await _owner_dms(h, owner.slack_id)) == 1
    posted = [c for c in h.fake.calls_to("chat.postMessage")
              if c.args.get("channel") in (owner.slack_id, ann.slack_id)]
    assert len(posted) == 2  # ann's request, the owner's notice
    assert len(await _owner_mails(h, owner.member.email)) == 1
    await h.fake.wait_for("chat.update", channel="D" + ann.slack_id[1:])  # nothing left over


async def test_only_the_final_approval_tells_the_owner(h: SlackHarness) -> None:
    owner, (ann, bob), event, _dms = await submitted(h, quorum="all", approvers=2)
    await approve(ann.member, event["submitId"])  # one of two: still waiting
    await h.fake.wait_for("chat.update")  # ann's request message settled by that event
    await _all_dispatched(h)
    assert await _owner_dms(h, owner.slack_id) == []
    assert await _owner_mails(h, owner.member.email) == []
    await approve(bob.member, event["submitId"])
    [dm] = await h.fake.wait_for("chat.postMessage", channel=owner.slack_id)
    assert "Appr1 approved your timesheet" in str(dm.args["text"])
    mail = await _wait_mail(h, owner.member.email)
    assert "is approved" in mail.subject
    await _redispatch(h, event["submitId"])
    assert len(await _owner_dms(h, owner.slack_id)) == 1
    assert len(await _owner_mails(h, owner.member.email)) == 1
    await h.fake.wait_for("chat.update", count=2)  # both requests settled: nothing left over


NOTIFY = ("mutation($id: SvcId!, $n: SvcNotificationSettingsInput) { "
          "editPersonNotificationSettings(id: $id, notification: $n) { id } }")
INSTANT = {c: {"frequency": "instant"} for c in (
    "mentions", "managedEntityMentions", "assignedEntityMentions", "approvalUpdate",
    "budgetAlert")}


async def test_the_owner_notice_follows_the_owners_notification_settings(
        h: SlackHarness) -> None:
    """push off: the mail only; email off: the DM only (the owner's settings come with the
    read the notice makes anyway)."""
    owner, (ann,), event, _dms = await submitted(h, approvers=1)
    await owner.member.gql(NOTIFY, {"id": owner.member.id, "n": {**INSTANT, "push": False}})
    await reject(ann.member, event["submitId"], 0, "Tuesday's client call is missing")
    assert "was rejected" in (await _wait_mail(h, owner.member.email)).subject
    await h.fake.wait_for("chat.update", channel="D" + ann.slack_id[1:])
    await _all_dispatched(h)
    assert await _owner_dms(h, owner.slack_id) == []

    owner2, (bob,), event2, _dms = await submitted(h, approvers=1)
    await owner2.member.gql(NOTIFY, {"id": owner2.member.id, "n": {**INSTANT, "email": False}})
    await approve(bob.member, event2["submitId"])
    [dm] = await h.fake.wait_for("chat.postMessage", channel=owner2.slack_id)
    assert "approved your timesheet" in str(dm.args["text"])
    await _all_dispatched(h)
    assert await _owner_mails(h, owner2.member.email) == []
