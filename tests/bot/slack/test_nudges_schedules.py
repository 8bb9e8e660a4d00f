"""The staff nudge follows work schedules and public holidays: none on a person's public
holiday or on a day their schedule has no time, as before for the others."""

from __future__ import annotations

from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_nudges import settle
from tests.service.test_approvals_support import WEEK, add_record
from tests.support import DAY_MS, HOUR_MS


async def test_no_staff_nudge_on_a_holiday_or_day_off(h: SlackHarness) -> None:
    friday = WEEK + 4 * DAY_MS
    h.live.clock.set(friday + 16 * HOUR_MS + 30 * 60_000)
    worker = await h.slack_member("Wanda")   # draft, a working Friday: nudged
    holiday = await h.slack_member("Hugo")   # draft, their public holiday today
    four_days = await h.slack_member("Fay")  # draft, works Monday to Thursday
    for who in (worker, holiday, four_days):
        await add_record(who.member, who.member)
    admin = h.org.admin.gql
    await admin('mutation($p: SvcId!, $d: SvcTimestamp!) { addPersonPublicHoliday(id: $p, '
                'holiday: {name: "Local feast", date: $d, disabled: false}) { id } }',
                {"p": holiday.id, "d": friday})
    sid = (await admin('mutation($s: SvcTimestamp!) { addScheduleType(name: "Four days", '
                       "calendarStartTime: $s) { id } }", {"s": WEEK}))["addScheduleType"]["id"]
    for day in range(4):
        await admin("mutation($id: SvcId!, $d: Int!) { editScheduleTypeDayDuration(id: $id, "
                    "dayNumber: $d, duration: 36000000) { id } }", {"id": sid, "d": day})
    await admin("mutation($p: SvcId!, $s: SvcId!) { assignScheduleTimelineToPerson("
                "personId: $p, scheduleTypeId: $s) { id } }", {"p": four_days.id, "s": sid})
    nudges = h.bot.nudges
    nudges.discover_every = 0
    await nudges.tick()
    await settle(h)

    def staff(who: SlackMember) -> list[str]:
        return [str(c.args["text"]) for c in h.fake.calls_to("chat.postMessage")
                if c.args["channel"] == who.slack_id]

    assert len(staff(worker)) == 1 and "not submitted yet" in staff(worker)[0]
    assert staff(holiday) == [] and staff(four_days) == []
