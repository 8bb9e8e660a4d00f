"""Every kind of Slack DM keeps the reader's formats (#43): an owner and an approver who chose
DD/MM/YYYY and a 12-hour clock; the review DM, the owner's notices (rejected, then approved
after a second submission), the updated review message and a saved report's DM, read from
the fake Slack Web API (text and blocks) and searched for an ISO date (YYYY-MM-DD) or a time
on a 24-hour clock."""

from __future__ import annotations

import json
from typing import Any

from tests.bot.slack.fake_slack import Call
from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.bot.slack.test_approvals import person_stages
from tests.bot.slack.test_away_status import status
from tests.bot.slack.test_nudges import REMIND_AFTER, settle
from tests.protocol.test_l10n_formats_walk import CLOCK_24, ISO_DATE, URL
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    approve,
    manage,
    reject,
    submit,
)
from tests.support import DAY_MS, HOUR_MS
from timebot.notify.install import jobs_of

FORMATS = """mutation($id: SvcId!) {
  editPersonLocalisationDateFormat(id: $id, dateFormat: "DD/MM/YYYY") { id }
  editPersonLocalisationTimeFormat(id: $id, timeFormat: 12) { id }
}"""


# What the app reads back, never shown: a button's value, its ids, a link's address.
MACHINE = {"value", "action_id", "block_id", "url", "private_metadata", "callback_id"}


def shown(value: Any) -> Any:
    """A message's text and blocks without what no reader sees."""
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items() if k not in MACHINE}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


def leaks(call: Call) -> list[str]:
    said = URL.sub(" ", json.dumps(shown({k: call.args.get(k) for k in ("text", "blocks")}),
                                   ensure_ascii=False))
    said = said.replace("\\n", " ")
    # `<!date^…^{date_short_pretty} at {time}|…>`: Slack writes it in the reader's settings.
    return [m.group(0) for pattern in (ISO_DATE, CLOCK_24) for m in pattern.finditer(said)]


def to(h: SlackHarness, *members: SlackMember) -> list[Call]:
    channels = {m.slack_id for m in members} | {"D" + m.slack_id[1:] for m in members}
    return [call for method in ("chat.postMessage", "chat.update")
            for call in h.fake.calls_to(method) if call.args.get("channel") in channels]


async def test_every_dm_keeps_the_readers_date_and_clock(h: SlackHarness) -> None:
    runtime = h.live.app.state.runtime
    h.live.clock.set(WEEK - 24 * HOUR_MS)
    sam, ann = await h.slack_member("Sam Formats"), await h.slack_member("Ann Formats")
    for person in (sam, ann):
        await h.org.admin.gql(FORMATS, {"id": person.member.id})
    await person_stages(h, sam, [ann], "any")
    await add_record(sam.member, sam.member, day=0, hours=3)
    await add_record(sam.member, sam.member, day=1, hours=5)
    event = await submit(sam.member, sam.member)
    [review] = await h.fake.wait_for("chat.postMessage", channel=ann.slack_id)
    assert "Mon 02/03/2026" in json.dumps(review.args), review.args
    await reject(ann.member, event["submitId"], 0, "Tuesday is missing")
    await h.fake.wait_for("chat.postMessage", channel=sam.slack_id)
    again = await submit(sam.member, sam.member)
    await h.fake.wait_for("chat.postMessage", channel=ann.slack_id, count=2)
    await approve(ann.member, again["submitId"])
    await h.fake.wait_for("chat.postMessage", channel=sam.slack_id, count=2)

    # A saved report of Sam's hours, his DM on its schedule.
    folder = (await h.org.admin.gql('mutation { createReportFolder(name: "Formats") '
                                    "{ id } }"))["createReportFolder"]["id"]
    report = (await h.org.admin.gql(
        'mutation($f: SvcId!, $p: SvcId) { createReport(name: "Sam\'s week", folderId: $f, '
        'records: ["time"], filters: [{personId: $p}], attributes: {person: true}) { id } }',
        {"f": folder, "p": sam.member.id}))["createReport"]["id"]
    await h.org.admin.gql("mutation($id: SvcId!, $a: SvcEmail!) { addReportEmailToNotify("
                          "id: $id, email: $a) { id } editReportReccurenceEnabled(id: $id,"
                          " enabled: true) { id } }", {"id": report, "a": sam.member.email})
    h.live.clock.set(WEEK_END + 8 * HOUR_MS)
    await jobs_of(runtime).scheduler.due_reports(h.org.id)
    await h.fake.wait_for("chat.postMessage", channel=sam.slack_id, count=3)
    # (The package's tests share the organisation: no report of this test goes later.)
    await h.org.admin.gql("mutation($id: SvcId!) { editReportReccurenceEnabled(id: $id,"
                          " enabled: false) { id } }", {"id": report})

    said: dict[str, Any] = {str(c.args.get("text"))[:60]: leaks(c) for c in to(h, sam, ann)}
    assert len(said) >= 5, said
    assert {text: found for text, found in said.items() if found} == {}


