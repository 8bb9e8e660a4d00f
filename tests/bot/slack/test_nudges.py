"""Nudges: approvers after N days then at growing intervals, snooze and off, the daily digest;
staff at the end of their period in their Slack time zone, not when absent. The nudge loop's
tick runs with the business clock (frozen and advanced here)."""

from __future__ import annotations

import asyncio

import pytest

from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import buttons, person_stages, text_of
from tests.service.test_approvals_support import WEEK, add_record, approve, submit
from tests.support import DAY_MS, HOUR_MS

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

REMIND_AFTER = ("mutation($d: Int) { editOrganisationTimeSettingsApprovalReminder("
                "approvalReminder: $d) { id } }")


def nudges_to(h: SlackHarness, who: SlackMember) -> list[str]:
    return [text_of(c) for c in h.fake.calls_to("chat.postMessage")
            if c.args["channel"] == who.slack_id and "Reminder:" in str(c.args.get("text"))]


async def settle(h: SlackHarness) -> None:
    """Let the sender deliver what the tick queued."""
    bot = h.bot
    for _ in range(200):
        if not await bot.deps.sender.pending():
            return
        bot.deps.sender.worker.wake()
        await asyncio.sleep(0.05)
    raise AssertionError("the sender did not drain")


async def test_approver_nudges_grow_apart_snooze_and_off(h: SlackHarness) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 2})
    h.live.clock.set(WEEK + 7 * DAY_MS + 10 * HOUR_MS)
    owner = await h.slack_member("Sam")
    ann = await h.slack_member("Ann")
    await person_stages(h, owner, [ann])
    await add_record(owner.member, owner.member)
    event = await submit(owner.member, owner.member)
    request = (await h.fake.wait_for("chat.postMessage", channel=ann.slack_id))[0]
    nudges = h.bot.nudges

    await nudges.tick()
    await settle(h)
    assert nudges_to(h, ann) == []
    h.live.clock.advance(2 * DAY_MS)
    await nudges.tick()
    await nudges.tick()
    await settle(h)
    assert len(nudges_to(h, ann)) == 1
    first = [c for c in h.fake.calls_to("chat.postMessage")
             if c.args["channel"] == ann.slack_id][-1]
    assert set(buttons(first)) == {"timebot_approve", "timebot_reject", "timebot_nudge_snooze",
                                   "timebot_nudge_snooze_tomorrow", "timebot_nudge_off"}
    h.live.clock.advance(DAY_MS)
    await nudges.tick()
    await settle(h)
    assert len(nudges_to(h, ann)) == 2
    # The third comes two days later; snoozed for an hour, it waits for the hour.
    h.live.clock.advance(2 * DAY_MS)
    await h.slack.action(user=ann.slack_id, action_id="timebot_nudge_snooze", value="1h",
                         channel="D" + ann.slack_id[1:], ts="1.0")
    snoozed = await h.fake.wait_for("chat.postEphemeral", user=ann.slack_id)
    assert "snoozed until" in snoozed[0].args["text"]
    await nudges.tick()
    await settle(h)
    assert len(nudges_to(h, ann)) == 2
    h.live.clock.advance(2 * HOUR_MS)
    await nudges.tick()
    await settle(h)
    assert len(nudges_to(h, ann)) == 3
    # Off: nothing more, however long it waits.
    await h.slack.action(user=ann.slack_id, action_id="timebot_nudge_off", value="off",
                         channel="D" + ann.slack_id[1:], ts="1.0")
    await h.fake.wait_for("chat.postEphemeral", user=ann.slack_id, count=2)
    h.live.clock.advance(10 * DAY_MS)
    await nudges.tick()
    await settle(h)
    assert len(nudges_to(h, ann)) == 3
    # Decided: the request and its three nudges all show the outcome.
    await approve(ann.member, event["id"])
    updates = await h.fake.wait_for("chat.update", count=4, seconds=15)
    assert all("Approved by Ann" in text_of(u) for u in updates)
    assert request.args["channel"] == ann.slack_id
    # and settled: the nudger's read no longer meets them (#40)
    rows = [row for row in await h.bot.deps.sender.sent_with_ref("approval:")
            if row.channel == ann.slack_id]
    assert len(rows) == 4 and all(row.settled_ms is not None for row in rows)
    assert [w for w in await nudges.approvers._waiting() if w.slack_user == ann.slack_id] == []


