"""Socket Mode end to end: timebot started as `timebot serve` starts it (create_app, the Slack
component) with SLACK_APP_TOKEN asks the fake Web API for a socket URL with the app-level
token, connects to the fake Socket Mode server, acknowledges each envelope with its
envelope_id, and does the same work as over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shell.app import create_app
from tests.bot.slack.fake_socket_mode import FakeSocketMode
from tests.bot.slack.harness import APP_TOKEN, SlackHarness, start_slack_harness
from tests.bot.slack.signing import (
    action_payload,
    command_fields,
    event_body,
    view_submission_payload,
)
from tests.service.test_approvals_support import WEEK, add_record, manage, state
from tests.support import DAY_MS, TEST_SECRET_KEY
from timebot.config import load_settings


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def sh(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SlackHarness]:
    backend: str = request.param
    started = await start_slack_harness(
        backend, tmp_path_factory.mktemp(f"slack-socket-{backend}"), socket_mode=True)
    try:
        yield started
    finally:
        await started.stop()


def socket_of(h: SlackHarness) -> FakeSocketMode:
    assert h.socket is not None
    return h.socket


async def test_connects_with_the_app_token_and_serves_no_http_endpoint(
    sh: SlackHarness,
) -> None:
    socket = socket_of(sh)
    await socket.wait_connected()
    opened = sh.fake.calls_to("apps.connections.open")
    assert [c.args["token"] for c in opened] == [APP_TOKEN]
    assert len(socket.sockets) == 1
    response = await sh.slack.command("/timesheet", "", user="UANYONE")
    assert response.status_code == 404  # Socket Mode: no /slack/events


async def test_command_click_and_event_are_acked_by_envelope_and_handled(
    sh: SlackHarness,
) -> None:
    socket = socket_of(sh)
    sh.live.clock.set(WEEK + 3 * DAY_MS)
    mia = await sh.slack_member("Mia", role="manager")
    tom = await sh.slack_member("Tom")
    await manage(sh.org, mia.member, tom.member)
    await add_record(tom.member, tom.member, day=1, hours=3)

    # A slash command: acked with its envelope_id (no payload), then answered at response_url.
    command = command_fields(sh.fake, "/timesheet", "remind", user=mia.slack_id)
    envelope = await socket.send("slash_commands", command)
    assert await socket.ack(envelope) == {"envelope_id": envelope}
    answer = (await sh.fake.wait_for("response_url",
                                     response_key=command["response_url"].split("/")[-1]))
    assert answer[0].args["text"].startswith("Reminded 1 for") and "Tom" in answer[0].args["text"]
    dm = (await sh.fake.wait_for("chat.postMessage", channel=tom.slack_id))[0]
    assert "Mia reminds you" in dm.args["text"]
    journal = await tom.member.gql("query { getJournal { author { id } } }")
    assert any(m["author"] and m["author"]["id"] == mia.id for m in journal["getJournal"])

    # A button click (interactive): acked, submitted as Tom, the DM updated in place.
    im = "D" + tom.slack_id[1:]
    button = dm.args["blocks"][1]["elements"][0]
    click = await socket.send("interactive", action_payload(
        sh.fake, user=tom.slack_id, action_id=button["action_id"], value=button["value"],
        channel=im, ts=sh.fake.by_channel[im][-1]))
    assert await socket.ack(click) == {"envelope_id": click}
    update = (await sh.fake.wait_for("chat.update", channel=im))[0]
    assert update.args["ts"] == sh.fake.by_channel[im][-1]
    assert "Submitted your timesheet" in update.args["text"]
    assert (await state(sh.org.admin, tom.member))["status"] == "a"

    # An Events API event: acked, Tom's Home published with the week and the status.
    event = await socket.send("events_api", event_body(
        {"type": "app_home_opened", "user": tom.slack_id, "tab": "home", "channel": im}))
    assert await socket.ack(event) == {"envelope_id": event}
    home = (await sh.fake.wait_for("views.publish", user_id=tom.slack_id))[0].args["view"]
    text = "\n".join(str((b.get("text") or {}).get("text", "")) for b in home["blocks"])
    assert "Tue 03 Mar: 3h" in text and "Approved" in text
    assert socket.unexpected == []  # one ack per envelope, nothing else


async def test_an_ack_carries_the_listener_s_response(sh: SlackHarness) -> None:
    """A modal submission refused with field errors: the errors travel in the ack's payload."""
    socket = socket_of(sh)
    ann = await sh.slack_member("Ann")
    envelope = await socket.send("interactive", view_submission_payload(
        user=ann.slack_id, callback_id="timebot_link",
        values={"apikey": {"value": {"type": "plain_text_input", "value": " "}}}))
    assert await socket.ack(envelope) == {"envelope_id": envelope, "payload": {
        "response_action": "errors", "errors": {"apikey": "Paste your API key."}}}
    linked = await socket.send("interactive", view_submission_payload(
        user=ann.slack_id, callback_id="timebot_link",
        values={"apikey": {"value": {"type": "plain_text_input",
                                     "value": ann.member.apikey}}}))
    assert await socket.ack(linked) == {"envelope_id": linked}
    confirmation = await sh.fake.wait_for("chat.postMessage", channel=ann.slack_id)
    assert "Linked: you are Ann" in confirmation[0].args["text"]
    assert socket.unexpected == []


