"""Approvals in Slack, end to end: the service's events reach the running app, approvers get
DMs from the (fake) Slack Web API, signed button clicks and modal submissions decide as the
approver, and every message showing the request is updated in place into its outcome."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.bot.slack.fake_slack import Call
from tests.bot.slack.harness import SlackHarness, SlackMember
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    approve,
    state,
    submit,
)

EVENTS = ("query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
          "getApprovalEvents(personId: $p, startTime: $s, endTime: $e) { id status by { id } "
          "systemAction } }")


async def person_stages(h: SlackHarness, owner: SlackMember, approvers: list[SlackMember],
                        quorum: str = "any") -> None:
    await h.org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.id, "s": [{"type": "person", "personIds": [a.id for a in approvers],
                                "quorum": quorum}]},
    )


def buttons(call: Call) -> dict[str, str]:
    found: dict[str, str] = {}
    for block in call.args.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("type") == "button":
                found[element["action_id"]] = element.get("value", "")
    return found


def text_of(call: Call) -> str:
    parts = [str(call.args.get("text", ""))]
    for block in call.args.get("blocks") or []:
        text = block.get("text")
        if isinstance(text, dict):
            parts.append(str(text.get("text", "")))
    return "\n".join(parts)


async def submitted(h: SlackHarness, quorum: str = "any", approvers: int = 2) -> tuple[
        SlackMember, list[SlackMember], dict[str, Any], list[Call]]:
    owner = await h.slack_member("Sam")
    deciders = [await h.slack_member(f"Appr{i}") for i in range(approvers)]
    await person_stages(h, owner, deciders, quorum)
    await add_record(owner.member, owner.member, day=0, hours=3)
    await add_record(owner.member, owner.member, day=1, hours=5)
    event = await submit(owner.member, owner.member)
    dms = []
    for approver in deciders:
        dms += await h.fake.wait_for("chat.postMessage", channel=approver.slack_id)
    return owner, deciders, event, dms


async def test_request_dm_then_double_click_decides_once_and_updates_everywhere(
    h: SlackHarness,
) -> None:
    owner, (ann, bob), _event, dms = await submitted(h)
    first = dms[0]
    assert "Sam" in text_of(first) and "8h" in text_of(first).replace(" ", "")
    assert set(buttons(first)) == {"timebot_approve", "timebot_reject"}
    value = buttons(first)["timebot_approve"]
    channel = "D" + ann.slack_id[1:]
    # A double click: two signed requests at once.
    answers = await asyncio.gather(*(
        h.slack.action(user=ann.slack_id, action_id="timebot_approve", value=value,
                       channel=channel, ts="1.0") for _ in range(2)))
    assert [a.status_code for a in answers] == [200, 200]
    updates = await h.fake.wait_for("chat.update", count=2)
    assert all("Approved by Appr0" in text_of(u) for u in updates)
    assert {u.args["channel"] for u in updates} == {
        "D" + ann.slack_id[1:], "D" + bob.slack_id[1:]}
    current = await state(h.org.admin, owner.member)
    assert current["status"] == "a"
    events = (await h.org.admin.gql(EVENTS, {"p": owner.id, "s": WEEK, "e": WEEK_END}))
    approvals = [e for e in events["getApprovalEvents"] if (e.get("by") or {}).get("id") == ann.id
                 and e["status"] == "a" and e["systemAction"] is None]
    assert len(approvals) == 1  # one approval by Ann, not two
    # The second click of the double click got a calm ephemeral answer, not an error.
    ephemerals = await h.fake.wait_for("chat.postEphemeral", user=ann.slack_id)
    assert "already" in ephemerals[0].args["text"]
    # Bob clicks his stale message: an ephemeral reason, nothing decided.
    bob_value = buttons(dms[1])["timebot_approve"]
    await h.slack.action(user=bob.slack_id, action_id="timebot_approve", value=bob_value,
                         channel="D" + bob.slack_id[1:], ts="2.0")
    refusal = await h.fake.wait_for("chat.postEphemeral", user=bob.slack_id)
    assert "already approved" in refusal[0].args["text"]
    assert len(h.fake.calls_to("chat.update")) == 2


async def test_reject_needs_a_reason_in_the_modal(h: SlackHarness) -> None:
    owner, (ann,), _event, dms = await submitted(h, approvers=1)
    value = buttons(dms[0])["timebot_reject"]
    await h.slack.action(user=ann.slack_id, action_id="timebot_reject", value=value,
                         channel="D" + ann.slack_id[1:], ts="1.0")
    opened = await h.fake.wait_for("views.open")
    view = opened[0].args["view"]
    assert view["callback_id"] == "timebot_reject_reason"
    empty = await h.slack.view_submission(
        user=ann.slack_id, callback_id=view["callback_id"],
        private_metadata=view["private_metadata"],
        values={"reason": {"value": {"type": "plain_text_input", "value": "  "}}})
    assert empty.status_code == 200
    assert empty.json() == {"response_action": "errors",
                            "errors": {"reason": "A reason is required."}}
    assert (await state(h.org.admin, owner.member))["status"] == "s"
    done = await h.slack.view_submission(
        user=ann.slack_id, callback_id=view["callback_id"],
        private_metadata=view["private_metadata"],
        values={"reason": {"value": {"type": "plain_text_input", "value": "Tuesday is wrong"}}})
    assert done.status_code == 200 and not done.content
    assert (await state(h.org.admin, owner.member))["status"] == "r"
    update = await h.fake.wait_for("chat.update")
    assert "Rejected by Appr0" in text_of(update[0]) and "Tuesday is wrong" in text_of(update[0])


async def test_decision_elsewhere_updates_the_dm_and_outsiders_get_a_reason(
    h: SlackHarness,
) -> None:
    owner, (ann,), event, dms = await submitted(h, approvers=1)
    # Someone not an approver clicks (e.g. a forwarded message): an ephemeral reason.
    eve = await h.slack_member("Eve")
    value = buttons(dms[0])["timebot_approve"]
    await h.slack.action(user=eve.slack_id, action_id="timebot_approve", value=value,
                         channel="C0GENERAL", ts="1.0")
    refusal = await h.fake.wait_for("chat.postEphemeral", user=eve.slack_id)
    assert "not an approver" in refusal[0].args["text"]
    assert (await state(h.org.admin, owner.member))["status"] == "s"
    # Approved on the web (GraphQL): the DM becomes the outcome all the same.
    await approve(ann.member, event["id"])
    update = await h.fake.wait_for("chat.update")
    assert "Approved by Appr0" in text_of(update[0])
    assert update[0].args["ts"] == (await h.bot.deps.sender.sent_with_ref(
        f"approval:{event['id']}:"))[0].ts


async def test_two_stages_all_quorum(h: SlackHarness) -> None:
    owner, (ann, bob), event, dms = await submitted(h, quorum="all")
    value = buttons(dms[0])["timebot_approve"]
    await h.slack.action(user=ann.slack_id, action_id="timebot_approve", value=value,
                         channel="D" + ann.slack_id[1:], ts="1.0")
    update = await h.fake.wait_for("chat.update")
    assert update[0].args["channel"] == "D" + ann.slack_id[1:]
    assert (await state(h.org.admin, owner.member))["status"] == "s"
    # Bob was not asked twice (posts to others, e.g. an earlier test's owner notice, aside).
    asked = [c for c in h.fake.calls_to("chat.postMessage")
             if c.args.get("channel") in (ann.slack_id, bob.slack_id)]
    assert len(asked) == 2
    await h.slack.action(user=bob.slack_id, action_id="timebot_approve",
                         value=buttons(dms[1])["timebot_approve"],
                         channel="D" + bob.slack_id[1:], ts="2.0")
    await h.fake.wait_for("chat.update", count=2)
    assert (await state(h.org.admin, owner.member))["status"] == "a"
    assert json.loads(value)[0] == event["id"]


async def test_resubmission_shows_what_changed_since_the_rejection(h: SlackHarness) -> None:
    owner, (ann,), event, dms = await submitted(h, approvers=1)
    await ann.member.gql(
        "mutation($id: SvcId!) { rejectTimesheet(id: $id, stage: 0, comment: \"Tue?\") "
        "{ id } }", {"id": event["id"]})
    await h.fake.wait_for("chat.update")
    await add_record(owner.member, owner.member, day=2, hours=1)
    again = await submit(owner.member, owner.member)
    assert again["id"] != event["id"]
    dms = await h.fake.wait_for("chat.postMessage", count=2, channel=ann.slack_id)
    assert "Changed since the rejection:* 1 added" in text_of(dms[1])
    assert "Total 9h" in text_of(dms[1])
    assert json.loads(buttons(dms[1])["timebot_approve"])[0] == again["id"]
