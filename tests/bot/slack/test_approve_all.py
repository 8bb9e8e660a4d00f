""""Approve all (N)" on the Slack daily digest: the button names exactly the N requests shown,
behind a confirmation naming N; a click (signed request to the Slack endpoint, fake Slack)
decides as the clicking person what still waits for them, reports the rest, decides nothing
twice, and decides nothing for someone the requests do not wait for."""

from __future__ import annotations

import asyncio
import json
import re

from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_approvals import EVENTS, buttons, person_stages
from tests.bot.slack.test_nudges import REMIND_AFTER, settle
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    approve,
    state,
    submit,
)
from tests.support import DAY_MS, HOUR_MS

APPROVE_ALL = "timebot_approve_all"


async def test_approve_all_from_the_slack_digest(h: SlackHarness) -> None:
    await h.org.admin.gql(REMIND_AFTER, {"d": 1})
    h.live.clock.set(WEEK + 7 * DAY_MS + 7 * HOUR_MS)
    owners = [await h.slack_member(f"Own{i}") for i in range(3)]
    dan = await h.slack_member("Dan")
    eve = await h.slack_member("Eve")
    mal = await h.slack_member("Mal")
    events = []
    for index, owner in enumerate(owners):  # the second also waits for Eve (any of them)
        await person_stages(h, owner, [dan, eve] if index == 1 else [dan])
        await add_record(owner.member, owner.member)
        events.append(await submit(owner.member, owner.member))
    await h.fake.wait_for("chat.postMessage", channel=dan.slack_id, count=3)
    await h.slack.command("/timesheet", "nudges digest", user=dan.slack_id)
    await h.fake.wait_for("response_url")
    h.live.clock.advance(DAY_MS + 3 * HOUR_MS)  # 10:00 the next day
    await h.bot.nudges.tick()
    await settle(h)
    [digest] = [c for c in h.fake.calls_to("chat.postMessage")
                if c.args["channel"] == dan.slack_id
                and "wait for your approval" in str(c.args.get("text"))]
    [button] = [element for block in digest.args["blocks"]
                for element in block.get("elements") or []
                if element.get("action_id") == APPROVE_ALL]
    assert button["text"]["text"] == "Approve all (3)"
    assert "3 timesheets" in button["confirm"]["text"]["text"]
    assert button["confirm"]["confirm"]["text"] == "Approve 3"
    value = buttons(digest)[APPROVE_ALL]
    assert sorted(pair[0] for pair in json.loads(value)) == sorted(
        str(e["submitId"]) for e in events)

    # Meanwhile Eve approves the second; Mal (waited on by none) clicks Dan's button.
    await approve(eve.member, str(events[1]["submitId"]))
    await h.slack.action(user=mal.slack_id, action_id=APPROVE_ALL, value=value,
                         channel="D" + mal.slack_id[1:], ts="1.0")
    [refused] = await h.fake.wait_for("chat.postEphemeral", user=mal.slack_id)
    assert refused.args["text"].startswith("You approved 0 of the 3")
    assert [(await state(h.org.admin, o.member))["status"] for o in owners] == ["s", "a", "s"]

    # A bad value: a calm answer, nothing decided.
    await h.slack.action(user=dan.slack_id, action_id=APPROVE_ALL, value='[["x", -1]]',
                         channel="D" + dan.slack_id[1:], ts="1.0")
    [bad] = await h.fake.wait_for("chat.postEphemeral", user=dan.slack_id)
    assert "not one timebot can read" in bad.args["text"]

    # Dan confirms, twice at once: each waiting one approved once, the second reported.
    answers = await asyncio.gather(*(
        h.slack.action(user=dan.slack_id, action_id=APPROVE_ALL, value=value,
                       channel="D" + dan.slack_id[1:], ts="1.0") for _ in range(2)))
    assert [a.status_code for a in answers] == [200, 200]
    receipts = (await h.fake.wait_for("chat.postEphemeral", user=dan.slack_id, count=3))[1:]
    texts = [str(r.args["text"]) for r in receipts]
    # the two clicks share the work (each decision is claimed once): two approvals in all
    counts = [int(re.match(r"You approved (\d) of the 3", text).group(1))  # type: ignore[union-attr]
              for text in texts]
    assert sum(counts) == 2, texts
    assert all("Own1" in text and "already approved" in text for text in texts), texts
    assert [(await state(h.org.admin, o.member))["status"] for o in owners] == ["a", "a", "a"]
    for owner in (owners[0], owners[2]):
        found = await h.org.admin.gql(EVENTS, {"p": owner.id, "s": WEEK, "e": WEEK_END})
        mine = [e for e in found["getApprovalEvents"] if (e.get("by") or {}).get("id") == dan.id
                and e["status"] == "a" and e["systemAction"] is None]
        assert len(mine) == 1  # approved once, as Dan


async def test_approve_all_in_the_home_tab(h: SlackHarness) -> None:
    owners = [await h.slack_member(f"Hom{i}") for i in range(2)]
    ann = await h.slack_member("Ann")
    for owner in owners:
        await person_stages(h, owner, [ann])
        await add_record(owner.member, owner.member)
        await submit(owner.member, owner.member)
    await h.fake.wait_for("chat.postMessage", channel=ann.slack_id, count=2)
    await h.slack.event({"type": "app_home_opened", "user": ann.slack_id, "tab": "home",
                         "channel": "D" + ann.slack_id[1:]})
    view = (await h.fake.wait_for("views.publish", user_id=ann.slack_id))[0].args["view"]
    [button] = [element for block in view["blocks"] for element in block.get("elements") or []
                if element.get("action_id") == APPROVE_ALL]
    assert button["text"]["text"] == "Approve all (2)"
    assert "2 timesheets" in button["confirm"]["text"]["text"]
    await h.slack.action(user=ann.slack_id, action_id=APPROVE_ALL, value=button["value"],
                         view={"id": "VHOME", "type": "home"})
    [told] = await h.fake.wait_for("chat.postEphemeral", user=ann.slack_id)
    assert told.args["text"].startswith("You approved 2 of the 2")
    assert [(await state(h.org.admin, o.member))["status"] for o in owners] == ["a", "a"]
    again = (await h.fake.wait_for("views.publish", user_id=ann.slack_id, count=2))[1]
    assert not any(b["type"] == "actions" for b in again.args["view"]["blocks"])
