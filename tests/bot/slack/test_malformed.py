"""What reaches /slack/events that the manifest did not ask for: malformed bodies of every
shape (signed or not) are answered 400 with one log line, never a 500; `app_rate_limited`
(Slack telling us it dropped events) is answered 200."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.slack.dedup import request_key
from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.signing import (
    action_payload,
    command_fields,
    event_body,
    sign,
    view_submission_payload,
)

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"

SHAPES: list[tuple[str, bytes, str]] = [
    ("not json", b"{not json", JSON),
    ("json list", b"[1, 2, 3]", JSON),
    ("json string", b'"event_callback"', JSON),
    ("json number", b"42", JSON),
    ("json null", b"null", JSON),
    ("payload not json", urlencode({"payload": "{oops"}).encode(), FORM),
    ("payload a list", urlencode({"payload": "[1]"}).encode(), FORM),
    ("payload a string", urlencode({"payload": '"x"'}).encode(), FORM),
    ("payload empty", urlencode({"payload": ""}).encode(), FORM),
    ("form not utf-8", b"payload=\xff\xfe%ZZ", FORM),
    ("json not utf-8", b'{"type": "\xff"}', JSON),
    ("json as form", json.dumps({"type": "event_callback"}).encode(), FORM),
    ("form as json", b"command=%2Ftimesheet&text=x", JSON),
    ("text/plain", b"hello", "text/plain"),
    ("no content type", b"{}", ""),
    ("empty", b"", JSON),
    ("empty form", b"", FORM),
    ("missing type", b'{"event": {"type": "message"}}', JSON),
    ("type not a string", b'{"type": ["event_callback"], "event_id": "E1"}', JSON),
    ("event not an object", b'{"type": "event_callback", "event": "x", "event_id": "E2"}',
     JSON),
    ("event_id a list", b'{"type": "event_callback", "event": {}, "event_id": [1]}', JSON),
    ("actions not a list", json.dumps({"payload": ""}).encode(), JSON),
    ("block_actions garbage", urlencode({"payload": json.dumps(
        {"type": "block_actions", "actions": "x", "user": 5})}).encode(), FORM),
    ("view_submission garbage", urlencode({"payload": json.dumps(
        {"type": "view_submission", "view": [1], "user": None})}).encode(), FORM),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, JSON),
]


@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
@pytest.mark.parametrize(("name", "body", "kind"), SHAPES, ids=[s[0] for s in SHAPES])
async def test_a_malformed_body_is_answered_without_a_500(
    h: SlackHarness, name: str, body: bytes, kind: str, signed: bool
) -> None:
    headers = {"Content-Type": kind} if kind else {}
    if signed:
        headers.update(sign(h.slack.secret, body))
    response = await h.http.post(h.slack.url, content=body, headers=headers)
    assert response.status_code < 500, (name, response.status_code, response.text[:300])
    # Whoever is not Slack learns nothing about the body; Slack's own malformed ones: 400.
    assert response.status_code == (400 if signed else 401), name


async def test_a_huge_body_is_refused(h: SlackHarness) -> None:
    body = b'{"type": "event_callback", "x": "' + b"a" * (8 * 1024 * 1024) + b'"}'
    response = await h.http.post(h.slack.url, content=body, headers={
        "Content-Type": JSON, **sign(h.slack.secret, body)})
    assert response.status_code == 413


async def test_app_rate_limited_is_answered_200(h: SlackHarness) -> None:
    body = json.dumps({"token": "legacy", "type": "app_rate_limited", "team_id": "T0TIMEBOT",
                       "minute_rate_limited": 1518467820, "api_app_id": "A0TIMEBOT"}).encode()
    response = await h.slack.post(body, JSON)
    assert response.status_code == 200


GARBAGE_STATES: list[object] = [[1], "x", {"values": [1]}, {"values": {"reason": [1]}},
                                {"values": {"reason": {"value": "x"}}},
                                {"values": {"entry": {"value": {"value": 5}}}},
                                {"values": {"apikey": {"value": None}}}]


@pytest.mark.parametrize("callback", ["timebot_reject_reason", "timebot_link",
                                      "timebot_time_edit_view"])
async def test_a_modal_submission_of_any_shape_is_answered_without_a_500(
    h: SlackHarness, callback: str
) -> None:
    for state in GARBAGE_STATES:
        payload = view_submission_payload(user="UNOBODY", callback_id=callback, values={})
        payload["view"]["state"] = state
        response = await h.slack.interactive(payload)
        assert response.status_code < 500, (callback, state, response.text[:300])


async def test_identifiers_with_a_nul_are_refused_as_malformed(h: SlackHarness) -> None:
    """Signed requests whose team, user, channel, event, trigger or action identifiers carry a
    NUL: 400, as any body Slack does not send (a slash command's trigger_id with a NUL was a
    500 on PostgreSQL: the deduplication's insert); an ordinary command after them is
    answered."""
    nul = "\x00"
    fields = command_fields(h.slack.fake, "/time", "2h x", user="UNUL")
    for key in ("team_id", "user_id", "channel_id", "api_app_id", "trigger_id"):
        response = await h.slack.form({**fields, key: fields[key] + nul})
        assert response.status_code == 400, (key, response.status_code, response.text[:300])
    events: list[dict[str, Any]] = [
        {"type": "app_home_opened", "user": "U" + nul, "tab": "home"},
        {"type": "message", "channel_type": "im", "user": "UNUL", "text": "hi",
         "channel": "D" + nul, "ts": "1.2"},
    ]
    for event in events:
        response = await h.slack.post(json.dumps(event_body(event)).encode(), JSON)
        assert response.status_code == 400, (event, response.text[:300])
    body = event_body({"type": "app_home_opened", "user": "UNUL", "tab": "home"})
    for key in ("team_id", "event_id"):
        sent = {**body, key: str(body[key]) + nul}
        response = await h.slack.post(json.dumps(sent).encode(), JSON)
        assert response.status_code == 400, (key, response.text[:300])
    clicked = action_payload(h.slack.fake, user="UNUL", action_id="timebot_approve" + nul,
                             value="x", channel="CNUL", ts="1.2")
    response = await h.slack.interactive(clicked)
    assert response.status_code == 400, response.text[:300]
    response = await h.slack.form(command_fields(h.slack.fake, "/time", "help", user="UHELP"))
    assert response.status_code == 200


def test_a_deduplication_key_no_column_takes_is_its_hash() -> None:
    """Socket Mode's requests skip the HTTP checks: a key with a NUL or a lone surrogate is
    stored as its hash (the same for a retry), a printable one as it is."""
    command = {"command": "/time", "trigger_id": "123.456.abc"}
    assert request_key(command) == "command:123.456.abc"
    for trigger in ("12\x003", "12\ud8003"):
        key = request_key({**command, "trigger_id": trigger})
        assert key is not None and key.startswith("sha256:") and len(key) == 71
        assert key == request_key({**command, "trigger_id": trigger})
        assert key != request_key({**command, "trigger_id": trigger + "4"})
