"""`timebot serve --role`: the service alone in one process, the fronts in another against its
URL (the way they run against a hosted service) — a review e-mail and a reply each once, and
the service process sends no mail and serves no front. Also `timebot --version` and the
refusals of roles that cannot work."""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import re
import signal
import socket
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.net import free_port
from tests.service.test_approvals_support import WEEK, WEEK_END
from tests.timebot.test_cli import TIMEBOT, cli_env, timebot

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

AUTHSERV = "mx.roles.test"


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    return {**cli_env(data_dir), **extra}
HOUR = 3_600_000


async def test_version_and_impossible_roles(tmp_path: Path) -> None:
    version = await timebot(cli_env(tmp_path / "d"), "--version")
    assert version.code == 0 and version.out.startswith("timebot "), version
    bogus = await timebot(cli_env(tmp_path / "d", TIMEBOT_ROLE="everything"), "serve")
    assert bogus.code != 0 and "TIMEBOT_ROLE must be one of" in bogus.err
    fronts = await timebot(cli_env(tmp_path / "d"), "serve", "--role", "fronts")
    assert fronts.code != 0 and "TIMEBOT_SERVICE_URL" in fronts.err
    service = await timebot(
        cli_env(tmp_path / "d", TIMEBOT_SERVICE_URL="http://127.0.0.1:9/graphql"),
        "serve", "--role", "service",
    )
    assert service.code != 0 and "TIMEBOT_SERVICE_URL" in service.err


class Process:
    def __init__(self, process: asyncio.subprocess.Process, base: str) -> None:
        self.process = process
        self.base = base

    @classmethod
    async def serve(cls, env: dict[str, str], port: int, http: httpx.AsyncClient) -> Process:
        process = await asyncio.create_subprocess_exec(
            str(TIMEBOT), "serve", env=env, cwd=env["TIMEBOT_DATA_DIR"] + "/..",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            if process.returncode is not None:
                assert process.stderr is not None
                pytest.fail("timebot serve died: " + (await process.stderr.read()).decode())
            try:
                if (await http.get(f"{base}/readyz", timeout=2)).status_code == 200:
                    return cls(process, base)
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        pytest.fail("timebot serve did not become ready in 60 s")

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), timeout=30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


async def gql(http: httpx.AsyncClient, url: str, key: str, query: str, **variables: Any) -> Any:
    response = await http.post(url, json={"query": query, "variables": variables},
                               headers={"apikey": key})
    body = response.json()
    assert response.status_code == 200 and not body.get("errors"), body
    return body["data"]


async def manager_and_employee_with_a_record(
    http: httpx.AsyncClient, graphql: str, admin_key: str, env: dict[str, str], domain: str
) -> dict[str, tuple[str, str]]:
    """Max manages Erin, the organisation's one stage is the people manager, and Erin has two
    hours on the Monday of WEEK: {name: (person id, API key)}."""
    roles = (await gql(http, graphql, admin_key, "{ getRoles { id name } }"))["getRoles"]
    role_of = {role["name"].lower(): role["id"] for role in roles}
    people = {}
    for name, kind in (("Max", "manager"), ("Erin", "employee")):
        added = await gql(
            http, graphql, admin_key,
            "mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { addPerson(name: $n, "
            "email: $e, roleId: $r) { id } }",
            n=name, e=f"{name.lower()}@{domain}", r=role_of[kind],
        )
        key = (await timebot(env, "service", "apikey", "--email",
                             f"{name.lower()}@{domain}")).out.strip()
        people[name] = (added["addPerson"]["id"], key)
    (max_id, _), (erin_id, erin_key) = people["Max"], people["Erin"]
    await gql(http, graphql, admin_key,
              "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, "
              "personId: $p) { id } }", m=max_id, p=erin_id)
    await gql(http, graphql, admin_key,
              "mutation { editOrganisationApprovalStages(stages: [{type: \"ppm\", "
              "quorum: \"any\"}]) { id } }")
    await gql(http, graphql, erin_key,
              "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, "
              "duration: 7200000, personId: $p) { id } }", s=WEEK + 9 * HOUR, p=erin_id)
    return people


def outbox(data_dir: Path) -> list[EmailMessage]:
    folder = data_dir / "outbox" / "new"
    return [
        email.message_from_bytes(path.read_bytes(), policy=email.policy.default)  # type: ignore[misc]
        for path in sorted(folder.glob("*"))
    ] if folder.exists() else []


def reviews_and_receipts(data_dir: Path, address: str) -> tuple[list[EmailMessage], ...]:
    """The review requests (they carry the reply address) and the receipts (they answer a
    reply) sent to `address`; period reminders and the like are left out."""
    mine = [m for m in outbox(data_dir) if address in str(m["To"])]
    reviews = [
        m for m in mine
        if str(m["Reply-To"] or "").startswith("approvals+") and not m["In-Reply-To"]
    ]
    receipts = [m for m in mine if m["In-Reply-To"]]
    return reviews, receipts


async def wait_for(data_dir: Path, address: str, reviews: int, receipts: int) -> tuple[
    list[EmailMessage], list[EmailMessage]
]:
    found = reviews_and_receipts(data_dir, address)
    for _ in range(300):
        if len(found[0]) >= reviews and len(found[1]) >= receipts:
            break
        await asyncio.sleep(0.1)
        found = reviews_and_receipts(data_dir, address)
    return found[0], found[1]


