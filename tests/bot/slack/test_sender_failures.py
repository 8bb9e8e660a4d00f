"""The Slack sender when Slack fails as it does in production: a call that hangs holds its
own channel only (and is given up after its timeout), and a row Slack refuses or keeps failing
is set aside — retried with a growing delay, then failed with the reason — while the rows
behind it are sent."""

from __future__ import annotations

import asyncio
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
from timebot.state.models import SlackOutgoing
from timebot.state.queue import DONE, FAILED

FAST = RateLimits(per_channel_interval=0.01, workspace_per_second=1000.0)


@pytest.fixture
async def started(
    sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
) -> AsyncIterator[SlackSender]:
    client = web_client("xoxb-test", fake.api_url)
    keep_alive(client)
    made = SlackSender(sessions, client, SYSTEM_CLOCK, FAST)
    try:
        yield made
    finally:
        for held in fake.holds:
            held.release()
        await made.worker.stop()
        await close_keep_alive(client)


async def rows_by_text(sender: SlackSender) -> dict[str, SlackOutgoing]:
    async with sender.sessions() as session:
        return {row.payload["text"]: row for row in await session.scalars(select(SlackOutgoing))}


async def until_row(sender: SlackSender, text: str, check: str) -> SlackOutgoing:
    """The row once `check` (status or last_error substring) shows; bounded."""
    for _ in range(400):
        row = (await rows_by_text(sender)).get(text)
        if row is not None and (row.status == check or check in str(row.last_error)):
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"{text}: {row.status if row else None} {row.last_error if row else ''}")


def texts(fake: FakeSlack, channel: str) -> list[str]:
    return [c.args["text"] for c in fake.calls_to("chat.postMessage")
            if c.args["channel"] == channel]


async def test_a_hung_call_holds_its_own_channel_only(
    started: SlackSender, fake: FakeSlack
) -> None:
    held = fake.hold("chat.postMessage", channel="UHUNG")
    await started.post_many([("UHUNG", "stuck", None, "h1"), ("UA", "a1", None, "a1"),
                             ("UB", "b1", None, "b1")])
    started.worker.start()
    await held.arrived.wait()
    await fake.wait_for("chat.postMessage", channel="UA")
    await fake.wait_for("chat.postMessage", channel="UB")
    # Queued while the call hangs: the other channels' new messages go (they waited for the
    # whole batch before); the hung channel's next one waits behind its first, in order.
    await started.post_many([("UA", "a2", None, "a2"), ("UC", "c1", None, "c1"),
                             ("UHUNG", "after", None, "h2")])
    await fake.wait_for("chat.postMessage", count=2, channel="UA", seconds=10)
    await fake.wait_for("chat.postMessage", channel="UC", seconds=10)
    assert texts(fake, "UHUNG") == []
    held.release()
    await fake.wait_for("chat.postMessage", count=2, channel="UHUNG")
    assert texts(fake, "UHUNG") == ["stuck", "after"]
    assert (await until_row(started, "after", DONE)).attempts == 1


async def test_a_call_hanging_past_its_timeout_is_given_up_and_retried(
    sessions: async_sessionmaker[AsyncSession], fake: FakeSlack
) -> None:
    client = web_client("xoxb-test", fake.api_url)
    keep_alive(client)
    sender = SlackSender(sessions, client, SYSTEM_CLOCK, RateLimits(
        per_channel_interval=0.01, workspace_per_second=1000.0, call_timeout=0.5))
    held = fake.hold("chat.postMessage", channel="UHUNG")
    try:
        await sender.post_many([("UHUNG", "stuck", None, "h1"), ("UHUNG", "next", None, "h2"),
                                ("UA", "a1", None, "a1")])
        sender.worker.start()
        await held.arrived.wait()
        given_up = await until_row(sender, "stuck", "TimeoutError")
        assert given_up.attempts == 1
        # Set aside: the row behind it in its channel went on meanwhile.
        await fake.wait_for("chat.postMessage", channel="UHUNG", text="next")
        await fake.wait_for("chat.postMessage", channel="UA")
        held.release()  # the abandoned request completes late (Slack may have posted it)
        done = await until_row(sender, "stuck", DONE)
        assert done.attempts == 2 and done.last_error is None
    finally:
        held.release()
        await sender.worker.stop()
        await close_keep_alive(client)


