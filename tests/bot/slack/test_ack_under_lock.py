"""Slack's 3 s: a signed request is acknowledged while the bot's database cannot be written
(a fan-out holding SQLite's write lock; on PostgreSQL a lock on the table of requests
taken), and its work, answer included, comes once the database can be written again, once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlparse

from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.signing import command_fields, event_body
from tests.pg import PG_ADMIN_DSN

ACK_WITHIN_SECONDS = 10.0  # far over what an ack takes: only a wait for the lock reaches it


@asynccontextmanager
async def writes_held(h: SlackHarness) -> AsyncIterator[None]:
    """Another connection holds what a write of the bot's database needs, until the end."""
    url = h.live.settings.database_url
    if h.live.backend == "sqlite":
        holder = sqlite3.connect(url.split(":///", 1)[1], isolation_level=None, timeout=0)
        holder.execute("BEGIN IMMEDIATE")  # the write lock: every other writer waits
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    import asyncpg

    database = urlparse(url).path.lstrip("/")
    connection = await asyncpg.connect(PG_ADMIN_DSN.rsplit("/", 1)[0] + "/" + database)
    transaction = connection.transaction()
    await transaction.start()
    # EXCLUSIVE: reads go on, every write of the table waits.
    await connection.execute("LOCK TABLE slack_received IN EXCLUSIVE MODE")
    try:
        yield
    finally:
        await transaction.rollback()
        await connection.close()


async def test_a_command_is_acknowledged_while_the_database_is_locked_and_answered_once(
    h: SlackHarness,
) -> None:
    sam = await h.slack_member("Lockwood")
    fields = command_fields(h.fake, "/timesheet", "", user=sam.slack_id)
    async with writes_held(h):
        response = await asyncio.wait_for(h.slack.form(fields), ACK_WITHIN_SECONDS)
        assert response.status_code == 200
        # Its work waits until the request is recorded as taken: not yet.
        assert h.fake.calls_to("response_url") == []
        # A copy arriving meanwhile is acknowledged too (and not acted on: below).
        copy = await asyncio.wait_for(h.slack.form(fields), ACK_WITHIN_SECONDS)
        assert copy.status_code == 200
    await h.fake.wait_for("response_url")
    # A copy after it changes nothing; a later command, once answered, shows none came.
    assert (await h.slack.form(fields)).status_code == 200
    await h.slack.command("/timesheet", "", user=sam.slack_id)
    answers = await h.fake.wait_for("response_url", count=2)
    assert len(h.fake.calls_to("response_url")) == 2
    first = fields["response_url"].rsplit("/", 1)[1]
    assert [answer.args["response_key"] for answer in answers].count(first) == 1


async def test_an_event_is_acknowledged_while_the_database_is_locked_and_acted_on_once(
    h: SlackHarness,
) -> None:
    ann = await h.slack_member("Annelock")
    body = json.dumps(event_body({"type": "app_home_opened", "user": ann.slack_id,
                                  "channel": "D" + ann.slack_id[1:], "tab": "home"})).encode()
    async with writes_held(h):
        for retry in ("", "1"):  # Slack's retry of it, while the first waits
            headers = {"X-Slack-Retry-Num": retry} if retry else {}
            response = await asyncio.wait_for(
                h.slack.post(body, "application/json", headers=headers), ACK_WITHIN_SECONDS)
            assert response.status_code == 200
    await h.fake.wait_for("views.publish", user_id=ann.slack_id)
    # A later event, once acted on, shows the retry was not.
    await later_home_opened(h, "Annelater")
    assert len(h.fake.calls_to("views.publish")) == 2


async def later_home_opened(h: SlackHarness, name: str) -> None:
    """A new member opens their Home, and it is published: the events before it are done."""
    other = await h.slack_member(name)
    later = json.dumps(event_body({"type": "app_home_opened", "user": other.slack_id,
                                   "channel": "D" + other.slack_id[1:], "tab": "home"}))
    assert (await h.slack.post(later.encode(), "application/json")).status_code == 200
    await h.fake.wait_for("views.publish", user_id=other.slack_id)


@asynccontextmanager
async def reads_held(h: SlackHarness) -> AsyncIterator[None]:
    """The bot database's pool for reads made one connection, taken, with a short wait for it:
    a read before the ack finds none (SQLAlchemy's pool timeout, as under a Monday's load)."""
    runtime = h.live.app.state.runtime
    engine = (runtime.read_engine or runtime.state_engine).sync_engine
    old = engine.pool
    engine.pool = type(old)(  # type: ignore[call-arg]
        old._creator, pool_size=1, max_overflow=0, timeout=0.3,
        _dispatch=old.dispatch, dialect=old._dialect)
    try:
        async with (runtime.read_engine or runtime.state_engine).connect():
            yield
    finally:
        engine.pool.dispose()
        engine.pool = old


async def test_an_event_whose_read_finds_no_connection_is_acknowledged_and_acted_on_once(
    h: SlackHarness,
) -> None:
    """Issue #40: the reads before the ack (the workspace's state, the request's key) found no
    connection in time; bolt answered its 500 (Slack retries it, and counts the failure). Now
    the ack goes out (the state as last read; the insert after the ack decides on the key),
    the work is done once, and Slack's retry changes nothing."""
    first = await h.slack_member("Patfirst")  # the workspace's state read once, as by now
    earlier = json.dumps(event_body({"type": "app_home_opened", "user": first.slack_id,
                                     "channel": "D" + first.slack_id[1:], "tab": "home"}))
    assert (await h.slack.post(earlier.encode(), "application/json")).status_code == 200
    await h.fake.wait_for("views.publish", user_id=first.slack_id)
    pat = await h.slack_member("Patpool")
    body = json.dumps(event_body({"type": "app_home_opened", "user": pat.slack_id,
                                  "channel": "D" + pat.slack_id[1:], "tab": "home"})).encode()
    async with reads_held(h):
        response = await asyncio.wait_for(h.slack.post(body, "application/json"),
                                          ACK_WITHIN_SECONDS)
        assert response.status_code == 200
    await h.fake.wait_for("views.publish", user_id=pat.slack_id)
    retried = await h.slack.post(body, "application/json", headers={"X-Slack-Retry-Num": "1"})
    assert retried.status_code == 200
    await later_home_opened(h, "Patlater")
    assert len(h.fake.calls_to("views.publish")) == 3
