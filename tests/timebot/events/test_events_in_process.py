"""`timebot serve` as it runs by default (the embedded service and the fronts in one process):
the service's events reach the fronts in-process — a submission's review mail and the reply's
receipt arrive with no HTTP webhook delivery at all — and at the default log level a reply
logs one line. Also: TIMEBOT_LOG_LEVEL is checked. (A split deployment still uses HTTP
webhooks: tests/timebot/test_roles.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.net import free_port
from tests.pg import create_pg_database, drop_pg_database, pg_url
from tests.service.test_approvals_support import WEEK, WEEK_END
from tests.timebot.test_cli import TIMEBOT, cli_env, timebot
from tests.timebot.test_roles import (
    AUTHSERV,
    gql,
    manager_and_employee_with_a_record,
    wait_for,
    webhook_requests,
)

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

HOUR = 3_600_000


@pytest.fixture(params=["sqlite", "postgresql"])
async def databases(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, str]]:
    if request.param == "sqlite":
        yield {}
        return
    names = [await create_pg_database(), await create_pg_database()]
    yield {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(names[0]),
           "TIMEBOT_DATABASE_URL": pg_url(names[1])}
    for name in names:
        await drop_pg_database(name)


async def test_log_level_is_checked(tmp_path: Path) -> None:
    refused = await timebot(cli_env(tmp_path / "d", TIMEBOT_LOG_LEVEL="loud"), "serve")
    assert refused.code != 0 and "TIMEBOT_LOG_LEVEL must be one of" in refused.err, refused


async def test_events_reach_the_fronts_without_http(
    tmp_path: Path, databases: dict[str, str]
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    port, smtp = free_port(), free_port()
    env = {**cli_env(data_dir), "TIMEBOT_HTTP_PORT": str(port), "TIMEBOT_SMTP_PORT": str(smtp),
           "TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS": AUTHSERV, **databases}
    created = (await timebot(env, "service", "init", "--org", "One", "--admin-name", "Ada",
                             "--admin-email", "ada@one.example")).json()
    admin_key = created["admin"]["apikey"]
    log_path = tmp_path / "timebot.log"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            str(TIMEBOT), "serve", env=env, cwd=tmp_path, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    graphql = f"{base}/graphql"
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            for _ in range(600):
                assert process.returncode is None, log_path.read_text()
                try:
                    if (await http.get(f"{base}/readyz", timeout=2)).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            people = await manager_and_employee_with_a_record(
                http, graphql, admin_key, env, "one.example"
            )
            erin_id, erin_key = people["Erin"]
            # `service init` registered timebot's webhook: the in-process one, not a URL.
            hooks = await gql(http, graphql, admin_key, "{ currentOrganisation { "
                              "integrations { webhooks { url } } } }")
            urls = [h["url"] for h in hooks["currentOrganisation"]["integrations"]["webhooks"]]
            assert urls == ["inprocess:timebot"], urls

            await gql(http, graphql, erin_key,
                      "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
                      "submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id } }",
                      p=erin_id, s=WEEK, e=WEEK_END)
            reviews, _ = await wait_for(data_dir, "max@one.example", 1, 0)
            assert len(reviews) == 1, "the submission's event reached the review mail"
            review = reviews[0]
            lines_before = log_path.read_text().splitlines()

            swaks = await asyncio.create_subprocess_exec(
                "swaks", "--server", f"127.0.0.1:{smtp}", "--to", str(review["Reply-To"]),
                "--from", "max@one.example", "--helo", "client.one.example",
                "--header", f"Subject: Re: {review['Subject']}",
                "--header", f"In-Reply-To: {review['Message-ID']}",
                "--add-header", f"Authentication-Results: {AUTHSERV}; dmarc=pass "
                "header.from=one.example",
                "--body", "approve\n", stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            output, _ = await swaks.communicate()
            assert swaks.returncode == 0, output.decode(errors="replace")
            _, receipts = await wait_for(data_dir, "max@one.example", 1, 1)
            assert len(receipts) == 1
            # The approval's event reached the fronts too: Erin hears her week was approved.
            for _ in range(100):
                if any("approved" in str(m["Subject"]).lower()
                       for m in _mail_to(data_dir, "erin@one.example")):
                    break
                await asyncio.sleep(0.1)
            assert any("approved" in str(m["Subject"]).lower()
                       for m in _mail_to(data_dir, "erin@one.example"))

            metrics = (await http.get(f"{base}/metrics")).text
            assert webhook_requests(metrics) == 0, "an event went over HTTP"
            assert 'route="graphql"' in metrics  # the counter does count requests
            lines = log_path.read_text().splitlines()[len(lines_before):]
            reply_lines = [line for line in lines if "mail" in line or "HTTP" in line]
            assert len([line for line in lines if "mail_processed" in line]) == 1, lines
            assert len(reply_lines) == 1, reply_lines  # no access log, no per-request lines
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


def _mail_to(data_dir: Path, address: str) -> list[object]:
    from tests.timebot.test_roles import outbox

    return [m for m in outbox(data_dir) if address in str(m["To"])]
