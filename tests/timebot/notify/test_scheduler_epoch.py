"""At first start no burst of reminders: the scheduler sends no period reminder for a period
that ended before it first saw the organisation (timebot's first run, a demo seeded with weeks
of history, an organisation created today), and reminds as usual from then on."""

from __future__ import annotations

from tests.mail.reviews_support import WEEK_END, add_record, jobs, mails, runtime_of
from tests.support import DAY_MS, HOUR_MS, Org


async def test_no_reminder_for_a_week_that_ended_before_the_first_tick(org: Org) -> None:
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    member = await org.add_member("Fresh Start")
    await add_record(member, day=1, hours=4)

    # The first tick comes an hour after a week ended (within the catch-up grace): that week
    # ended before timebot served the organisation, so nobody is reminded of it, not even by
    # a later tick (a restart, a second process).
    runtime.clock.set(WEEK_END + HOUR_MS)
    assert await scheduler.period_reminders(org.id) == 0
    runtime.clock.set(WEEK_END + 5 * HOUR_MS)
    assert await scheduler.period_reminders(org.id) == 0
    assert await mails(runtime, member, "timesheet-reminder") == []

    # The next week ends while timebot serves the organisation: reminded as usual, once.
    runtime.clock.set(WEEK_END + 7 * DAY_MS + HOUR_MS)
    assert await scheduler.period_reminders(org.id) >= 1
    assert await scheduler.period_reminders(org.id) == 0
    [reminder] = await mails(runtime, member, "timesheet-reminder")
    assert "Mon 12 Oct to Sun 18 Oct 2026" in reminder["Subject"], reminder["Subject"]