async def test_the_app_is_built_outside_an_event_loop(tmp_path: Path) -> None:
    """`timebot serve` builds the app before uvicorn starts the loop: Socket Mode must not need
    one then (slack_sdk's client binds to the running loop when it is made)."""
    settings = load_settings({
        "TIMEBOT_DATA_DIR": str(tmp_path), "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY, "SLACK_BOT_TOKEN":
        "xoxb-x", "SLACK_APP_TOKEN": APP_TOKEN, "TIMEBOT_SLACK_API_URL": "http://127.0.0.1:9/"})
    app = await asyncio.to_thread(create_app, settings)  # no event loop in that thread
    runtime = app.state.runtime
    assert runtime.settings.slack_app_token == APP_TOKEN
    await runtime.state_engine.dispose()


async def test_an_envelope_slack_never_sends_is_acked_and_handled_by_no_listener(
    sh: SlackHarness,
) -> None:
    """A payload that would be a 400 over HTTP (bot.slack.http_events.check_shape): acknowledged so
    that it is not delivered again, and dispatched to nothing."""
    socket = socket_of(sh)
    mia = await sh.slack_member("Mia")
    hostile = [
        ("slash_commands", {**command_fields(sh.fake, "/timesheet", "", user=mia.slack_id),
                            "trigger_id": "trigger.\x00nul"}),
        ("slash_commands", command_fields(sh.fake, "/timesheet", "", user="U\x01CTRL")),
        ("events_api", event_body({"type": "app_home_opened", "user": "U\x00",
                                   "tab": "home", "channel": "D0"})),
        ("interactive", {"type": "block_actions", "actions": "not a list"}),
    ]
    for kind, payload in hostile:
        envelope = await socket.send(kind, payload)
        assert await socket.ack(envelope) == {"envelope_id": envelope}, payload
    # A well-formed command after them is answered; the hostile ones were not.
    good = command_fields(sh.fake, "/timesheet", "", user=mia.slack_id)
    envelope = await socket.send("slash_commands", good)
    await socket.ack(envelope)
    await sh.fake.wait_for("response_url", response_key=good["response_url"].split("/")[-1])
    for kind, payload in hostile[:2]:
        key = str(payload["response_url"]).split("/")[-1]
        assert not [call for call in sh.fake.calls_to("response_url")
                    if call.args.get("response_key") == key], kind
    assert not [call for call in sh.fake.calls_to("views.publish")
                if "\x00" in str(call.args.get("user_id"))]
    assert socket.unexpected == []