def webhook_requests(metrics: str) -> float:
    """Requests to /svc/webhooks a process handled (its /metrics), whatever their answer."""
    return sum(float(value) for value in re.findall(
        r'timebot_http_requests_total\{[^}]*route="svc"[^}]*\} ([0-9.e+]+)', metrics))


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def test_the_service_and_the_fronts_in_two_processes(
    tmp_path: Path, http: httpx.AsyncClient
) -> None:
    service_dir, fronts_dir = tmp_path / "service" / "data", tmp_path / "fronts" / "data"
    service_port, service_smtp, fronts_port, fronts_smtp = (free_port() for _ in range(4))
    for folder in (service_dir, fronts_dir):
        folder.mkdir(parents=True)
    service_env = env_for(service_dir, TIMEBOT_HTTP_PORT=str(service_port),
                          TIMEBOT_SMTP_PORT=str(service_smtp), TIMEBOT_ROLE="service")
    created = (await timebot(service_env, "service", "init", "--org", "Split",
                             "--admin-name", "Ada", "--admin-email", "ada@split.example")).json()
    admin_key = created["admin"]["apikey"]
    service = await Process.serve(service_env, service_port, http)
    fronts: Process | None = None
    try:
        graphql = f"{service.base}/graphql"
        assert not listening(service_smtp), "a service-only process opened the SMTP listener"
        for path in ("/outbox", "/a/token", "/r/token"):
            assert (await http.get(service.base + path)).status_code == 404, path
        assert (await http.post(f"{service.base}/slack/events")).status_code == 404
        assert (await http.post(f"{service.base}/svc/webhooks")).status_code == 404

        people = await manager_and_employee_with_a_record(
            http, graphql, admin_key, service_env, "split.example"
        )
        max_key = people["Max"][1]
        erin_id, erin_key = people["Erin"]

        fronts_env = env_for(
            fronts_dir, TIMEBOT_HTTP_PORT=str(fronts_port), TIMEBOT_SMTP_PORT=str(fronts_smtp),
            TIMEBOT_ROLE="fronts", TIMEBOT_SERVICE_URL=graphql,
            TIMEBOT_INTEGRATION_KEY=admin_key, TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS=AUTHSERV,
        )
        for key in (max_key, erin_key):
            linked = await timebot(fronts_env, "people", "link",
                                   "--email", f"{'max' if key == max_key else 'erin'}"
                                   "@split.example", "--apikey", key)
            assert linked.code == 0, linked.err
        fronts = await Process.serve(fronts_env, fronts_port, http)
        for _ in range(300):  # the fronts register their webhook with the service
            hooks = await gql(http, graphql, admin_key, "{ currentOrganisation { "
                              "integrations { webhooks { url } } } }")
            webhooks = hooks["currentOrganisation"]["integrations"]["webhooks"]
            if webhooks:
                break
            await asyncio.sleep(0.1)
        urls = [hook["url"] for hook in webhooks]
        assert urls == [f"{fronts.base}/svc/webhooks"], urls

        submitted = await gql(
            http, graphql, erin_key,
            "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
            "personId: $p, startTime: $s, endTime: $e) { id } }",
            p=erin_id, s=WEEK, e=WEEK_END,
        )
        assert submitted["submitTimesheet"]["id"]
        reviews, _ = await wait_for(fronts_dir, "max@split.example", 1, 0)
        assert len(reviews) == 1, [m["Subject"] for m in reviews]
        review = reviews[0]
        reply_to = str(review["Reply-To"])
        assert fronts.base in review.get_body(preferencelist=("plain",)).get_content()

        process = await asyncio.create_subprocess_exec(
            "swaks", "--server", f"127.0.0.1:{fronts_smtp}", "--to", reply_to,
            "--from", "max@split.example", "--helo", "client.split.example",
            "--header", f"Subject: Re: {review['Subject']}",
            "--header", f"In-Reply-To: {review['Message-ID']}",
            "--add-header", f"Authentication-Results: {AUTHSERV}; dmarc=pass "
            "header.from=split.example",
            "--body", "approve\n", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await process.communicate()
        assert process.returncode == 0, output.decode(errors="replace")
        _, receipts = await wait_for(fronts_dir, "max@split.example", 1, 1)
        assert len(receipts) == 1, [m["Subject"] for m in receipts]
        receipt = receipts[0]
        assert receipt.get_body(preferencelist=("plain",)).get_content().splitlines()[0] \
            == "Approved"
        state = await gql(
            http, graphql, admin_key,
            "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalState("
            "personId: $p, startTime: $s, endTime: $e) { status } }",
            p=erin_id, s=WEEK, e=WEEK_END,
        )
        assert state["getApprovalState"]["status"] == "a"
        # Split, the service's events reach the fronts as HTTP webhook deliveries.
        assert webhook_requests((await http.get(f"{fronts.base}/metrics")).text) >= 1
        await asyncio.sleep(1.0)  # anything doubled would have arrived by now
        reviews, receipts = reviews_and_receipts(fronts_dir, "max@split.example")
        assert (len(reviews), len(receipts)) == (1, 1)
        assert outbox(service_dir) == [], "the service process sent mail of its own"
        assert json.loads((await http.get(f"{service.base}/healthz")).text)["status"] == "ok"
    finally:
        if fronts is not None:
            await fronts.stop()
        await service.stop()
