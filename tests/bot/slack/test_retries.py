"""Slack retries a request whose ack was slow (X-Slack-Retry-Num, the same event_id): the
retry changes nothing, also when it reaches a restarted timebot on the same database."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.slack.dedup import request_key
from tests.bot.slack.harness import BOT_TOKEN, SIGNING_SECRET, SlackHarness, start_slack_harness
from tests.bot.slack.signing import action_payload, command_fields, event_body
from tests.bot.slack.test_approvals import submitted
from tests.support import GQL, start_live_server, stop_live_server

MESSAGES = "query($r: SvcReferenceInput!) { getMessages(of: $r) { content } }"


async def until_true(condition: Callable[[], Awaitable[bool]], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, "not within the deadline"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_retried_event_posts_one_journal_message_also_after_a_restart(
    backend: str, tmp_path: Path
) -> None:
    h = await start_slack_harness(backend, tmp_path)
    try:
        _owner, (ann,), event, _dms = await submitted(h, approvers=1)
        im = "D" + ann.slack_id[1:]
        thread_ts = h.fake.by_channel[im][-1]
        reference = {"id": event["id"], "type": "approvalEvent"}

        def reply(text: str) -> bytes:
            return json.dumps(event_body({
                "type": "message", "channel": im, "channel_type": "im",
                "user": ann.slack_id, "text": text, "ts": f"{time.time():.6f}",
                "thread_ts": thread_ts})).encode()

        async def contents(gql: GQL) -> list[str]:
            thread = (await gql.body(MESSAGES, {"r": reference}))["data"]["getMessages"]
            return [str(m["content"]) for m in thread]

        async def settled(gql: GQL, marker: str) -> list[str]:
            """The thread once a later reply (`marker`) and the question are in. Slack's
            events are handled after their acks, each on its own, so the marker may land
            first; but of the question's deliveries only one got past the deduplication
            before its ack, so once the question is in, no other copy of it is on the way."""
            response = await h.slack.post(reply(marker), "application/json")
            assert response.status_code == 200
            found: list[str] = []

            async def marker_in() -> bool:
                found[:] = await contents(gql)
                return marker in found and "Why 5 hours on Tuesday?" in found

            await until_true(marker_in, seconds=20)
            return found

        body = reply("Why 5 hours on Tuesday?")
        first = await h.slack.post(body, "application/json")
        retry = await h.slack.post(body, "application/json", headers={
            "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
        assert (first.status_code, retry.status_code) == (200, 200)
        seen = await settled(h.org.admin.gql, "marker one")
        assert seen.count("Why 5 hours on Tuesday?") == 1

        # Restarted on the same databases: Slack's next retry is still the same event.
        databases, h.live.databases = h.live.databases, []
        await stop_live_server(h.live)
        h.live = await start_live_server(
            backend, tmp_path, reuse_databases=databases,
            extra_env={"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                       "TIMEBOT_SLACK_API_URL": h.fake.api_url})
        h.slack.url = f"{h.live.base_url}/slack/events"
        again = await h.slack.post(body, "application/json", headers={
            "X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_timeout"})
        assert again.status_code == 200
        admin = GQL(h.http, h.live.graphql_url, h.org.admin.apikey)
        seen = await settled(admin, "marker two")
        assert seen.count("Why 5 hours on Tuesday?") == 1
        assert seen.count("marker one") == 1
    finally:
        await h.stop()


async def test_a_retried_slash_command_and_click_are_answered_once(h: SlackHarness) -> None:
    sam = await h.slack_member("Sam")
    fields = command_fields(h.fake, "/timesheet", "", user=sam.slack_id)
    click = action_payload(h.fake, user=sam.slack_id, action_id="timebot_link_open")
    for retry in ("", "1"):
        headers = {"X-Slack-Retry-Num": retry} if retry else {}
        assert (await h.slack.form(fields, headers=headers)).status_code == 200
        assert (await h.slack.interactive(click, headers=headers)).status_code == 200
    # A later command and click: once they are answered, so would the retries have been.
    await h.slack.command("/timesheet", "", user=sam.slack_id)
    await h.slack.action(user=sam.slack_id, action_id="timebot_link_open")
    await h.fake.wait_for("response_url", count=2)
    await h.fake.wait_for("views.open", count=2)
    assert len(h.fake.calls_to("response_url")) == 2
    assert len(h.fake.calls_to("views.open")) == 2


def test_the_key_of_each_kind_of_request() -> None:
    """What makes a request the same as its retry: an event's id, a click's action and
    trigger, a command's trigger; nothing for requests that carry none."""
    class Fake:
        def response_url(self, key: str) -> str:
            return f"http://fake/{key}"

    fake: Any = Fake()
    event = event_body({"type": "message", "text": "x"})
    assert request_key(event) == f"event:{event['event_id']}"
    click = action_payload(fake, user="U1", action_id="timebot_approve", value="v")
    action = click["actions"][0]
    assert request_key(click) == (
        f"action:timebot_approve:{action['action_ts']}:{click['trigger_id']}")
    command = command_fields(fake, "/time", "2h", user="U1")
    assert request_key(dict(command)) == f"command:{command['trigger_id']}"
    assert request_key({"type": "url_verification", "challenge": "c"}) is None
