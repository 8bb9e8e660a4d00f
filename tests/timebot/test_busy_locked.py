"""Busy is 503, never 500 (shell.busy), also when SQLite's write lock is what could not be had
(issue #40): another writer holds it longer than the lock timeout (the database URL's
`timeout`, here 0.3 s), and "database is locked" reaching an HTTP handler is answered 503
with Retry-After — the service's /graphql and the fronts' /svc/webhooks alike. Nothing is
lost: the same request sent again once the lock is free is answered, and acted on once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import make_url

from tests.support import (
    HOUR_MS,
    LiveServer,
    new_org,
    sqlite_write_lock_taken,
    start_live_server,
    stop_live_server,
)
from timebot.events.webhooks import WEBHOOK_PATH, sign

LOCK_TIMEOUT_S = 0.3
WEEK_START = 1_788_220_800_000  # Monday 2026-09-01 00:00 UTC
ADD = ("mutation($p: SvcId!, $s: SvcTimestamp!, $d: Int!) {"
       " addTimeRecord(personId: $p, startTime: $s, duration: $d) { id } }")
RECORDS = ("query($s: SvcTimestamp!, $e: SvcTimestamp!) {"
           " getTimeRecords(startTime: $s, endTime: $e) { id } }")


@pytest.fixture(scope="module")
async def live(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    data = tmp_path_factory.mktemp("locked")
    server = await start_live_server("sqlite", data, extra_env={
        "TIMEBOT_DATABASE_URL": f"sqlite+aiosqlite:///{data / 'bot.db'}?timeout={LOCK_TIMEOUT_S}",
        "TIMEBOT_SERVICE_DATABASE_URL":
            f"sqlite+aiosqlite:///{data / 'service.db'}?timeout={LOCK_TIMEOUT_S}",
    })
    try:
        yield server
    finally:
        await stop_live_server(server)


def write_lock_held(url: str) -> AbstractAsyncContextManager[None]:
    """Another connection holds the database's write lock (a long writer of another process)."""
    return sqlite_write_lock_taken(Path(make_url(url).database or ""))


def assert_busy(answer: httpx.Response) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.text[:300])
    assert int(answer.headers["retry-after"]) > 0


async def test_a_graphql_write_that_finds_the_database_locked_is_503_then_done_once(
    live: LiveServer,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        org = await new_org(live, http)
        me = org.admin
        add = {"query": ADD, "variables": {"p": me.id, "s": WEEK_START + 9 * HOUR_MS,
                                            "d": HOUR_MS}}
        headers = {"apikey": me.apikey}
        day = {"s": WEEK_START, "e": WEEK_START + 24 * HOUR_MS}
        assert (await me.gql(RECORDS, day))["getTimeRecords"] == []  # its key looked up
        async with write_lock_held(live.settings.service_database_url):
            answer = await http.post(live.graphql_url, json=add, headers=headers)
            assert_busy(answer)
            assert answer.json()["errors"][0]["message"].startswith("The server is busy")
        again = await http.post(live.graphql_url, json=add, headers=headers)
        assert again.status_code == 200 and "errors" not in again.json(), again.text
        assert len((await me.gql(RECORDS, day))["getTimeRecords"]) == 1


async def test_a_webhook_delivery_that_finds_the_database_locked_is_503_then_taken_once(
    live: LiveServer,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        org = await new_org(live, http)
        runtime = live.app.state.runtime
        secret = await runtime.subscriptions.ensure(org.id)
        body = json.dumps({"id": f"locked-{org.id}", "event": "approvalEventUpdate",
                           "organisationId": org.id, "timestamp": 1,
                           "data": {"status": "s"}}).encode()
        headers = {"X-Svc-Signature": sign(secret, body)}
        url = f"{live.base_url}{WEBHOOK_PATH}"
        async with write_lock_held(live.settings.database_url):
            assert_busy(await http.post(url, content=body, headers=headers))
        retried = await http.post(url, content=body, headers=headers)  # the service's retry
        assert retried.json() == {"ok": True, "duplicate": False}
        rows = [row for row in await runtime.events.all()
                if row.delivery_id == f"locked-{org.id}"]
        assert len(rows) == 1