async def test_daily_digest(h: SlackHarness) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 1})
    h.live.clock.set(WEEK + 7 * DAY_MS + 7 * HOUR_MS)
    owners = [await h.slack_member(f"Owner{i}") for i in range(2)]
    dan = await h.slack_member("Dan")
    for owner in owners:
        await person_stages(h, owner, [dan])
        await add_record(owner.member, owner.member)
        await submit(owner.member, owner.member)
    await h.fake.wait_for("chat.postMessage", channel=dan.slack_id, count=2)
    await h.slack.command("/timesheet", "nudges digest", user=dan.slack_id)
    answer = await h.fake.wait_for("response_url")
    assert "one digest a day" in answer[0].args["text"]
    h.live.clock.advance(DAY_MS)  # 07:00 the next day: not yet
    await h.bot.nudges.tick()
    await settle(h)
    h.live.clock.advance(3 * HOUR_MS)  # 10:00
    await h.bot.nudges.tick()
    await h.bot.nudges.tick()
    await settle(h)
    digests = [c for c in h.fake.calls_to("chat.postMessage")
               if c.args["channel"] == dan.slack_id and "wait for your approval" in
               str(c.args.get("text"))]
    assert len(digests) == 1
    assert "2 timesheet(s)" in digests[0].args["text"]
    assert "Owner0" in text_of(digests[0]) and "Owner1" in text_of(digests[0])
    assert nudges_to(h, dan) == []


async def test_staff_nudge_at_the_end_of_their_period(h: SlackHarness) -> None:
    friday_1630_utc = WEEK + 4 * DAY_MS + 16 * HOUR_MS + 30 * 60_000
    h.live.clock.set(friday_1630_utc)
    pat = await h.slack_member("Pat")                                   # draft: nudged
    abe = await h.slack_member("Abe")                                   # absent today
    rae = await h.slack_member("Rae", tz="America/New_York", tz_offset=-18000)  # 11:30 there
    sid = await h.slack_member("Sid")                                   # approved
    await add_record(pat.member, pat.member)
    await add_record(sid.member, sid.member)
    await submit(sid.member, sid.member)
    leave = (await h.org.admin.gql(
        'mutation { addAbsenceType(name: "Public holiday") { id } }'))["addAbsenceType"]["id"]
    await abe.member.gql(
        "mutation($s: SvcTimestamp!, $p: SvcId!, $a: SvcId!) { addTimeRecord(startTime: $s, "
        "duration: 28800000, personId: $p, absenceId: $a) { id } }",
        {"s": WEEK + 4 * DAY_MS + 8 * HOUR_MS, "p": abe.id, "a": leave})
    nudges = h.bot.nudges
    nudges.discover_every = 0  # match the workspace's members to people on every tick
    await nudges.tick()
    await nudges.tick()
    await settle(h)

    def staff(who: SlackMember) -> list[str]:
        return [str(c.args["text"]) for c in h.fake.calls_to("chat.postMessage")
                if c.args["channel"] == who.slack_id]

    assert len(staff(pat)) == 1 and "not submitted yet" in staff(pat)[0]
    assert staff(abe) == [] and staff(rae) == [] and staff(sid) == []
    h.live.clock.advance(6 * HOUR_MS)  # 17:30 in New York, still Friday there
    await nudges.tick()
    await settle(h)
    assert len(staff(rae)) == 1 and len(staff(pat)) == 1