async def test_every_dm_about_waiting_keeps_the_readers_date_and_clock(h: SlackHarness) -> None:
    """The DMs of a period not submitted and of a timesheet that waits (#43), each reader of
    DD/MM/YYYY and a 12-hour clock: the staff nudge and its "Submit now", the approver
    nudges (one of them the daily digest), the other approvers asked because one is away (the
    reason in the reader's formats), the climbing reminder to the away approver's manager, a
    manager's team reminder."""
    runtime = h.live.app.state.runtime
    h.live.clock.set(WEEK + 4 * DAY_MS + 16 * HOUR_MS + 30 * 60_000)  # Friday 16:30
    names = ("Pat Draft", "Sol Owner", "Gail Away", "Hal There", "Mona Manager")
    pat, sol, gail, hal, mona = [await h.slack_member(name) for name in names]
    for person in (pat, sol, gail, hal, mona):
        await h.org.admin.gql(FORMATS, {"id": person.member.id})
    await manage(h.org, mona.member, gail.member)
    await add_record(pat.member, pat.member)
    nudges = h.bot.nudges
    nudges.discover_every = 0
    await nudges.tick()
    await settle(h)
    [nudged] = [c for c in to(h, pat) if "not submitted yet" in str(c.args.get("text"))]
    # Pat clicks "Submit now": the DM says so in place, in Pat's formats.
    im = "D" + pat.slack_id[1:]
    await h.slack.action(user=pat.slack_id, action_id="timebot_submit_now",
                         value=nudged.args["blocks"][1]["elements"][0]["value"],
                         channel=im, ts=h.fake.by_channel[im][-1])
    [done] = await h.fake.wait_for("chat.update", channel=im)
    assert done.args["text"] == ("Submitted your timesheet for Mon 02/03/2026 to Sun "
                                 "08/03/2026."), done.args["text"]

    await h.org.admin.gql(REMIND_AFTER, {"d": 1})
    await h.slack.command("/timesheet", "nudges digest", user=mona.slack_id)
    await h.fake.wait_for("response_url")
    try:
        await person_stages(h, sol, [gail, hal, mona], "any")
        await add_record(sol.member, sol.member)
        await submit(sol.member, sol.member)
        await h.fake.wait_for("chat.postMessage", channel=hal.slack_id)
        # Gail's status says she is away for a week: Hal is asked again, with why.
        back = (h.live.clock.now_ms() // DAY_MS + 8) * DAY_MS // 1000
        await status(h, gail, "Vacationing", ":palm_tree:", back)
        escalator = jobs_of(runtime).escalator
        await escalator.run(h.org.id)
        reason = "Gail Away is away until Fri 13/03/2026"
        await h.fake.wait_for("chat.postMessage", channel=hal.slack_id, count=2)
        assert any(reason in str(c.args) for c in to(h, hal)), [c.args for c in to(h, hal)]
        # Two days on: the approver nudges, the climb to Gail's manager.
        h.live.clock.advance(2 * DAY_MS)
        await escalator.run(h.org.id)
        await nudges.tick()
        await nudges.tick()
        await settle(h)
        climbed = [c for c in to(h, mona) if "has not decided" in str(c.args.get("text"))]
        assert climbed and reason in str(climbed[0].args), [c.args for c in to(h, mona)]
        assert [c for c in to(h, hal) if "Reminder:" in str(c.args.get("text"))]
        assert [c for c in to(h, mona) if "wait for your approval" in str(c.args.get("text"))]
        # Mona reminds her team.
        await h.slack.command("/timesheet", "remind", user=mona.slack_id)
        await h.fake.wait_for("response_url")
        await settle(h)
    finally:
        await h.org.admin.gql(REMIND_AFTER, {"d": None})
        await status(h, gail, "", "")

    said = {str(c.args.get("text"))[:70]: leaks(c) for c in to(h, pat, hal, mona, gail)}
    assert len(said) >= 6, said
    assert {text: found for text, found in said.items() if found} == {}
