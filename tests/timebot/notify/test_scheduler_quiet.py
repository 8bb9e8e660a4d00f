"""The scheduler skips its period-reminder pass over an organisation until the moment the
last pass found the next reminder due (a whole organisation's settings cost 3.3 s of CPU a
minute at 10,000 people, #26), and looks again at least every ten minutes: a setting changed
meanwhile is seen by then (a reminder stays due for two days)."""

from __future__ import annotations

from tests.mail.reviews_support import WEEK, WEEK_END, jobs, mails, runtime_of
from tests.support import DAY_MS, HOUR_MS, Org

MINUTE_MS = 60_000

DAILY = ("mutation($id: SvcId!) { editPersonTimeSettingsPeriodicity(id: $id, "
         "periodicity: \"daily\") { id } }")


async def test_passes_skipped_until_a_reminder_is_due_and_at_most_ten_minutes(
        org: Org) -> None:
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    runtime.clock.set(WEEK + 23 * HOUR_MS + 55 * MINUTE_MS)  # Monday 23:55: none due
    await scheduler.run_once()
    # A member whose period becomes the day: Monday's reminder is due at Tuesday 00:00.
    daily = await org.add_member("Dana Daily")
    await org.admin.gql(DAILY, {"id": daily.id})
    runtime.clock.set(WEEK + DAY_MS + 2 * MINUTE_MS)
    await scheduler.run_once()
    assert await mails(runtime, daily, "timesheet-reminder") == []  # not looked at yet
    runtime.clock.set(WEEK + DAY_MS + 6 * MINUTE_MS)  # ten minutes after the last pass
    await scheduler.run_once()
    assert len(await mails(runtime, daily, "timesheet-reminder")) == 1

    # A reminder the last pass knew of goes out as soon as it falls due.
    runtime.clock.set(WEEK_END - 2 * MINUTE_MS)
    await scheduler.run_once()
    assert await mails(runtime, org.admin, "timesheet-reminder") == []
    runtime.clock.set(WEEK_END + MINUTE_MS)
    await scheduler.run_once()
    assert len(await mails(runtime, org.admin, "timesheet-reminder")) == 1
