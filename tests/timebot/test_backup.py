"""`timebot backup DIR` taken while `timebot serve` runs and writes, then `timebot restore DIR`
into a fresh data dir (and fresh databases): everything reads back, and a reply address sent
before the backup still works on the restored server. On SQLite and PostgreSQL, through the
real CLI and the real SMTP listener; the secret key is the data dir's (carried by the backup)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.net import free_port
from tests.timebot.backup_support import (
    TIME,
    MakeDatabases,
    demo_keys,
    fresh_databases,
    gql,
    mail_to,
    outbox,
    send,
)
from tests.timebot.serve_process import serve_env, serving
from tests.timebot.test_cli import timebot

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

GRACE = "grace@northwind.example"
KATHERINE = "katherine@northwind.example"
ME = "{ currentPerson { id } }"
RECORDS = """query($p: SvcId!) { getTimeRecords(filter: [{personId: $p}]) {
  id duration comment } }"""
ADD = """mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!) {
  addTimeRecord(startTime: $s, duration: $d, personId: $p) { id } }"""
PEOPLE = "{ getPersons { id name email } }"
MAILED = 3  # Katherine's entries by mail, each receipt awaited before the backup
MINUTE_MS = 60_000


@pytest.fixture(params=["sqlite", "postgresql"])
async def databases(request: pytest.FixtureRequest) -> AsyncIterator[MakeDatabases]:
    async for make in fresh_databases(request.param):
        yield make


def env_on(data_dir: Path, databases: dict[str, str]) -> dict[str, str]:
    """`make run`'s settings on free ports, the secret key generated into the data dir."""
    env = serve_env(data_dir, TIMEBOT_HTTP_PORT=str(free_port()),
                    TIMEBOT_SMTP_PORT=str(free_port()),
                    TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS="demo.localhost", **databases)
    del env["TIMEBOT_SECRET_KEY"]
    return env


async def durations(http: httpx.AsyncClient, base: str, apikey: str, person: str
                    ) -> list[tuple[int, str]]:
    records = (await gql(http, base, apikey, RECORDS, {"p": person}))["getTimeRecords"]
    return sorted((int(r["duration"]), str(r["comment"])) for r in records)


async def test_backup_while_serving_then_restore(tmp_path: Path,
                                                 databases: MakeDatabases) -> None:
    env_a = env_on(tmp_path / "a", await databases())
    data_a, smtp_a = tmp_path / "a", int(env_a["TIMEBOT_SMTP_PORT"])
    backup = tmp_path / "backup"
    async with serving(env_a, "--demo", cwd=tmp_path) as served, \
            httpx.AsyncClient(timeout=30) as http:
        keys = demo_keys(served.out)
        # Margaret logs and submits: Grace's review e-mail, with its reply address.
        await send(smtp_a, "margaret", TIME, "my hours", "3h @Build account overview screen")
        await send(smtp_a, "margaret", TIME, "submit", "submit")
        [review] = await mail_to(data_a, GRACE, "Timesheet to review: Margaret Hamilton",
                                 "account overview screen")
        reply_to = str(review["Reply-To"])
        assert reply_to.startswith("approvals+"), reply_to
        # Katherine logs by mail, each entry answered before the backup.
        for n in range(MAILED):
            await send(smtp_a, "katherine", TIME, "my hours", f"15m @Build mailed {n}")
        await mail_to(data_a, KATHERINE, "Re: my hours", "Logged 1 entry", count=MAILED)
        katherine = (await gql(http, served.base, keys["katherine"], ME))["currentPerson"]["id"]
        people = await gql(http, served.base, keys["ada"], PEOPLE)

        # A writer adds Katherine's records (minute n+1 long: each its own) while the backup
        # runs; the ones added before it started must be restored, the others may be.
        added: list[int] = []
        stop, going = asyncio.Event(), asyncio.Event()
        today_ms = int(time.time() * 1000) - 8 * 3_600_000

        async def writer() -> None:
            while not stop.is_set():
                duration = (len(added) + 1) * MINUTE_MS
                await gql(http, served.base, keys["katherine"], ADD,
                          {"s": today_ms, "d": duration, "p": katherine})
                added.append(duration)
                if len(added) == 3:
                    going.set()

        writing = asyncio.create_task(writer())
        await going.wait()
        before = set(added)
        made = await timebot(env_a, "backup", str(backup), cwd=tmp_path)
        stop.set()
        await writing
        assert made.code == 0, made.err
        assert "secret key is NOT" not in made.err  # the data dir's key is in the backup
        in_a = await durations(http, served.base, keys["ada"], katherine)

    env_b = env_on(tmp_path / "b", await databases())
    data_b, smtp_b = tmp_path / "b", int(env_b["TIMEBOT_SMTP_PORT"])
    restored = await timebot(env_b, "restore", str(backup), cwd=tmp_path)
    assert restored.code == 0, restored.err
    assert (data_b / "secret.key").read_text() == (data_a / "secret.key").read_text()
    assert (data_b / "secret.key").stat().st_mode & 0o777 == 0o600
    async with serving(env_b, cwd=tmp_path) as served, httpx.AsyncClient(timeout=30) as http:
        # Old API keys still work (stored as digests in the service's database) and read the
        # same people back.
        assert await gql(http, served.base, keys["ada"], PEOPLE) == people
        margaret = (await gql(http, served.base, keys["margaret"], ME))["currentPerson"]["id"]
        assert (3 * 60 * MINUTE_MS, "account overview screen") in await durations(
            http, served.base, keys["margaret"], margaret)
        in_b = await durations(http, served.base, keys["ada"], katherine)
        mailed = sorted(c for _, c in in_b if c.startswith("mailed"))
        assert mailed == [f"mailed {n}" for n in range(MAILED)]  # each once
        written = [d for d, c in in_b if not c]
        assert len(written) == len(set(written))
        assert before <= set(written) <= {d for d, c in in_a if not c}

        # Grace answers the review e-mail of before the backup: its reply address (sealed with
        # the backed-up key, its token in the backed-up bot database) works.
        old = frozenset(outbox(data_b))
        await send(smtp_b, "grace", reply_to, "Re: Timesheet to review", "approve")
        await mail_to(data_b, GRACE, "Re: Timesheet to review", "Approved", besides=old)
