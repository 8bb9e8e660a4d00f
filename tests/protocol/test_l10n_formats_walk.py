"""Every kind of mail timebot writes keeps the reader's formats (#43): an organisation that
chose DD/MM/YYYY and a 12-hour clock; its people log time and submit by mail (time@), an
approver rejects then approves by reply, then reads the daily digest, a saved report goes out
on its schedule, a forgetful employee is reminded of the week. Every
message read from the Maildir outbox (subject, text and HTML) is searched for what the
formats exclude: an ISO date (YYYY-MM-DD) or a time on a 24-hour clock. SQLite and
PostgreSQL, swaks to the live SMTP listener."""

from __future__ import annotations

import asyncio
import email
import email.policy
import re
import shutil
from email.message import EmailMessage
from pathlib import Path

import pytest

from mail.outbound.digest import send_digests
from tests.mail.outbound.test_escalations import MONDAY_10, submitted, time_off
from tests.mail.reviews_support import (
    WEEK,
    component,
    jobs,
    links,
    mails,
    org_events,
    runtime_of,
    set_stages,
    settle,
    text_part,
    wait_for,
)
from tests.protocol.test_time_entry_mail import (  # noqa: F401  (the module's server)
    TRUSTED,
    fx,
    receipt_to,
    server,
    swaks,
    text_of,
)
from tests.support import DAY_MS, HOUR_MS, LiveServer, Org
from tests.timebot.timeentry_setup import MONDAY_BERLIN_MS, WEEK_MS, Fixture
from timebot.state.away import record_absence

MINUTE_MS = 60_000

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("swaks") is None, reason="swaks is needed")]

FORMATS = """mutation {
  editOrganisationLocalisationDateFormat(dateFormat: "DD/MM/YYYY") { id }
  editOrganisationLocalisationTimeFormat(timeFormat: 12) { id }
}"""
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# A clock time not followed by AM/PM (a 12-hour clock says "2:00 PM").
CLOCK_24 = re.compile(r"\b\d{1,2}:\d{2}\b(?!\s?(AM|PM|am|pm))")
URL = re.compile(r"https?://\S+")


def leaks(message: EmailMessage) -> list[str]:
    """The ISO dates and 24-hour times a reader of DD/MM/YYYY and 12 hours would see."""
    parts = [str(message["Subject"])]
    for kind in ("plain", "html"):
        body = message.get_body((kind,))
        if body is not None:
            parts.append(str(body.get_content()))
    text = URL.sub(" ", "\n".join(parts))
    text = re.sub(r"<[^>]+>", " ", text)  # HTML tags, with their attributes
    return [found.group(0) for pattern in (ISO_DATE, CLOCK_24) for found in
            pattern.finditer(text)]


def outbox(live: LiveServer) -> list[EmailMessage]:
    folder = Path(live.settings.outbox_dir) / "new"
    found = []
    for path in sorted(folder.glob("*")) if folder.exists() else []:
        parsed = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        found.append(parsed)
    return found


