"""Names and comments are data, not Slack markup: a person named `<!channel>` or a comment
`<https://evil|click>` must not notify a channel or show a disguised link in anything timebot
posts (request DMs, their outcome, the owner's notice, Journal threads, the Home tab, nudges,
digests, team reminders, ephemeral answers). Driven end to end; every payload the fake Slack
recorded is searched for the raw markup."""

from __future__ import annotations

import json
import time

from tests.bot.slack.fake_slack import Call
from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_approvals import person_stages
from tests.bot.slack.test_nudges import REMIND_AFTER, settle
from tests.bot.slack.test_threads_home import ADD
from tests.service.test_approvals_support import (
    WEEK,
    add_project,
    add_record,
    manage,
    reject,
    submit,
)
from tests.support import DAY_MS, HOUR_MS

HOSTILE = "<!channel> <https://evil|click> & Co"
RAW = ("<!channel>", "<https://evil|click>", "& Co")
ESCAPED = "&lt;!channel&gt; &lt;https://evil|click&gt; &amp; Co"


def leaks(calls: list[Call]) -> list[str]:
    """The recorded payloads that carry the hostile text unescaped (what is shown: messages,
    views, answers; not look-ups such as users.lookupByEmail)."""
    found = []
    for call in calls:
        if not call.method.startswith(("chat.", "views.", "response_url")):
            continue
        dumped = json.dumps(call.args, ensure_ascii=False)
        if any(raw in dumped for raw in RAW):
            found.append(f"{call.method}: {dumped[:400]}")
    return found


def shown(call: Call) -> str:
    return json.dumps(call.args, ensure_ascii=False)


async def test_hostile_names_and_comments_are_escaped_in_everything_posted(
    h: SlackHarness,
) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 1})
    h.live.clock.set(WEEK + 7 * DAY_MS + 10 * HOUR_MS)
    owner = await h.slack_member(f"Sam {HOSTILE}")
    ann = await h.slack_member(f"Ann {HOSTILE}", "manager")
    dan = await h.slack_member("Dan")  # gets the digest
    project = await add_project(h.org, f"Project {HOSTILE}")
    await person_stages(h, owner, [ann, dan])
    await add_record(owner.member, owner.member, projects=(project,))
    event = await submit(owner.member, owner.member)
    [request] = await h.fake.wait_for("chat.postMessage", channel=ann.slack_id)
    await h.fake.wait_for("chat.postMessage", channel=dan.slack_id)
    assert ESCAPED in shown(request)
    im = "D" + ann.slack_id[1:]
    reference = {"id": event["id"], "type": "approvalEvent"}

    # The Home tab of an approver lists the request.
    await h.slack.event({"type": "app_home_opened", "user": ann.slack_id, "tab": "home",
                         "event_ts": f"{time.time():.6f}"})
    [home] = await h.fake.wait_for("views.publish")
    assert ESCAPED in shown(home)

    # A Journal message written elsewhere reaches the request's thread.
    await owner.member.gql(ADD, {"c": f"Comment {HOSTILE}", "r": reference})
    [thread] = await h.fake.wait_for("chat.postMessage", channel=im)
    assert thread.args.get("thread_ts") and ESCAPED in shown(thread)

    # A day later: Ann's nudge and Dan's digest.
    await h.slack.command("/timesheet", "nudges digest", user=dan.slack_id)
    await h.fake.wait_for("response_url")
    h.live.clock.advance(DAY_MS)
    await h.bot.nudges.tick()
    await h.bot.nudges.tick()
    await settle(h)
    nudge = [c for c in h.fake.calls_to("chat.postMessage")
             if c.args["channel"] == ann.slack_id and "Reminder:" in str(c.args["text"])]
    digest = [c for c in h.fake.calls_to("chat.postMessage")
              if c.args["channel"] == dan.slack_id and "wait for your approval" in
              str(c.args["text"])]
    assert nudge and ESCAPED in shown(nudge[0])
    assert digest and ESCAPED in shown(digest[0])

    # Ann rejects with a hostile reason: the messages updated, the owner's notice.
    await reject(ann.member, event["submitId"], 0, f"Because {HOSTILE}")
    updates = await h.fake.wait_for("chat.update", count=2, channel=im)
    assert all(ESCAPED in shown(update) for update in updates)
    [notice] = await h.fake.wait_for("chat.postMessage", channel=owner.slack_id)
    assert f"Because {ESCAPED}" in shown(notice) and f"Ann {ESCAPED}" in shown(notice)

    # Ann, a manager, reminds her team: the DM names her; her answer names them.
    await manage(h.org, ann.member, owner.member)
    await h.slack.command("/timesheet", "remind", user=ann.slack_id)
    reminder = (await h.fake.wait_for("chat.postMessage", channel=owner.slack_id, count=2))[1]
    assert f"Ann {ESCAPED}" in shown(reminder)
    answers = await h.fake.wait_for("response_url", count=2)
    assert f"Sam {ESCAPED}" in shown(answers[-1])

    # Everything recorded: no raw markup anywhere.
    assert leaks(h.fake.calls) == []
