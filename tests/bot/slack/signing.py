"""Requests signed like Slack's (v0 HMAC-SHA256 of `v0:<timestamp>:<body>`), and the bodies Slack
sends (slash commands, block actions, view submissions, events; Socket Mode sends the same
bodies as envelope payloads).

    slack = SlackRequests(http, f"{live.base_url}/slack/events", SECRET, fake)
    response = await slack.command("/timesheet", "remind", user="U1")
    await slack.action(user="U1", action_id="approve", value="...", channel="D1", ts="...")
    await slack.view_submission(user="U1", callback_id="...", values={...})
    await slack.event({"type": "message", ...})
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.bot.slack.fake_slack import TEAM_ID, FakeSlack


def sign(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack adds: X-Slack-Request-Timestamp and X-Slack-Signature."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + ts.encode() + b":" + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def command_fields(fake: FakeSlack, command: str, text: str, *, user: str,
                   channel: str = "C0GENERAL") -> dict[str, str]:
    """A slash command as Slack sends it (form fields over HTTP, the payload in Socket Mode)."""
    key = uuid.uuid4().hex[:8]
    return {
        "token": "legacy", "team_id": TEAM_ID, "team_domain": "test",
        "channel_id": channel, "channel_name": "general", "user_id": user,
        "user_name": user.lower(), "command": command, "text": text,
        "api_app_id": "A0TIMEBOT", "is_enterprise_install": "false",
        "response_url": fake.response_url(key), "trigger_id": f"trigger.{key}",
    }


def action_payload(
    fake: FakeSlack, *, user: str, action_id: str, value: str = "", channel: str | None = None,
    ts: str | None = None, block_id: str = "b", view: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A button click (`block_actions`) in a message (channel, ts) or a view."""
    key = uuid.uuid4().hex[:8]
    payload: dict[str, Any] = {
        "type": "block_actions", "team": {"id": TEAM_ID}, "user": {"id": user},
        "api_app_id": "A0TIMEBOT", "trigger_id": f"trigger.{key}",
        "response_url": fake.response_url(key),
        "actions": [{"type": "button", "action_id": action_id, "block_id": block_id,
                     "value": value, "action_ts": str(time.time())}],
    }
    if channel is not None:
        payload["channel"] = {"id": channel}
        payload["container"] = {"type": "message", "channel_id": channel,
                                "message_ts": ts or ""}
        payload["message"] = {"ts": ts or "", "text": ""}
    if view is not None:
        payload["view"] = view
        payload["container"] = {"type": "view", "view_id": view.get("id", "V1")}
    return payload


def view_submission_payload(
    *, user: str, callback_id: str, values: dict[str, dict[str, Any]],
    private_metadata: str = "",
) -> dict[str, Any]:
    """`values`: {block_id: {action_id: {"type": ..., "value": ...}}}."""
    return {
        "type": "view_submission", "team": {"id": TEAM_ID}, "user": {"id": user},
        "api_app_id": "A0TIMEBOT", "trigger_id": f"trigger.{uuid.uuid4().hex[:8]}",
        "view": {"id": "V1", "type": "modal", "callback_id": callback_id,
                 "private_metadata": private_metadata, "state": {"values": values}},
    }


def event_body(event: dict[str, Any]) -> dict[str, Any]:
    """An Events API `event_callback` around `event`."""
    return {
        "token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0TIMEBOT",
        "event": {"event_ts": str(time.time()), **event}, "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM_ID, "user_id": "UBOT", "is_bot": True}],
    }


@dataclass
class SlackRequests:
    http: httpx.AsyncClient
    url: str
    secret: str
    fake: FakeSlack

    async def post(self, body: bytes, content_type: str, *, timestamp: int | None = None,
                   secret: str | None = None,
                   headers: dict[str, str] | None = None) -> httpx.Response:
        """`headers`: more of them, e.g. Slack's X-Slack-Retry-Num on a retry."""
        headers = {"Content-Type": content_type, **sign(secret or self.secret, body, timestamp),
                   **(headers or {})}
        return await self.http.post(self.url, content=body, headers=headers)

    async def form(self, fields: dict[str, str], **kwargs: Any) -> httpx.Response:
        return await self.post(urlencode(fields).encode(), "application/x-www-form-urlencoded",
                               **kwargs)

    async def command(self, command: str, text: str, *, user: str, channel: str = "C0GENERAL",
                      **kwargs: Any) -> httpx.Response:
        return await self.form(command_fields(self.fake, command, text, user=user,
                                              channel=channel), **kwargs)

    async def interactive(self, payload: dict[str, Any], **kwargs: Any) -> httpx.Response:
        return await self.form({"payload": json.dumps(payload)}, **kwargs)

    async def action(
        self, *, user: str, action_id: str, value: str = "", channel: str | None = None,
        ts: str | None = None, block_id: str = "b", view: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        return await self.interactive(action_payload(
            self.fake, user=user, action_id=action_id, value=value, channel=channel, ts=ts,
            block_id=block_id, view=view), **kwargs)

    async def view_submission(
        self, *, user: str, callback_id: str, values: dict[str, dict[str, Any]],
        private_metadata: str = "", **kwargs: Any,
    ) -> httpx.Response:
        """`values`: {block_id: {action_id: {"type": ..., "value": ...}}}."""
        return await self.interactive(view_submission_payload(
            user=user, callback_id=callback_id, values=values,
            private_metadata=private_metadata), **kwargs)

    async def event(self, event: dict[str, Any], **kwargs: Any) -> httpx.Response:
        return await self.post(json.dumps(event_body(event)).encode(), "application/json",
                               **kwargs)
