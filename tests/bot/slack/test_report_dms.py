"""A due saved report as a Slack DM: a notified address that is a person linked to Slack gets
the figures once per occurrence (a second tick posts nothing more); an address of nobody in
Slack gets only the e-mail."""

from __future__ import annotations

from sqlalchemy import select

from tests.bot.slack.harness import SlackHarness
from tests.mail.reviews_support import WEEK, WEEK_END, add_record
from tests.support import HOUR_MS
from timebot.notify.install import jobs_of
from timebot.state.models import SlackOutgoing


async def test_a_due_report_is_a_dm_to_linked_people_once(h: SlackHarness) -> None:
    runtime = h.live.app.state.runtime
    scheduler = jobs_of(runtime).scheduler
    gql = h.org.admin.gql
    h.live.clock.set(WEEK - 24 * HOUR_MS)
    sam = await h.slack_member("Sam Slack")
    folder = (await gql('mutation { createReportFolder(name: "Team") { id } }'))[
        "createReportFolder"]["id"]
    report = (await gql(
        'mutation($f: SvcId!, $p: SvcId) { createReport(name: "Weekly hours", folderId: $f, '
        'records: ["time"], filters: [{personId: $p}], attributes: {person: true}) { id } }',
        # Sam's alone: the package's tests share the organisation (and this week).
        {"f": folder, "p": sam.member.id}))[
        "createReport"]["id"]
    await add_record(sam.member, day=1, hours=4)
    await gql("mutation($id: SvcId!, $a: SvcEmail!, $b: SvcEmail!) { "
              "a: addReportEmailToNotify(id: $id, email: $a) { id } "
              "b: addReportEmailToNotify(id: $id, email: $b) { id } "
              "editReportReccurenceEnabled(id: $id, enabled: true) { id } }",
              {"id": report, "a": sam.member.email, "b": "nobody@example.org"})
    h.live.clock.set(WEEK_END + 8 * HOUR_MS)
    assert await scheduler.due_reports(h.org.id) == 3  # two e-mails, one DM
    [dm] = await h.fake.wait_for("chat.postMessage", channel=sam.slack_id)
    text = str(dm.args["text"])
    assert "*Weekly hours*" in text and "Sam Slack: 4.00 h" in text and "Total: 4.00 h" in text
    link = f"<{runtime.settings.public_url}/report/"
    assert link in text and text.endswith("|Open the report>"), text
    assert await scheduler.due_reports(h.org.id) == 0
    async with runtime.state_sessions() as session:
        queued = list(await session.scalars(select(SlackOutgoing).where(
            SlackOutgoing.method == "chat.postMessage", SlackOutgoing.channel == sam.slack_id)))
    assert len(queued) == 1
