"""A button's value and a modal's private_metadata come back from outside: any signed request
can carry any string there. A value timebot did not write (not JSON, another shape, other
types, the ids of another organisation) is answered — an ephemeral message to the clicking
user, an error in the modal — never a traceback."""

from __future__ import annotations

import json
import uuid

import pytest

from bot.chat.approvals import Request
from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.signing import action_payload
from tests.support import new_org

BAD_VALUES = [
    "", "not json", "{", "[1, 2", "null", "42", '"text"', "{}", "[]", "[1, 2, 3]",
    json.dumps(["s", 0, "t", "p", 1, 2, 3]),               # one item too many
    json.dumps(["s", "0", "t", "p", 1, 2]),                 # a stage that is a string
    json.dumps(["s", 0.5, "t", "p", 1, 2]),                 # a float
    json.dumps(["s", True, "t", "p", 1, 2]),                # a bool
    json.dumps([None, 0, "t", "p", 1, 2]),                  # no submission id
    json.dumps(["s", 0, "t", {"id": "p"}, 1, 2]),           # an object for an id
    json.dumps(["s", -1, "t", "p", 1, 2]),                  # a negative stage
    json.dumps(["s", 0, "t", "p", 5, 2]),                   # a period ending before it starts
    json.dumps(["s" * 5000, 0, "t", "p", 1, 2]),            # too long
    "[" * 1500 + "]" * 1500,                                # nested deeper than json allows
]


@pytest.mark.parametrize("action", ["timebot_approve", "timebot_reject", "timebot_submit_now"])
async def test_a_button_value_timebot_did_not_write_is_answered(
    h: SlackHarness, action: str
) -> None:
    ann = await h.slack_member("Ann", "manager")
    channel = "D" + ann.slack_id[1:]
    for index, value in enumerate(BAD_VALUES):
        response = await h.slack.action(user=ann.slack_id, action_id=action, value=value,
                                        channel=channel, ts=f"{index}.0")
        assert response.status_code == 200
        answers = await h.fake.wait_for("chat.postEphemeral", count=index + 1,
                                        user=ann.slack_id)
        assert "not one timebot can read" in answers[-1].args["text"], value
    assert not h.fake.calls_to("views.open")


async def test_a_request_naming_another_organisations_timesheet_is_answered(
    h: SlackHarness,
) -> None:
    ann = await h.slack_member("Ann", "admin")
    other = await new_org(h.live, h.http, "Elsewhere")
    stranger = await other.add_member("Stranger", "employee")
    request = Request(uuid.uuid4().hex[:24], 0, "", stranger.id, 1_700_000_000_000,
                      1_700_604_800_000).encode()
    channel = "D" + ann.slack_id[1:]
    for index, action in enumerate(("timebot_approve", "timebot_reject")):
        await h.slack.action(user=ann.slack_id, action_id=action, value=request,
                             channel=channel, ts=f"{index}.0")
        answers = await h.fake.wait_for("chat.postEphemeral", count=index + 1,
                                        user=ann.slack_id)
        assert "no longer waiting" in answers[-1].args["text"]
    assert not h.fake.calls_to("views.open")


@pytest.mark.parametrize("metadata", [
    "", "not json", "[]", "null", json.dumps({"request": "garbage"}),
    json.dumps({"request": 5}), json.dumps({"channel": "D1"}),
    json.dumps({"request": json.dumps(["s", 0, "", "p", 1, 2]), "channel": ["D1"]}),
])
async def test_a_reject_modal_with_metadata_timebot_did_not_write_is_answered(
    h: SlackHarness, metadata: str
) -> None:
    ann = await h.slack_member("Ann", "manager")
    response = await h.slack.view_submission(
        user=ann.slack_id, callback_id="timebot_reject_reason", private_metadata=metadata,
        values={"reason": {"value": {"type": "plain_text_input", "value": "No."}}})
    assert response.status_code == 200
    answer = response.json()
    assert answer["response_action"] == "errors"
    assert "not one timebot can read" in answer["errors"]["reason"]


async def test_a_click_naming_no_action_is_answered(h: SlackHarness) -> None:
    ann = await h.slack_member("Ann", "manager")
    payload = action_payload(h.fake, user=ann.slack_id, action_id="timebot_approve",
                             channel="D" + ann.slack_id[1:], ts="1.0")
    del payload["actions"][0]["value"]
    await h.slack.interactive(payload)
    answers = await h.fake.wait_for("chat.postEphemeral", user=ann.slack_id)
    assert "not one timebot can read" in answers[0].args["text"]
