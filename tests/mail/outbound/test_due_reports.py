"""A saved report's recurrence sends it by e-mail through the outbox when due: the figures of
the occurrence's period as the folder's owner sees them, to each address to notify, once per
occurrence (a second tick, another scheduler — a restart, a second process — queue nothing);
not before its moment, not when disabled."""

from __future__ import annotations

import re

from tests.mail.reviews_support import (
    WEEK,
    WEEK_END,
    add_record,
    html_part,
    jobs,
    outbox_rows,
    parse,
    runtime_of,
    text_part,
)
from tests.support import HOUR_MS, Org
from timebot.notify.scheduler import Scheduler


async def weekly_report(org: Org) -> str:
    """The administrator's "Weekly hours" report of time by person, in a folder of theirs."""
    gql = org.admin.gql
    folder = (await gql('mutation { createReportFolder(name: "Team") { id } }'))[
        "createReportFolder"]["id"]
    return str((await gql(
        'mutation($f: SvcId!) { createReport(name: "Weekly hours", folderId: $f, '
        'records: ["time"], attributes: {person: true}) { id } }', {"f": folder}))[
        "createReport"]["id"])


async def test_a_due_report_is_mailed_once_per_occurrence(org: Org) -> None:
    runtime = runtime_of(org)
    scheduler = jobs(org).scheduler
    gql = org.admin.gql
    runtime.clock.set(WEEK - 24 * HOUR_MS)
    bob = await org.add_member("Bob")
    report = await weekly_report(org)
    await add_record(bob, day=1, hours=3)
    await add_record(bob, day=2, hours=2)
    await gql("mutation($id: SvcId!) { addReportEmailToNotify(id: $id, email: "
              "\"boss@example.org\") { id } addReportEmailToNotify(id: $id, email: "
              "\"finance@example.org\") { id } }".replace("} addR", "} b: addR"), {"id": report})

    runtime.clock.set(WEEK_END + 9 * HOUR_MS)
    assert await scheduler.due_reports(org.id) == 0  # not enabled
    await gql("mutation($id: SvcId!) { editReportReccurenceEnabled(id: $id, enabled: true) "
              "{ id } }", {"id": report})
    runtime.clock.set(WEEK_END + 8 * HOUR_MS - 1)
    assert await scheduler.due_reports(org.id) == 0  # Monday 08:00 not yet
    runtime.clock.set(WEEK_END + 8 * HOUR_MS)
    assert await scheduler.due_reports(org.id) == 2
    assert await scheduler.due_reports(org.id) == 0  # the same occurrence: queued already
    other = Scheduler(runtime)  # another process, or this one restarted
    for channel in scheduler.report_channels:
        other.add_report_channel(channel)
    assert await other.due_reports(org.id) == 0

    (row,) = await outbox_rows(runtime, "boss@example.org", "report")
    message = parse(row.raw)
    assert message["Subject"].startswith("Weekly hours: ")
    text = text_part(message)
    assert "Bob: 5.00 h" in text and "Total: 5.00 h" in text
    # The mail carries the report's link: its page shows the figures without signing in.
    found = re.search(r"Open the report: (\S+)", text)
    assert found is not None, text
    link = found.group(1)
    assert link.startswith(f"{runtime.settings.public_url}/report/")
    assert f'href="{link}"' in html_part(message)
    page = await org.http.get(link)
    assert page.status_code == 200, page.text
    assert "Bob" in page.text and "5.00 h" in page.text
    forged = await org.http.get(link[:-4] + "AAAA")
    assert forged.status_code == 404 and "not valid" in forged.text
    assert len(await outbox_rows(runtime, "finance@example.org", "report")) == 1
    # the next week's occurrence is a new one
    runtime.clock.set(WEEK_END + 7 * 24 * HOUR_MS + 8 * HOUR_MS)
    assert await scheduler.due_reports(org.id) == 2


async def test_the_report_link_page_reads_as_its_owner_does(org: Org) -> None:
    """The page a report's link opens has no signed-in reader: the link names its owner's
    formats (#43), so a decimal comma chosen by the owner is the page's too; a link whose
    formats are garbled still opens, in the house style."""
    runtime = runtime_of(org)
    gql = org.admin.gql
    runtime.clock.set(WEEK - 24 * HOUR_MS)
    await gql('mutation($id: SvcId!) { editPersonLocalisationDecimalFormat(id: $id, '
              'decimalFormat: ",") { id } editPersonLang(id: $id, lang: "fr") { id } }',
              {"id": org.admin.id})
    bob = await org.add_member("Bob")
    report = await weekly_report(org)
    await add_record(bob, day=1, hours=5)
    await gql("mutation($id: SvcId!) { addReportEmailToNotify(id: $id, email: "
              "\"comma-reader@example.org\") { id } editReportReccurenceEnabled(id: $id, enabled: "
              "true) { id } }", {"id": report})
    runtime.clock.set(WEEK_END + 8 * HOUR_MS)
    assert await jobs(org).scheduler.due_reports(org.id) == 1
    (row,) = await outbox_rows(runtime, "comma-reader@example.org", "report")
    text = text_part(parse(row.raw))
    assert "Bob: 5,00 h" in text and "Total : 5,00 h" in text, text
    assert f"(tel que {org.admin.name} le voit)" in text, text  # the owner's language
    found = re.search(r"(http://\S+/report/\S+)", text)
    assert found is not None, text
    page = await org.http.get(found.group(1))
    assert page.status_code == 200, page.text
    assert '<html lang="fr"' in page.text and "5,00 h" in page.text and "5.00" not in page.text
    token = found.group(1).split("?")[0]
    garbled = await org.http.get(token + "?lang=xx&decimal=%3Cb%3E&clock=99&thousands=%00")
    assert garbled.status_code == 200 and "5.00 h" in garbled.text, garbled.text
