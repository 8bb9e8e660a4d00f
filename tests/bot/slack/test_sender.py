"""The durable sender on its own, against the fake Slack Web API: many posts queued in one
statement (each dedupe key once), every message delivered exactly once, in order within its
channel, within the per-channel pace, a 429's Retry-After waited out; the outcomes (Slack's
channel and ts) recorded for each row by the batched flush."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.slack.app import close_keep_alive, keep_alive, web_client
from bot.slack.pacing import RateLimits
from bot.slack.sender import SlackSender
from plumbing.clock import SYSTEM_CLOCK
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.sender_fixtures import fake_slack, state_sessions  # noqa: F401
from tests.bot.slack.virtual_time import VirtualClock
from timebot.state.models import SlackOutgoing
from timebot.state.queue import DONE

LIMITS = RateLimits(per_channel_interval=0.2, workspace_per_second=40.0)


@pytest.fixture
async def sender(
    sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
) -> AsyncIterator[SlackSender]:
    client = web_client("xoxb-test", fake.api_url)
    keep_alive(client)
    made = SlackSender(sessions, client, SYSTEM_CLOCK, LIMITS)
    try:
        yield made
    finally:
        await made.worker.stop()
        await close_keep_alive(client)


async def test_post_many_queues_each_key_once(sender: SlackSender) -> None:
    added = await sender.post_many([
        ("U1", "one", None, "k1"), ("U2", "two", None, "k2"), ("U1", "one again", None, "k1"),
        ("U3", "no key", None, None), ("U3", "no key either", None, None),
    ])
    assert added == 4
    assert await sender.post_many([("U1", "later", None, "k1"), ("U4", "new", None, "k4")]) == 1
    assert await sender.post_many([]) == 0
    assert await sender.pending() == 5
    async with sender.sessions() as session:
        payloads = list(await session.scalars(select(SlackOutgoing.payload)))
    assert sorted(p["text"] for p in payloads) == ["new", "no key", "no key either", "one",
                                                    "two"]


async def test_each_message_once_in_channel_order_within_the_limits(
    sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
) -> None:
    """The pace is kept on a clock the test moves (tests/bot/slack/virtual_time.py), which also
    stamps the fake's calls: a loaded machine delaying one request on the wire cannot make
    two of a channel's posts look closer than the pacer spaced them (it did: a third 429)."""
    clock = VirtualClock()
    fake.clock = clock.now
    client = web_client("xoxb-test", fake.api_url)
    keep_alive(client)
    sender = SlackSender(sessions, client, SYSTEM_CLOCK, LIMITS, pace_clock=clock)
    fake.enforce_channel_rate(LIMITS.per_channel_interval)
    fake.rate_limit("chat.postMessage", times=2, retry_after=1)
    messages = [(f"U{c}", f"{c}:{n}", None, f"m:{c}:{n}") for n in range(4) for c in range(3)]
    messages += [(f"U{c}", f"{c}:0", None, f"m:{c}:0") for c in range(3, 11)]
    try:
        assert await sender.post_many(messages) == len(messages)

        def busy() -> int:
            """Channels with a message not delivered yet."""
            delivered = Counter(c.args["channel"] for c in fake.calls_to("chat.postMessage"))
            wanted = Counter(channel for channel, *_ in messages)
            return sum(1 for channel, n in wanted.items() if delivered[channel] < n)

        sender.worker.start()
        await clock.drive(busy)
        posts = await fake.wait_for("chat.postMessage", count=len(messages))
        for _ in range(100):  # the outcomes are written by the next flush
            if not await sender.pending():
                break
            await asyncio.sleep(0.05)
        assert await sender.pending() == 0
    finally:
        await sender.worker.stop()
        await close_keep_alive(client)

    assert sorted(p.args["text"] for p in posts) == sorted(m[1] for m in messages)
    for channel in range(3):
        mine = [p for p in posts if p.args["channel"] == f"U{channel}"]
        assert [p.args["text"] for p in mine] == [f"{channel}:{n}" for n in range(4)]
        # Never over the limit: a channel's posts at least the interval apart.
        assert all(b.at - a.at >= LIMITS.per_channel_interval - 1e-9
                   for a, b in itertools.pairwise(mine))
    # Only the two 429s asked for: the per-channel pace held, Retry-After was waited out.
    assert len(fake.rate_limited) == 2
    async with sender.sessions() as session:
        rows = list(await session.scalars(select(SlackOutgoing)))
    assert {row.status for row in rows} == {DONE}
    shown = {(channel, ts): message["text"] for (channel, ts), message in fake.messages.items()}
    assert {(row.channel_id, row.ts): row.payload["text"] for row in rows} == shown
    assert all(row.lease_owner is None for row in rows)
