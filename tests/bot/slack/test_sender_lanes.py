"""The Slack sender's lanes (timebot.state.lanes) against the fake Slack Web API, on SQLite and
PostgreSQL, the pace kept on a clock the test moves: an answer queued behind 100 review DMs
is among the next few calls, not the 101st; under a stream of answers, bulk DMs still go;
every message once, each channel's posts at least the interval apart."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.slack.app import close_keep_alive, keep_alive, web_client
from bot.slack.pacing import RateLimits, bulk_at_once
from bot.slack.sender import SlackSender
from plumbing.clock import SYSTEM_CLOCK
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.sender_fixtures import fake_slack, state_sessions  # noqa: F401
from tests.bot.slack.virtual_time import VirtualClock

LIMITS = RateLimits(per_channel_interval=1.0, workspace_per_second=10.0)


def posts(fake: FakeSlack) -> list[str]:
    return [str(call.args["text"]) for call in fake.calls_to("chat.postMessage")]


async def drive(clock: VirtualClock, until: Callable[[], bool], seconds: float = 60.0) -> None:
    """Move the pace clock whenever a lane sleeps on it, until `until()`."""
    deadline = time.monotonic() + seconds
    while not until():
        assert time.monotonic() < deadline, "not within the deadline"
        if clock.sleeping:
            clock.advance()
        await asyncio.sleep(0.002)


@asynccontextmanager
async def paced_sender(sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
                       ) -> AsyncIterator[tuple[SlackSender, VirtualClock]]:
    """A sender on the fake Slack, which refuses (429) a channel's calls closer than the
    interval; the pace kept on a clock the test moves."""
    clock = VirtualClock()
    fake.clock = clock.now
    fake.enforce_channel_rate(LIMITS.per_channel_interval)
    client = web_client("xoxb-test", fake.api_url)
    keep_alive(client)
    sender = SlackSender(sessions, client, SYSTEM_CLOCK, LIMITS, pace_clock=clock)
    try:
        yield sender, clock
    finally:
        await sender.worker.stop()
        await close_keep_alive(client)


async def test_an_answer_goes_ahead_of_100_review_dms(
    sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
) -> None:
    reviews = [(f"U{n}", f"review {n}", None, f"review:{n}") for n in range(100)]
    async with paced_sender(sessions, fake) as (sender, clock):
        assert await sender.post_many(reviews) == 100
        sender.worker.start()
        await drive(clock, lambda: len(posts(fake)) >= 5)
        before = len(posts(fake))
        assert await sender.post("UASKER", "answer", key=None)
        await drive(clock, lambda: "answer" in posts(fake))
        assert posts(fake).index("answer") <= before + bulk_at_once(LIMITS) + 1
        await drive(clock, lambda: len(posts(fake)) == 101)
    assert sorted(posts(fake)) == sorted(["answer", *(text for _c, text, _b, _k in reviews)])
    assert not fake.rate_limited  # the per-channel pace held


async def test_bulk_dms_go_under_a_stream_of_answers(
    sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
) -> None:
    asked = itertools.count()
    async with paced_sender(sessions, fake) as (sender, clock):
        assert await sender.post_many(
            [(f"U{n}", f"review {n}", None, f"review:{n}") for n in range(20)]) == 20
        sender.worker.start()
        # Always more answers waiting than the workspace's pace sends (each its own channel).
        while sum(text.startswith("review") for text in posts(fake)) < 3:
            for _ in range(15):
                n = next(asked)
                await sender.post(f"UA{n}", f"answer {n}", key=None)
            await drive(clock, lambda n=n: f"answer {n - 10}" in posts(fake))
    texts = posts(fake)
    assert len(texts) == len(set(texts))  # each once
    assert not fake.rate_limited