@pytest.mark.parametrize("error", ["channel_not_found", "invalid_blocks", "msg_too_long"])
async def test_a_refused_call_fails_its_row_at_once_and_the_rows_behind_it_go(
    started: SlackSender, fake: FakeSlack, error: str
) -> None:
    fake.fail("chat.postMessage", channel="UBAD", error=error, text="bad")
    await started.post_many([("UBAD", "bad", None, "x1"), ("UBAD", "behind", None, "x2"),
                             ("UOK", "ok", None, "x3")])
    started.worker.start()
    await fake.wait_for("chat.postMessage", channel="UBAD", text="behind")
    await fake.wait_for("chat.postMessage", channel="UOK")
    bad = await until_row(started, "bad", FAILED)
    assert (bad.last_error, bad.attempts) == (error, 1)
    assert len(fake.failed) == 1  # tried once: the same call would fail again
    assert (await until_row(started, "behind", DONE)).attempts == 1


@pytest.mark.parametrize(("status", "error", "body"), [
    (503, "service_unavailable", None),
    (500, None, "<html><body>Internal Server Error</body></html>"),   # not JSON
    (200, None, "ok"),                                                # a 200 that is no JSON
    (200, "internal_error", None),
    (0, None, None),                                                  # the connection drops
])
async def test_a_temporary_failure_is_retried_while_the_rows_behind_it_go(
    started: SlackSender, fake: FakeSlack, status: int, error: str | None, body: str | None
) -> None:
    fake.fail("chat.postMessage", channel="UFLAKY", status=status, error=error, body=body,
              times=2, text="first")
    await started.post_many([("UFLAKY", "first", None, "f1"),
                             ("UFLAKY", "second", None, "f2"), ("UOK", "ok", None, "f3")])
    started.worker.start()
    await fake.wait_for("chat.postMessage", channel="UFLAKY", text="second")
    await fake.wait_for("chat.postMessage", channel="UOK")
    first = await until_row(started, "first", DONE)
    assert first.attempts == 3 and first.last_error is None
    assert texts(fake, "UFLAKY") == ["second", "first"]  # set aside, then sent once


async def test_a_row_failing_every_time_is_failed_after_its_attempts(
    started: SlackSender, fake: FakeSlack
) -> None:
    started.worker.max_attempts = 2
    fake.fail("chat.postMessage", channel="UDOWN", status=502, body="Bad Gateway", times=99)
    await started.post_many([("UDOWN", "never", None, "d1"), ("UOK", "ok", None, "d2")])
    started.worker.start()
    await fake.wait_for("chat.postMessage", channel="UOK")
    failed = await until_row(started, "never", FAILED)
    assert failed.attempts == 2 and "502" in str(failed.last_error)
    assert len(fake.failed) == 2
    assert await started.pending() == 0


async def test_a_hung_call_does_not_stall_a_backlog_larger_than_a_batch(
    started: SlackSender, fake: FakeSlack
) -> None:
    """Rows over the batch are claimed as lanes finish, around the one that hangs."""
    started.worker.batch = 3
    held = fake.hold("chat.postMessage", channel="UHUNG")
    await started.post_many([("UHUNG", "stuck", None, "s")] + [
        (f"U{n}", f"m{n}", None, f"m{n}") for n in range(12)])
    started.worker.start()
    await held.arrived.wait()
    await fake.wait_for("chat.postMessage", count=12)
    assert texts(fake, "UHUNG") == []
    held.release()
    await until_row(started, "stuck", DONE)
