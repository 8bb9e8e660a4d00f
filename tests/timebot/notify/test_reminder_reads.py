"""An end-of-period reminder's mail reads its person's notification settings, template and
suggested time with the verdict's facts, in one request (timebot.notify.reminder_reads), and
honours them as it did reading them apart: e-mail off sends no reminder, the person's own
reminder template renders it. Driven by the scheduler's run, read from the outbox."""

from __future__ import annotations

from tests.mail.outbound.test_templates_notify import NOTIFY, settings
from tests.mail.reviews_support import WEEK, WEEK_END, jobs, mails, runtime_of, text_part
from tests.support import Org
from timebot.notify.periods import Period
from timebot.notify.reminder_reads import verdict_reads

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
