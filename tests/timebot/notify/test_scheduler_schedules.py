"""End-of-period reminders follow each person's work schedule and public holidays: the
working days of their schedule decide "absent all week", a week without working days asks
for nothing, and no reminder goes out on their holiday (it waits for the next working day)."""

from __future__ import annotations

from tests.mail.reviews_support import WEEK, WEEK_END, jobs, mails, runtime_of
from tests.support import DAY_MS, HOUR_MS, Member, Org


async def weekly_schedule(org: Org, hours: list[int]) -> str:
    sid = (await org.admin.gql(
        'mutation($s: SvcTimestamp!) { addScheduleType(name: "Short week", '
        "calendarStartTime: $s) { id } }", {"s": WEEK}))["addScheduleType"]["id"]
    for number, value in enumerate(hours):
        await org.admin.gql(
            "mutation($id: SvcId!, $d: Int!, $v: Int!) { editScheduleTypeDayDuration(id: $id, "
            "dayNumber: $d, duration: $v) { id } }", {"id": sid, "d": number,
                                                       "v": value * HOUR_MS})
    return str(sid)


async def absent_on(org: Org, member: Member, days: range) -> None:
    absence = (await org.admin.gql('mutation { addAbsenceType(name: "Leave") { id } }'))[
        "addAbsenceType"]["id"]
    for day in days:
        await member.gql(
            "mutation($s: SvcTimestamp!, $p: SvcId!, $a: SvcId) { addTimeRecord(startTime: $s,"
            " duration: 28800000, personId: $p, absenceId: $a) { id } }",
            {"s": WEEK + day * DAY_MS + 9 * HOUR_MS, "p": member.id, "a": absence})


async def test_reminders_follow_schedules_and_holidays(org: Org) -> None:
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    runtime.clock.set(WEEK + HOUR_MS)  # the scheduler serves the organisation from that week on
    await scheduler.period_reminders(org.id)
    short = await org.add_member("Sam Short")      # works Mon-Thu, absent Mon-Thu
    default = await org.add_member("Dora Default")  # Mon-Fri default, absent Mon-Thu
    off = await org.add_member("Otto Off")          # no working day that week
    plain = await org.add_member("Paula Plain")     # nothing recorded: reminded
    sid = await weekly_schedule(org, [8, 8, 8, 8])
    await org.admin.gql("mutation($p: SvcId!, $s: SvcId!) { assignScheduleTimelineToPerson("
                        "personId: $p, scheduleTypeId: $s) { id } }", {"p": short.id, "s": sid})
    empty = await weekly_schedule(org, [])
    await org.admin.gql("mutation($p: SvcId!, $s: SvcId!, $t: SvcTimestamp) { "
                        "assignScheduleTimelineToPerson(personId: $p, scheduleTypeId: $s, "
                        "startTime: $t) { id } }", {"p": off.id, "s": empty, "t": WEEK})
    await org.admin.gql("mutation($p: SvcId!, $s: SvcId!, $t: SvcTimestamp) { "
                        "assignScheduleTimelineToPerson(personId: $p, scheduleTypeId: $s, "
                        "startTime: $t) { id } }", {"p": off.id, "s": sid, "t": WEEK_END})
    await absent_on(org, short, range(4))
    await absent_on(org, default, range(4))
    # the Monday after the week is a company holiday
    await org.admin.gql('mutation($d: SvcTimestamp!) { addOrganisationPublicHoliday(holiday: '
                        '{name: "Company day", date: $d, disabled: false}) { id } }',
                        {"d": WEEK_END})

    async def reminded() -> set[str]:
        return {m.name for m in (short, default, off, plain)
                if await mails(runtime, m, "timesheet-reminder")}

    runtime.clock.set(WEEK_END + 10 * HOUR_MS)
    await scheduler.period_reminders(org.id)
    assert await reminded() == set()  # a holiday for everyone: nothing yet
    runtime.clock.set(WEEK_END + DAY_MS + 10 * HOUR_MS)
    await scheduler.period_reminders(org.id)
    assert await reminded() == {"Dora Default", "Paula Plain"}
