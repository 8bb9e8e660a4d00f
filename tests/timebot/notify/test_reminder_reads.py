"""An end-of-period reminder's mail reads its person's notification settings, template and
suggested time with the verdict's facts, in one request (timebot.notify.reminder_reads), and
honours them as it did reading them apart: e-mail off sends no reminder, the person's own
reminder template renders it. Driven by the scheduler's run, read from the outbox."""

from __future__ import annotations

from tests.mail.outbound.test_templates_notify import NOTIFY, settings
from tests.mail.reviews_support import (
    WEEK,
    WEEK_END,
    add_record,
    jobs,
    mails,
    runtime_of,
    text_part,
)
from tests.support import Org
from timebot.notify.approvals import time_zone_of
from timebot.notify.periods import Period
from timebot.notify.reminder_reads import group_verdict_reads, verdict_reads

REMINDER_TEMPLATE = ("mutation($id: SvcId!, $t: String) { "
                     "editPersonEmailTemplateReminder(id: $id, template: $t) { id } }")


async def test_the_reminder_honours_what_it_read_with_the_verdict(org: Org) -> None:
    runtime = runtime_of(org)
    quiet = await org.add_member("Quinn Quiet")
    own = await org.add_member("Oda Own")
    plain = await org.add_member("Pat Plain")
    await quiet.gql(NOTIFY, {"id": quiet.id, "n": {**settings(), "email": False}})
    await org.admin.gql(REMINDER_TEMPLATE, {"id": own.id, "t": (
        "Subject: Your week, {{ person.name }}\n\n{{ entries }} entries in {{ period }}.")})

    runtime.clock.set(WEEK_END)  # Monday 00:00 UTC: everyone's empty week is due
    assert await jobs(org).scheduler.period_reminders(org.id) == 3  # Oda, Pat, the admin

    assert await mails(runtime, quiet, "timesheet-reminder") == []
    [to_own] = await mails(runtime, own, "timesheet-reminder")
    assert to_own["Subject"] == "Your week, Oda Own"
    assert text_part(to_own).startswith("0 entries in ")
    [to_plain] = await mails(runtime, plain, "timesheet-reminder")
    assert "Your week" not in to_plain["Subject"]


async def test_the_verdict_carries_the_mails_reads_from_the_one_request(org: Org) -> None:
    runtime = runtime_of(org)
    quiet = await org.add_member("Quinn Quiet")
    await quiet.gql(NOTIFY, {"id": quiet.id, "n": {**settings(), "email": False}})
    key = await runtime.directory.integration_key(org.id)
    week = Period(WEEK, WEEK_END)
    reads = await verdict_reads(runtime.client, key, quiet.id, week, WEEK_END, "UTC")
    assert reads.mail is not None
    assert reads.mail.notify.settings["email"] is False
    assert reads.mail.pending.count == 0
    assert reads.summary.entries == () and len(reads.planned) == 8  # Monday to Monday
    assert sum(reads.planned.values()) == 6  # Monday to Friday, and today


async def test_a_groups_reads_are_each_persons_own(org: Org) -> None:
    """The group's one request gives each person what their own request gives: their working
    days in their time zone, their records only, their settings."""
    runtime = runtime_of(org)
    worked = await org.add_member("Wim Worked")
    tokyo = await org.add_member("Toko Tokyo")
    quiet = await org.add_member("Quinn Quiet")
    await add_record(worked, day=0, hours=3)
    await add_record(worked, day=2, hours=5)
    await add_record(tokyo, day=1, hours=2)
    await org.admin.gql("mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id, "
                        'timeZone: "Asia/Tokyo") { id } }', {"id": tokyo.id})
    await quiet.gql(NOTIFY, {"id": quiet.id, "n": {**settings(), "email": False}})
    key = await runtime.directory.integration_key(org.id)
    people = (await org.admin.gql(
        "query { getPersons { id name email localisation { timeZone { value } } } }"))[
        "getPersons"]
    week = Period(WEEK, WEEK_END)
    together = await group_verdict_reads(runtime.client, key, people, week, WEEK_END)
    assert set(together) == {person["id"] for person in people}
    for person in people:
        alone = await verdict_reads(runtime.client, key, person["id"], week, WEEK_END,
                                    time_zone_of(person))
        assert together[person["id"]] == alone, person["name"]
    assert len(together[worked.id].summary.entries) == 2
    assert len(together[tokyo.id].summary.entries) == 1
    assert together[quiet.id].mail is not None
    assert together[quiet.id].mail.notify.settings["email"] is False