async def mail_to(live: LiveServer, address: str, subject_part: str) -> EmailMessage:
    for _ in range(400):
        found = [m for m in outbox(live) if address in str(m["To"])
                 and subject_part in str(m["Subject"])]
        if found:
            return found[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no mail to {address} with {subject_part!r}")


async def reply_by_mail(port: int, sender: str, to: str, body: str) -> None:
    process = await asyncio.create_subprocess_exec(
        "swaks", "--server", f"127.0.0.1:{port}", "--to", to, "--from", sender,
        "--helo", "client.example.com", "--timeout", "20", "--header", "Subject: Re: review",
        "--add-header", f"Authentication-Results: {TRUSTED}; dmarc=pass"
        f" header.from={sender.rpartition('@')[2]}", "--body", body,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")


async def test_every_mail_keeps_the_readers_date_and_clock(
    server: tuple[LiveServer, int], fx: Fixture,  # noqa: F811
) -> None:
    live, port = server
    org, erin = fx.org, fx.employee
    await org.admin.gql(FORMATS)
    grace = await org.add_member("Grace Approver", "manager")
    pat, quinn = await org.add_member("Pat Digested"), await org.add_member("Quinn Late")
    await set_stages(org, (grace,))
    await runtime_of(org).subscriptions.ensure(org.id)
    scheduler = jobs(org).scheduler
    await scheduler.period_reminders(org.id)  # timebot serves the organisation from now

    # time@: a range on the clock and an absence, then the week submitted.
    await swaks(port, erin.email, "2pm-3:30pm @acme/website design review\n"
                "9:15-11:45 @beta\n1d vacation friday\n")
    logged = text_of(await receipt_to(live, erin.email))
    assert "2:00 PM" in logged and "Wed 18/03/2026" in logged, logged
    await swaks(port, erin.email, "submit\n", subject="submit")
    await receipt_to(live, erin.email, count=2)

    # The approver rejects by reply, Erin submits again, the approver approves.
    review = await mail_to(live, grace.email, "")
    await reply_by_mail(port, grace.email, str(review["Reply-To"]), "reject too long")
    await mail_to(live, erin.email, "rejected")
    week_end = MONDAY_BERLIN_MS + WEEK_MS
    await erin.gql("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
                   " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }",
                   {"p": erin.id, "s": MONDAY_BERLIN_MS, "e": week_end})
    for _ in range(400):
        reviews = [m for m in outbox(live) if grace.email in str(m["To"])
                   and m["Reply-To"] and m["Reply-To"] != review["Reply-To"]]
        if reviews:
            break
        await asyncio.sleep(0.05)
    await reply_by_mail(port, grace.email, str(reviews[-1]["Reply-To"]), "approve")
    await mail_to(live, erin.email, "approved")

    # Grace reads the daily digest from now on; Pat submits; Quinn forgets.
    assert (await org.http.post(links(review)["prefs"], data={"mode": "digest"})
            ).status_code == 200
    await pat.gql("mutation($p: SvcId!, $s: SvcTimestamp!) { addTimeRecord(personId: $p,"
                  " startTime: $s, duration: 5400000) { id } }",
                  {"p": pat.id, "s": MONDAY_BERLIN_MS + 9 * HOUR_MS})
    await pat.gql("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
                  " submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }",
                  {"p": pat.id, "s": MONDAY_BERLIN_MS, "e": week_end})

    # A saved report on its schedule: the Monday after the week, 08:00 in Berlin.
    folder = (await org.admin.gql('mutation { createReportFolder(name: "Team") { id } }'))[
        "createReportFolder"]["id"]
    report = (await org.admin.gql(
        'mutation($f: SvcId!) { createReport(name: "Weekly hours", folderId: $f, '
        'records: ["time"], attributes: {person: true}) { id } }', {"f": folder}))[
        "createReport"]["id"]
    await org.admin.gql("mutation($id: SvcId!, $e: SvcEmail!) { editReportReccurenceEnabled("
                        "id: $id, enabled: true) { id } addReportEmailToNotify(id: $id, "
                        "email: $e) { id } }", {"id": report, "e": erin.email})
    live.clock.set(week_end + 10 * HOUR_MS)
    assert await scheduler.due_reports(org.id) == 1
    await mail_to(live, erin.email, "Weekly hours")
    assert await scheduler.period_reminders(org.id) >= 1
    await mail_to(live, quinn.email, "Please submit your timesheet")
    assert await send_digests(component(org).ctx, org.id) >= 1
    await mail_to(live, grace.email, "waiting for your approval")

    mails = [m for m in outbox(live) if any(a in str(m["To"]) for a in (
        erin.email, grace.email, pat.email, quinn.email, org.admin.email))]
    kinds = {str(m["Subject"]).split(":")[0] for m in mails}
    assert len(mails) >= 8, kinds
    # The owner's notice names the period as the review mail does; the report is in the
    # formats of its owner (the administrator reads the organisation's).
    period = "Mon 16/03/2026 to Sun 22/03/2026"
    subjects = {str(m["Subject"]) for m in mails}
    assert {f"Timesheet to review: Erin Employee, {period}",
            f"Your timesheet for {period} was rejected",
            f"Your timesheet for {period} is approved",
            f"Weekly hours: {period}",
            f"Please submit your timesheet for {period}"} <= subjects, subjects
    found = {str(m["Subject"]): leaks(m) for m in mails if leaks(m)}
    assert found == {}, found


async def test_every_mail_about_a_waiting_timesheet_keeps_the_readers_formats(
    org: Org,
) -> None:
    """The mails of a timesheet that waits (#43), in an organisation of DD/MM/YYYY and a
    12-hour clock: the other approver asked because one is away (the reason names her
    return day in the reader's formats), the administrators asked when every approver is
    away, the approval reminders, the climbing reminder to the away approver's manager."""
    runtime = runtime_of(org)
    org.live.clock.set(MONDAY_10)  # Monday 30 November 2026
    await org.admin.gql(FORMATS)
    await org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 1) { id } }")
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    hal = await org.add_member("Hal Abelson", "manager")
    mona = await org.add_member("Mona Manager", "manager")
    await org.admin.gql("mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m,"
                        " personId: $p) { id } }", {"m": mona.id, "p": grace.id})
    await set_stages(org, (grace, hal))
    await submitted(org, owner)
    escalator = jobs(org).escalator

    # Grace is off Tuesday and Wednesday: Hal is asked, with why.
    await time_off(org, grace, 1, 2)
    org.live.clock.set(MONDAY_10 + DAY_MS - HOUR_MS)
    await escalator.run(org.id)
    assert any("Grace Hopper is away until Wed 02/12/2026: you are asked too" in text_part(m)
               for m in await mails(runtime, hal, "review"))
    # Hal's Slack status says he is away too: the administrators are asked.
    await record_absence(runtime.state_sessions, organisation_id=org.id, approver_id=hal.id,
                         until=None, seen_ms=org.live.clock.now_ms(), message_key="slack:U1",
                         source="slack-status")
    org.live.clock.set(MONDAY_10 + DAY_MS)
    assert await escalator.run(org.id) == 1
    # A day passes: the approval reminders; another: the climb to Grace's manager.
    runtime.clock.advance(DAY_MS + MINUTE_MS)
    org.live.service.webhooks.kick()
    await settle(runtime, org.id, len(await org_events(runtime, org.id)) + 1)
    await wait_for(lambda: mails(runtime, grace, "approval-reminder"), what="approval reminder")
    org.live.clock.set(MONDAY_10 + 2 * DAY_MS + MINUTE_MS)  # Wednesday: Grace is still away
    escalator._idle.clear()
    assert await escalator.tick(org.id) >= 1
    [climbed] = await mails(runtime, mona, "review")
    assert "since Mon 30/11/2026" in text_part(climbed), text_part(climbed)
    assert "Grace Hopper is away until Wed 02/12/2026." in text_part(climbed)

    # Mona reminds Grace to submit her own week.
    await mona.gql("mutation($ids: [SvcId!]!, $s: SvcTimestamp!, $e: SvcTimestamp!) {"
                   " sendTimesheetReminder(personIds: $ids, startTime: $s, endTime: $e) }",
                   {"ids": [grace.id], "s": WEEK, "e": WEEK + 7 * DAY_MS})
    org.live.service.webhooks.kick()
    [reminded] = await wait_for(lambda: mails(runtime, grace, "timesheet-reminder"),
                                what="Mona's reminder")
    assert "Mon 05/10/2026 to Sun 11/10/2026" in str(reminded["Subject"]), reminded["Subject"]

    sent = [m for person in (grace, hal, mona, org.admin) for m in await mails(runtime, person)]
    kinds = {str(m["Subject"]).split(":")[0] for m in sent}
    assert len(sent) >= 6, kinds
    found = {str(m["Subject"]): leaks(m) for m in sent if leaks(m)}
    assert found == {}, found
