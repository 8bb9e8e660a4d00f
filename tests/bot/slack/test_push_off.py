"""`push: false` in a person's notification settings stops timebot's Slack nudges: the staff
nudge at the end of the period, the approver's reminder of a waiting request, and a manager's
`/timesheet remind` DM (the service's own reminder still goes out)."""

from __future__ import annotations

from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import person_stages
from tests.bot.slack.test_nudges import REMIND_AFTER, nudges_to, settle
from tests.service.test_approvals_support import WEEK, add_record, manage, submit
from tests.support import DAY_MS, HOUR_MS

NOTIFY = ("mutation($id: SvcId!, $n: SvcNotificationSettingsInput) { "
          "editPersonNotificationSettings(id: $id, notification: $n) { id } }")
INSTANT = {c: {"frequency": "instant"} for c in (
    "mentions", "managedEntityMentions", "assignedEntityMentions", "approvalUpdate",
    "budgetAlert")}


async def push_off(who: SlackMember) -> None:
    await who.member.gql(NOTIFY, {"id": who.id, "n": {**INSTANT, "push": False}})


def posted_to(h: SlackHarness, who: SlackMember) -> list[str]:
    return [str(c.args["text"]) for c in h.fake.calls_to("chat.postMessage")
            if c.args["channel"] == who.slack_id]


async def test_push_off_stops_the_staff_and_approver_nudges(h: SlackHarness) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 1})
    h.live.clock.set(WEEK + 7 * DAY_MS + 10 * HOUR_MS)
    owner = await h.slack_member("Oda")
    ann = await h.slack_member("Ansel")
    await person_stages(h, owner, [ann])
    await add_record(owner.member, owner.member)
    await submit(owner.member, owner.member)
    await h.fake.wait_for("chat.postMessage", channel=ann.slack_id)  # the request
    await push_off(ann)  # after the request: its reminders are nudges
    h.live.clock.advance(3 * DAY_MS)
    await h.bot.nudges.tick()
    await h.bot.nudges.tick()
    await settle(h)
    assert nudges_to(h, ann) == []

    friday_1630_utc = WEEK + 4 * DAY_MS + 16 * HOUR_MS + 30 * 60_000 + 14 * DAY_MS
    h.live.clock.set(friday_1630_utc)
    pat = await h.slack_member("Patrice")  # a draft: nudged
    pia = await h.slack_member("Pia")      # a draft, push off: not nudged
    await push_off(pia)
    for who in (pat, pia):
        await add_record(who.member, who.member, day=14)
    nudges = h.bot.nudges
    nudges.discover_every = 0
    await nudges.tick()
    await nudges.tick()
    await settle(h)
    assert len(posted_to(h, pat)) == 1 and "not submitted yet" in posted_to(h, pat)[0]
    assert posted_to(h, pia) == []


async def test_push_off_stops_the_remind_dm(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 3 * DAY_MS)
    mo = await h.slack_member("Moira", role="manager")
    ted = await h.slack_member("Ted")   # draft: reminded in Slack
    xan = await h.slack_member("Xan")   # draft, push off: the service's reminder only
    await push_off(xan)
    for person in (ted, xan):
        await manage(h.org, mo.member, person.member)
        await add_record(person.member, person.member)
    await h.slack.command("/timesheet", "remind", user=mo.slack_id)
    answer = (await h.fake.wait_for("response_url"))[0].args["text"]
    assert "Reminded 2" in answer and "1 by e-mail only (not in Slack)" in answer, answer
    await h.fake.wait_for("chat.postMessage", channel=ted.slack_id)
    await settle(h)
    assert posted_to(h, xan) == []
