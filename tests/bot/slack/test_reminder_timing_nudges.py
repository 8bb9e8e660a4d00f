"""The Slack DM reminder to submit follows the person's `timesheetReminder` as the mail does
(timing and hour, in their time zone): `nextStart` at 09:00 reminds on Monday morning of the
week just ended, not on Friday afternoon; without the setting the nudge stays on the last
working day from 16:00. The nudge loop's tick runs with the business clock."""

from __future__ import annotations

from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_nudges import settle
from tests.service.test_approvals_support import WEEK, add_record
from tests.support import DAY_MS, HOUR_MS

REMINDER = ("mutation($id: SvcId!, $r: SvcTimesheetReminderInput) {"
            " editPersonTimeSettingsTimesheetReminder(id: $id, timesheetReminder: $r) { id } }")


def dms(h: SlackHarness, who: SlackMember) -> list[str]:
    return [str(c.args["text"]) for c in h.fake.calls_to("chat.postMessage")
            if c.args["channel"] == who.slack_id]


async def test_the_dm_goes_when_the_timesheet_reminder_says(h: SlackHarness) -> None:
    h.live.clock.set(WEEK + 4 * DAY_MS + 16 * HOUR_MS + 30 * 60_000)  # Friday 16:30 UTC
    mon = await h.slack_member("Mon Morning")
    kim = await h.slack_member("Kim Default")
    await add_record(mon.member, mon.member)
    await add_record(kim.member, kim.member)
    # The wrong role: an employee may not choose when they are reminded.
    assert await mon.member.gql.denied(REMINDER, {"id": mon.id, "r": {"timing": "nextStart",
                                                                       "hour": 9}})
    await h.org.admin.gql(REMINDER, {"id": mon.id, "r": {"timing": "nextStart", "hour": 9}})
    nudges = h.bot.nudges
    nudges.discover_every = 0
    await nudges.tick()
    await settle(h)
    assert dms(h, mon) == []
    assert len(dms(h, kim)) == 1 and "The week is ending" in dms(h, kim)[0]
    h.live.clock.set(WEEK + 7 * DAY_MS + 8 * HOUR_MS + 59 * 60_000)  # Monday 08:59
    await nudges.tick()
    await settle(h)
    assert dms(h, mon) == []
    h.live.clock.set(WEEK + 7 * DAY_MS + 9 * HOUR_MS)  # Monday 09:00
    await nudges.tick()
    await nudges.tick()
    await settle(h)
    sent = dms(h, mon)
    assert len(sent) == 1 and "Your timesheet for" in sent[0] and \
        "is not submitted yet" in sent[0] and "ending" not in sent[0], sent
    assert "2 Mar" in sent[0] and len(dms(h, kim)) == 1, sent
