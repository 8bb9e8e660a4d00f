"""A review request while the relay is down: retried with growing delays, never dropped,
delivered once when a relay answers; /metrics shows the outbox's depth and the age of its
oldest message meanwhile. A real timebot (uvicorn), a port nothing listens on, then a real
aiosmtpd relay on that port."""

from __future__ import annotations

import asyncio
import re
from email import message_from_bytes
from pathlib import Path

import httpx
import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import delete

from mail.queues.outbox import Outbox, OutboxWorker, RelaySettings, SmtpRelay
from plumbing.clock import Clock
from tests.mail.reviews_support import (
    WEEK,
    add_record,
    outbox_rows,
    runtime_of,
    set_stages,
    submit,
    wait_for,
)
from tests.net import free_port
from tests.protocol.conftest import StateDB
from tests.protocol.test_outbound import FlakyRelay, drain, message, start_relay
from tests.support import mail_of, new_org, start_live_server, stop_live_server
from timebot.state.models import OutboxMessage


def gauge(text: str, name: str, queue: str) -> float:
    found = re.search(rf'^{name}{{queue="{queue}"}} (\S+)$', text, re.MULTILINE)
    assert found, f"{name} for {queue} is not in /metrics"
    return float(found.group(1))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_review_request_waits_out_a_relay_outage_and_goes_once(
    backend: str, tmp_path: Path
) -> None:
    port = free_port()
    live = await start_live_server(backend, tmp_path, extra_env={
        "TIMEBOT_SMTP_RELAY": f"127.0.0.1:{port}"})
    http = httpx.AsyncClient(timeout=30)
    relay: asyncio.base_events.Server | None = None
    try:
        live.clock.set(WEEK + 8 * 86_400_000)
        org = await new_org(live, http)
        runtime = runtime_of(org)
        owner = await org.add_member("Olive Owner")
        approver = await org.add_member("Ann Approver", "manager")
        await set_stages(org, (approver,))
        await runtime.subscriptions.ensure(org.id)
        await add_record(owner)
        await submit(owner)

        async def review_row(attempts: int) -> OutboxMessage | None:
            """The review request once its `attempts`-th attempt has been recorded."""
            rows = await outbox_rows(runtime, approver.email, "review")
            done = rows and rows[0].attempts >= attempts and rows[0].status != "working"
            return rows[0] if done else None

        first = await wait_for(lambda: review_row(1), what="a first, failed attempt")
        assert first.status == "queued" and first.last_error
        assert first.next_attempt_ms - live.clock.now_ms() == 30_000
        # Later attempts fail too, each waiting longer.
        live.clock.advance(30_000)
        mail_of(runtime).outbox_worker.wake()
        second = await wait_for(lambda: review_row(2), what="a second attempt")
        assert second.status == "queued"
        assert second.next_attempt_ms - live.clock.now_ms() == 60_000

        metrics = (await http.get(f"{live.base_url}/metrics")).text
        assert gauge(metrics, "timebot_queue_depth", "outbox") >= 1
        assert gauge(metrics, "timebot_queue_oldest_age_seconds", "outbox") >= 30
        assert gauge(metrics, "timebot_queue_depth", "inbox") >= 0

        # The relay comes back.
        received = FlakyRelay(refusals=0)
        relay = await asyncio.get_running_loop().create_server(
            lambda: SMTP(received), "127.0.0.1", port)
        live.clock.advance(3_600_000)
        mail_of(runtime).outbox_worker.wake()

        async def sent() -> bool:
            rows = await outbox_rows(runtime, approver.email, "review")
            return bool(rows) and rows[0].status == "done"

        await wait_for(sent, what="the review request delivered")
        reviews = [raw for raw in received.received
                   if approver.email in str(message_from_bytes(raw)["To"])]
        assert len(reviews) == 1
        metrics = (await http.get(f"{live.base_url}/metrics")).text
        assert gauge(metrics, "timebot_queue_depth", "outbox") == 0
        assert gauge(metrics, "timebot_queue_oldest_age_seconds", "outbox") == 0
    finally:
        if relay is not None:
            relay.close()
        await http.aclose()
        await stop_live_server(live)


class DenyingRelay(FlakyRelay):
    """A relay refusing permanently at DATA (554: e.g. it does not accept our credentials)."""

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.refusals > 0:
            self.refusals -= 1
            return "554 5.7.1 Relay access denied"
        return await super().handle_DATA(server, session, envelope)


async def test_a_permanent_refusal_ends_the_message(state_db: StateDB) -> None:
    """A 5xx to the message ends it (failed, with the relay's answer): it is not retried
    every hour for ever, and the message behind it goes."""
    async with state_db.sessions() as session:
        await session.execute(delete(OutboxMessage))
        await session.commit()
    outbox = Outbox(state_db.sessions, Clock(frozen_ms=1_800_000_000_000))
    relay = DenyingRelay(refusals=1)
    server, port = await start_relay(relay)
    try:
        await outbox.enqueue(message(1), kind="review", envelope_from="")
        outbox.clock.advance(1)
        await outbox.enqueue(message(2), kind="review", envelope_from="")
        worker = OutboxWorker(outbox, SmtpRelay(RelaySettings.parse(f"127.0.0.1:{port}")),
                              concurrency=1)
        await drain([worker], outbox.clock, rounds=5)
    finally:
        server.close()
    rows = {row.subject: row for row in await outbox.messages()}
    assert (rows["Review 1"].status, rows["Review 1"].attempts) == ("failed", 1)
    assert rows["Review 1"].last_error == "554 5.7.1 Relay access denied"
    assert rows["Review 2"].status == "done"
    assert [message_from_bytes(raw)["Subject"] for raw in relay.received] == ["Review 2"]
