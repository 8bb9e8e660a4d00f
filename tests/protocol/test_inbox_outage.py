"""Mail accepted while the service cannot answer is not lost (issue #23): a time entry sent with
swaks while the service's database refuses every connection is retried with growing delays
for as long as the outage lasts — well past the five attempts that used to set it aside as
"failed" within seconds — and logged once the database is back.

The outage is a real one: the embedded service's PostgreSQL database stops accepting
connections and its sessions are ended (the bot's own database, which holds the inbox, stays
up). SQLite has no such switch; the inbox's retries on both backends are in
test_inbox_worker.py. The worker's clock is driven by the test, its polls woken."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from mail.queues.inbox import BACKOFF
from tests.mail.reviews_support import runtime_of, wait_for
from tests.net import free_port
from tests.pg import PG_ADMIN_DSN
from tests.protocol.test_time_entry_mail import TRUSTED, receipt_to, swaks, text_of
from tests.support import LiveServer, mail_of, new_org, start_live_server, stop_live_server
from tests.timebot.timeentry_setup import build
from timebot.state.models import InboxMessage

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


@pytest.fixture
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[
    tuple[LiveServer, int]
]:
    port = free_port()
    live = await start_live_server(
        "postgresql", tmp_path_factory.mktemp("outage"),
        extra_env={"TIMEBOT_SMTP_PORT": str(port), "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": TRUSTED},
    )
    try:
        yield live, port
    finally:
        await stop_live_server(live)


async def allow_connections(database: str, allowed: bool) -> None:
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await admin.execute(
            f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS {str(allowed).lower()}')
        if not allowed:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = $1 AND pid <> pg_backend_pid()", database)
    finally:
        await admin.close()


async def test_a_time_entry_waits_out_a_service_database_outage(
    server: tuple[LiveServer, int]
) -> None:
    live, port = server
    async with httpx.AsyncClient(timeout=30) as http:
        await waits_out_an_outage(live, port, http)


async def waits_out_an_outage(live: LiveServer, port: int, http: httpx.AsyncClient) -> None:
    fx = await build(await new_org(live, http))
    runtime = runtime_of(fx.org)
    inbox = mail_of(runtime).inbox
    wake = mail_of(runtime).wake_inbox
    service_database = live.databases[0]
    sender = fx.employee.email
    await allow_connections(service_database, False)
    try:
        await swaks(port, sender, "2h @acme/website during the outage\n")

        async def attempted(count: int) -> InboxMessage | None:
            rows = [row for row in await inbox.all() if sender in row.raw.decode(errors="replace")]
            done = rows and rows[0].attempts >= count and rows[0].status != "working"
            return rows[0] if done else None

        for attempt in range(1, 9):  # far more than the five that used to set it aside
            row = await wait_for(lambda n=attempt: attempted(n),
                                 what=f"processing attempt {attempt}")
            assert (row.status, row.failures) == ("queued", 0), (row.status, row.outcome)
            assert row.next_attempt_ms > live.clock.now_ms()
            if attempt < 8:  # (the clock moves only while no attempt is under way)
                live.clock.advance(BACKOFF.max_ms)
                wake()
    finally:
        await allow_connections(service_database, True)
    live.clock.advance(BACKOFF.max_ms)
    wake()
    receipt = await receipt_to(live, sender)
    assert text_of(receipt).splitlines()[0] == "Logged 1 entry"
    assert [r["duration"] for r in await fx.records()] == [2 * 3_600_000]
    [row] = [row for row in await inbox.all() if sender in row.raw.decode(errors="replace")]
    assert row.status == "done"
