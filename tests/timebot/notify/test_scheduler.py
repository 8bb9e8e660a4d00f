"""Reminders: end-of-period reminders at each person's local period end (a test clock, several
time zones), never to people approved, waiting for someone else or absent all week; the
one-off sendTimesheetReminder with its Submit now link; approval reminders at increasing
intervals until someone acts."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from mail.outbound.reminders import reminder_is_sent
from tests.mail.reviews_support import (
    APPROVE,
    REJECT,
    STATE,
    WEEK,
    WEEK_END,
    add_record,
    jobs,
    links,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    text_part,
    wait_for,
)
from tests.support import DAY_MS, HOUR_MS, Member, Org
from timebot.notify.periods import Period, absent_whole_period, last_ended_week

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

MINUTE_MS = 60_000


async def set_zone(org: Org, member: Member, zone: str) -> None:
    await org.admin.gql(
        "mutation($id: SvcId!, $z: SvcTimeZone) { editPersonLocalisationTimeZone(id: $id, "
        "timeZone: $z) { id } }", {"id": member.id, "z": zone},
    )


async def add_absence_week(org: Org, member: Member) -> None:
    absence = (await org.admin.gql(
        'mutation { addAbsenceType(name: "Holiday") { id } }'
    ))["addAbsenceType"]["id"]
    for day in range(5):
        await member.gql(
            "mutation($s: SvcTimestamp!, $p: SvcId!, $a: SvcId) { addTimeRecord(startTime: $s,"
            " duration: 28800000, personId: $p, absenceId: $a) { id } }",
            {"s": WEEK + day * DAY_MS + 9 * HOUR_MS, "p": member.id, "a": absence},
        )


def test_pure_schedule_rules() -> None:
    assert [n for n in range(1, 16) if reminder_is_sent(n)] == [1, 3, 6, 10, 15]
    tokyo = last_ended_week(WEEK_END - 9 * HOUR_MS, "Asia/Tokyo")
    assert tokyo == Period(WEEK - 9 * HOUR_MS, WEEK_END - 9 * HOUR_MS)
    assert last_ended_week(WEEK_END - 9 * HOUR_MS - 1, "Asia/Tokyo").end_ms == WEEK - 9 * HOUR_MS
    # The DST change in New York (1 November 2026) makes that week 169 hours long.
    ny = last_ended_week(1_794_200_000_000, "America/New_York")
    assert ny.end_ms - ny.start_ms == 169 * HOUR_MS
    week = Period(WEEK, WEEK_END)
    monday = date(2026, 10, 5)
    all_week = [(monday + timedelta(days=d), True) for d in range(5)]
    assert absent_whole_period(all_week, week, "UTC")
    assert not absent_whole_period(all_week[:4], week, "UTC")
    assert not absent_whole_period([*all_week, (monday, False)], week, "UTC")


async def test_end_of_period_reminders_at_local_times(org: Org) -> None:
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    approver = await org.add_member("Pat Approver", "manager")
    tokyo = await org.add_member("Taro Tokyo")
    new_york = await org.add_member("Nina NewYork")
    approved = await org.add_member("Alma Approved")
    waiting = await org.add_member("Walt Waiting")
    rejected = await org.add_member("Remy Rejected")
    absent = await org.add_member("Abby Absent")
    await set_zone(org, tokyo, "Asia/Tokyo")
    await set_zone(org, new_york, "America/New_York")
    await set_stages(org, (approver,))
    await add_record(tokyo, day=1, hours=4)
    for member in (approved, waiting, rejected):
        await add_record(member, day=2)
    approved_submit = await submit(approved)
    await org.gql_for(approver.apikey)(APPROVE, {"id": approved_submit["submitId"]})
    await submit(waiting)
    rejected_submit = await submit(rejected)
    await org.gql_for(approver.apikey)(REJECT, {"id": rejected_submit["submitId"], "st": 0,
                                                 "c": "Too little"})
    await add_absence_week(org, absent)

    async def tick(at_ms: int) -> None:
        runtime.clock.set(at_ms)
        await scheduler.period_reminders(org.id)

    async def reminded() -> set[str]:
        found = set()
        for member in (tokyo, new_york, approved, waiting, rejected, absent):
            if await mails(runtime, member, "timesheet-reminder"):
                found.add(member.name)
        return found

    tokyo_end = WEEK_END - 9 * HOUR_MS  # Monday 00:00 in Tokyo
    await tick(tokyo_end - MINUTE_MS)
    assert await reminded() == set()
    await tick(tokyo_end)
    assert await reminded() == {"Taro Tokyo"}
    await tick(WEEK_END - MINUTE_MS)
    assert await reminded() == {"Taro Tokyo"}
    await tick(WEEK_END)  # Monday 00:00 UTC
    assert await reminded() == {"Taro Tokyo", "Remy Rejected"}
    await tick(WEEK_END + 4 * HOUR_MS - MINUTE_MS)
    assert "Nina NewYork" not in await reminded()
    await tick(WEEK_END + 4 * HOUR_MS)  # Monday 00:00 in New York (EDT)
    await tick(WEEK_END + 5 * HOUR_MS)
    assert await reminded() == {"Taro Tokyo", "Remy Rejected", "Nina NewYork"}
    for member in (tokyo, rejected, new_york):
        assert len(await mails(runtime, member, "timesheet-reminder")) == 1, member.name

    [to_tokyo] = await mails(runtime, tokyo, "timesheet-reminder")
    assert "Mon 05 Oct to Sun 11 Oct 2026" in to_tokyo["Subject"]
    assert "4h" in text_part(to_tokyo) and "s" in links(to_tokyo)
    [to_new_york] = await mails(runtime, new_york, "timesheet-reminder")
    assert "is empty" in text_part(to_new_york) and "s" not in links(to_new_york)
    [to_rejected] = await mails(runtime, rejected, "timesheet-reminder")
    assert "was rejected" in text_part(to_rejected)


async def test_send_timesheet_reminder_and_the_submit_now_link(org: Org) -> None:
    runtime = runtime_of(org)
    manager = await org.add_member("Mia Manager", "manager")
    staff = await org.add_member("Stan Staff")
    done = await org.add_member("Dana Done")
    await org.admin.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p) "
        "{ id } }", {"m": manager.id, "p": staff.id},
    )
    await runtime.subscriptions.ensure(org.id)
    await add_record(staff, day=3, hours=2)
    await add_record(done, day=3, hours=2)
    await submit(done)  # no workflow: approved at once
    await settle(runtime, org.id, 1)
    await org.admin.gql(
        "mutation($ids: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
        "sendTimesheetReminder(personIds: $ids, startTime: $s, endTime: $e) }",
        {"ids": [staff.id, done.id], "s": WEEK, "e": WEEK_END},
    )
    await settle(runtime, org.id, 2)
    await wait_for(lambda: outbox_rows(runtime, staff.email, "timesheet-reminder"),
                   what="the reminder")
    [message] = await mails(runtime, staff, "timesheet-reminder")
    assert not await mails(runtime, done)
    assert "Ada Admin asked us to remind you" in text_part(message)
    url = links(message)["s"]

    page = await org.http.get(url)
    assert page.status_code == 200 and 'id="submit"' in page.text and "2h" in page.text
    state = await org.admin.gql(STATE, {"p": staff.id, "s": WEEK, "e": WEEK_END})
    assert state["getApprovalState"]["status"] == "d"  # GET changes nothing
    submitted = await org.http.post(url)
    assert "Submitted" in submitted.text
    state = await org.admin.gql(STATE, {"p": staff.id, "s": WEEK, "e": WEEK_END})
    assert state["getApprovalState"]["status"] == "a"
    again = await org.http.post(url)
    assert "already" in again.text


async def test_approval_reminders_at_increasing_intervals_until_someone_acts(org: Org) -> None:
    runtime = runtime_of(org)
    approver = await org.add_member("Ivy Idle", "manager")
    owner = await org.add_member("Otto Owner")
    await set_stages(org, (approver,))
    await org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 1) { id } }"
    )
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    submitted = await submit(owner)
    await settle(runtime, org.id, 1)
    events = 1

    async def day_passes() -> None:
        nonlocal events
        runtime.clock.advance(DAY_MS + MINUTE_MS)
        org.live.service.webhooks.kick()
        events += 1
        await settle(runtime, org.id, events)

    sent_after: list[int] = []
    for _day in range(10):
        await day_passes()
        sent_after.append(len(await mails(runtime, approver, "approval-reminder")))
    # Reminded after 1, 3, 6 and 10 days.
    assert sent_after == [1, 1, 2, 2, 2, 3, 3, 3, 3, 4]
    reminder = (await mails(runtime, approver, "approval-reminder"))[-1]
    assert "10 days" in text_part(reminder)
    assert str(reminder["Reply-To"]).startswith("approvals+")

    await org.gql_for(approver.apikey)(APPROVE, {"id": submitted["submitId"]})
    events += 1
    await settle(runtime, org.id, events)
    for _ in range(5):
        runtime.clock.advance(DAY_MS + MINUTE_MS)
        org.live.service.webhooks.kick()
    await settle(runtime, org.id, events)
    assert len(await mails(runtime, approver, "approval-reminder")) == 4
