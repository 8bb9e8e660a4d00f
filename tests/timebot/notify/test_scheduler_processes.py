"""Two timebot server processes on one PostgreSQL (bot state and service), behind one public
URL, sending through one SMTP relay that refuses for a while and then accepts: every review
request and every reminder reaches the relay exactly once — nothing lost, nothing doubled —
even when both processes handle the same event and run the scheduler at the same moment."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from email import message_from_bytes

import httpx
import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session

from tests.mail.reviews_support import (
    WEEK_END,
    add_record,
    set_stages,
    submit,
    wait_for,
)
from tests.net import free_port
from tests.support import HOUR_MS, LiveServer, mail_of, new_org, start_live_server, stop_live_server
from timebot.events.bus import ServiceEvent
from timebot.process.notifications import jobs_of
from timebot.process.runtime import Runtime

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


class FlakyRelay:
    """A real SMTP server: answers 451 to the first `refusals` messages, then keeps them."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.received: list[bytes] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.refusals > 0:
            self.refusals -= 1
            return "451 4.3.0 Try again later"
        self.received.append(bytes(envelope.original_content or b""))
        return "250 OK"


@pytest.fixture(scope="module")
async def relay() -> AsyncIterator[tuple[FlakyRelay, int]]:
    handler = FlakyRelay(refusals=4)
    port = free_port()
    server = await asyncio.get_running_loop().create_server(
        lambda: SMTP(handler), "127.0.0.1", port
    )
    try:
        yield handler, port
    finally:
        server.close()


@pytest.fixture(scope="module")
async def pair(
    relay: tuple[FlakyRelay, int], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[LiveServer, LiveServer]]:
    env = {"TIMEBOT_SMTP_RELAY": f"127.0.0.1:{relay[1]}"}
    first = await start_live_server("postgresql", tmp_path_factory.mktemp("first"), env)
    second = await start_live_server(
        "postgresql", tmp_path_factory.mktemp("second"),
        {**env, "TIMEBOT_PUBLIC_URL": first.base_url}, reuse_databases=first.databases,
    )
    second.databases = []  # the first server drops them
    try:
        yield first, second
    finally:
        await stop_live_server(second)
        await stop_live_server(first)


def runtime(live: LiveServer) -> Runtime:
    return live.app.state.runtime  # type: ignore[no-any-return]


async def test_two_processes_send_each_message_once(
    pair: tuple[LiveServer, LiveServer], relay: tuple[FlakyRelay, int]
) -> None:
    first, second = pair
    handler, _port = relay
    runtimes = [runtime(first), runtime(second)]
    async with httpx.AsyncClient(timeout=30) as http:
        org = await new_org(first, http)
        approvers = [await org.add_member(f"Approver {n}", "manager") for n in range(2)]
        owners = [await org.add_member(f"Owner {n}") for n in range(3)]
        await org.admin.gql(
            "mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id, "
            'timeZone: "Asia/Tokyo") { id } }', {"id": owners[2].id},
        )
        await set_stages(org, tuple(approvers))
        for live_runtime in runtimes:  # one public URL: one webhook, both subscribe to it
            await live_runtime.subscriptions.ensure(org.id)
        for owner in owners[:2]:
            await add_record(owner)
            await submit(owner)

        async def reviews_queued() -> bool:
            rows = await mail_of(runtimes[0]).outbox.messages("review")
            return len(rows) == 4

        await wait_for(reviews_queued, what="4 review requests (2 timesheets x 2 approvers)")
        # Both processes handle the same events again, at the same time: nothing more.
        events = [row for row in await runtimes[0].events.all() if row.organisation_id == org.id]
        for row in events:
            event = ServiceEvent(row.delivery_id, row.event, row.organisation_id,
                                 row.timestamp_ms, dict(row.data))
            await asyncio.gather(*(jobs_of(r).reviews.handle(event) for r in runtimes))

        # The period's end, seen by both schedulers at once (and by both without the lease).
        for moment in (WEEK_END - 9 * HOUR_MS, WEEK_END, WEEK_END + HOUR_MS):
            for live in pair:
                live.clock.set(moment)
            await asyncio.gather(*(jobs_of(r).scheduler.run_once() for r in runtimes))
            await asyncio.gather(*(jobs_of(r).scheduler.period_reminders(org.id)
                                   for r in runtimes))
        rows = await mail_of(runtimes[0]).outbox.messages()
        reminders = [row for row in rows if row.kind == "timesheet-reminder"]
        # Ada Admin, both approvers and the owner who did not submit (in Tokyo).
        assert len(reminders) == 4
        assert len({row.dedupe_key for row in rows}) == len(rows)

        # Deliver through the relay that refuses at first: retried with backoff (the clocks
        # back to now, then an hour per round).
        for live in pair:
            live.clock.frozen_ms = None
        async def all_delivered() -> bool:
            for live in pair:
                live.clock.advance(HOUR_MS)
            for r in runtimes:
                mail_of(r).outbox_worker.wake()
            await asyncio.sleep(0.2)
            return len(handler.received) >= len(rows) and {
                row.status for row in await mail_of(runtimes[0]).outbox.messages()
            } == {"done"}

        await wait_for(all_delivered, seconds=60, what="every message through the relay")
        await asyncio.sleep(0.5)
        ids = Counter(str(message_from_bytes(raw)["Message-ID"]) for raw in handler.received)
        assert len(ids) == len(rows) and set(ids.values()) == {1}, ids
        attempts = sum(row.attempts for row in await mail_of(runtimes[0]).outbox.messages())
        assert attempts >= len(rows) + 4
