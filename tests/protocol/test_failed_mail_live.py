"""A live timebot (uvicorn, SQLite and PostgreSQL) when one message cannot go (issue #23):

- the service's own mail: a row whose recipient's name has a line break (written before names
  refused them: inserted here directly, as the API now refuses it) sits first in line; the
  sign-in code asked for after it still reaches the Maildir outbox, and the bad row is set
  aside after its attempts;
- the relay refuses a recipient for good (550 at RCPT): the message ends failed, counted on
  /metrics, and `timebot outbox failed` shows the operator its recipient, subject and reason.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from mail.queues.outbox import new_message
from plumbing.db import unit_of_work
from service.organisation.account_models import ServiceMail
from shell.account_upkeep import MAIL_ATTEMPTS, MAIL_BACKOFF
from tests.mail.reviews_support import outbox_rows, runtime_of, wait_for
from tests.protocol.test_outbound import start_relay
from tests.protocol.test_outbox_failures import REFUSED, RefusingRelay
from tests.protocol.test_outbox_relay_down import gauge
from tests.support import Org, mail_of, new_org, start_live_server, stop_live_server
from tests.timebot.signin_support import browser, request_code, wait_for_code
from tests.timebot.test_cli import cli_env, timebot


def counted(metrics: httpx.Response) -> float:
    """timebot_outbox_failed_total (a process counts it for every test it runs)."""
    found = re.search(r"^timebot_outbox_failed_total (\S+)$", metrics.text, re.MULTILINE)
    assert found, "timebot_outbox_failed_total is not in /metrics"
    return float(found.group(1))


async def test_a_service_mail_that_cannot_be_rendered_does_not_hold_up_the_others(
    org: Org
) -> None:
    live = org.live
    service = live.service
    async with unit_of_work(service.sessions) as session:
        bad = ServiceMail(organisation_id=org.id, to_name="Eve\r\nBcc: x@y",
                          to_address="eve@example.com", subject="Welcome to timebot",
                          body="Hello", created_ms=live.clock.now_ms() - 60_000)
        session.add(bad)
        await session.flush()
        bad_id = bad.id

    async def bad_row(attempts: int) -> ServiceMail | None:
        async with service.sessions() as session:
            row = await session.scalar(select(ServiceMail).where(ServiceMail.id == bad_id))
        return row if row is not None and row.attempts >= attempts else None

    async with browser(live) as client:
        assert (await request_code(client, org.admin.email)).status_code == 200
    await wait_for_code(live, org.admin.email)  # the code went, the bad row before it or not
    first = await wait_for(lambda: bad_row(1), what="the bad row's first attempt")
    assert first.handed_ms is None and "linefeed" in (first.last_error or "")
    for attempt in range(2, MAIL_ATTEMPTS + 1):
        live.clock.advance(MAIL_BACKOFF.max_ms)
        for wake in service.executor.signin.mail_hooks:
            wake()
        await wait_for(lambda n=attempt: bad_row(n), what=f"the bad row's attempt {attempt}")
    last = await bad_row(MAIL_ATTEMPTS)
    assert last is not None and last.failed_ms is not None and last.handed_ms is not None
    assert [row.status for row in await outbox_rows(runtime_of(org), "eve@example.com")] == []


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_permanent_refusal_is_counted_and_listed_for_the_operator(
    backend: str, tmp_path: Path
) -> None:
    relay = RefusingRelay("RCPT", "550 5.1.1 No such user here")
    server, port = await start_relay(relay)
    live = await start_live_server(backend, tmp_path, extra_env={
        "TIMEBOT_SMTP_RELAY": f"127.0.0.1:{port}"})
    http = httpx.AsyncClient(timeout=30)
    try:
        org = await new_org(live, http)
        mail = mail_of(runtime_of(org))
        settings = live.settings
        for to, subject in ((REFUSED, "Your timesheet, refused"), ("ann@example.com", "Fine")):
            await mail.outbox.enqueue(new_message(
                mail_from=settings.mail_from, to=to, subject=subject, text="x",
                mail_domain=settings.mail_domain), kind="receipt", envelope_from="")
        before = counted(await http.get(f"{live.base_url}/metrics"))
        mail.outbox_worker.wake()

        async def ended() -> bool:
            rows = await mail.outbox.messages()
            return {row.subject: row.status for row in rows} == {
                "Your timesheet, refused": "failed", "Fine": "done"}

        await wait_for(ended, what="one refused for good, the other delivered")
        metrics = (await http.get(f"{live.base_url}/metrics")).text
        assert gauge(metrics, "timebot_queue_failed", "outbox") == 1
        assert counted(await http.get(f"{live.base_url}/metrics")) == before + 1
        env = cli_env(tmp_path / "cli", TIMEBOT_DATABASE_URL=settings.database_url)
        listed = await timebot(env, "outbox", "failed")
        assert listed.code == 0, listed.err
        assert f"to:      {REFUSED}" in listed.out
        assert "subject: Your timesheet, refused" in listed.out
        assert "reason:  recipients refused: nobody@example.com: 550 5.1.1 No such user here" \
            in listed.out
        status = await timebot(env, "outbox", "status")
        assert "failed   1" in status.out and "done     1" in status.out, status.out
    finally:
        await http.aclose()
        await stop_live_server(live)
        server.close()
        await asyncio.sleep(0)
