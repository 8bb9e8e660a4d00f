"""The company of bench.monday, set up from outside as an operator would: the relay (the sink of
bench.monday_sink, its own process), the fake Slack (tests/bot/slack/fake_slack.py, its own process,
knowing every person by e-mail), `timebot service init` and `timebot service import` of the
people (bench.people_import's file: managers ten wide, so that the first tenth approve the
rest), the reply domain's DKIM key published through TIMEBOT_DKIM_TXT_FILE, and `timebot
serve` with the relay, the SMTP listener and Slack over HTTP. Through GraphQL, with the
administrator's key: one approval stage (the people manager) and a day of work in each of the
two weeks every employee submits.

The scheduler's epoch is set as a timebot that has served the organisation since 1 March 2026
would have it, by `timebot reminders send --at` that day (which finds nothing due), so that
the reminder runs of bench.monday (`--at` 16 and 23 March) find a week's reminder due for
everyone.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import note
from bench.diagnose import diagnosed_program
from bench.mail_load import DOMAIN, Key, free_port, new_key
from bench.mail_world import analyse, spawn
from bench.monday_sink import Arrivals
from bench.people_import import csv_text
from bench.serve import kill_tree, serve_command, settled_cpu, timebot_command, until_ready
from bench.slack_ack import stop, wait_up
from tests.bot.slack.fake_slack import FakeSlack

PEOPLE_DOMAIN = "big.example"  # bench.people_import's addresses
SIGNING_SECRET = "bench-monday-signing-secret"
BOT_TOKEN = "xoxb-bench-monday"
EPOCH_AT = "2026-03-01T00:00:00+00:00"
DAY_MS = 86_400_000
WEEKS = {"alone": 1_767_571_200_000, "mixed": 1_768_176_000_000}  # Mondays 5 and 12 Jan 2026
RECORDS_A_REQUEST = 50


def slack_user(index: int) -> str:
    return f"U{index:05d}"


class Monday:
    def __init__(self, root: Path, databases: dict[str, str], workers: int, people: int
                 ) -> None:
        self.root, self.workers, self.people = root, workers, people
        self.databases = databases
        made = new_key()
        self.key = Key(made.private_pem, made.txt_line.replace(
            "s1._domainkey.example.com", f"s1._domainkey.{PEOPLE_DOMAIN}"))
        (root / "dkim.txt").write_text(self.key.txt_line + "\n")
        self.secret = secrets.token_urlsafe(48)
        self.fake = FakeSlack(free_port())
        self.relay_port, self.smtp_port, self.http_port = free_port(), free_port(), free_port()
        self.base = f"http://127.0.0.1:{self.http_port}"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("TIMEBOT_", "SLACK_"))},
            "TIMEBOT_DATA_DIR": str(root / "data"), "TIMEBOT_SECRET_KEY": self.secret,
            "TIMEBOT_HTTP_HOST": "127.0.0.1", "TIMEBOT_HTTP_PORT": str(self.http_port),
            "TIMEBOT_SMTP_PORT": str(self.smtp_port), "TIMEBOT_MAIL_DOMAIN": DOMAIN,
            "TIMEBOT_DKIM_TXT_FILE": str(root / "dkim.txt"),
            "TIMEBOT_SMTP_RELAY": f"127.0.0.1:{self.relay_port}",
            "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "TIMEBOT_SLACK_API_URL": self.fake.api_url, **databases,
        }
        self.arrivals = Arrivals(root / "sink", self.secret)
        self.processes: list[subprocess.Popen[bytes]] = []
        self.serve: subprocess.Popen[bytes] | None = None
        self.http = httpx.AsyncClient(timeout=120,
                                      limits=httpx.Limits(max_connections=200))
        self.org_id = self.admin_key = ""
        self.ids: dict[str, str] = {}  # e-mail -> person id
        self.employees: list[int] = []  # the indexes of bench.people_import's employees

    def email(self, index: int) -> str:
        return f"p{index}@{PEOPLE_DOMAIN}"

    def cli(self, *args: str) -> str:
        done = subprocess.run(timebot_command(*args), env=self.env, capture_output=True,
                              text=True, timeout=1800)
        if done.returncode:
            raise RuntimeError(f"timebot {' '.join(args)}: {done.stderr[-2000:]}")
        return done.stdout

    async def start(self) -> None:
        self.processes.append(spawn([sys.executable, "-m", "bench.monday_sink",
                                     str(self.relay_port), str(self.root / "sink")],
                                    None, self.root / "sink.log"))
        users = [f"{slack_user(n)}={self.email(n)}" for n in range(self.people)]
        self.processes.append(spawn([sys.executable, "-m", "tests.bot.slack.fake_slack",
                                     str(self.fake.port), *users], None, self.root / "fake.log"))
        wait_up(f"{self.fake.base_url}/response/up", self.processes[-1])
        started = time.perf_counter()
        created = json.loads(self.cli("service", "init", "--org", "Monday", "--admin-name",
                                      "Operator", "--admin-email", f"op@{PEOPLE_DOMAIN}"))
        self.org_id, self.admin_key = created["organisation"]["id"], created["admin"]["apikey"]
        people_file = self.root / "people.csv"
        people_file.write_text(csv_text(self.people), encoding="utf-8")
        imported = self.cli("service", "import", "--org", self.org_id, str(people_file))
        self.cli("reminders", "send", "--org", self.org_id, "--at", EPOCH_AT)
        note(f"monday: {imported.splitlines()[-1]} in {time.perf_counter() - started:.1f} s "
             "(init, import, the scheduler's epoch)")
        log = self.root / "timebot.log"
        self.serve = spawn(serve_command(self.workers, *(
            [diagnosed_program()] if os.environ.get("BENCH_DIAGNOSE") else [])), self.env, log)
        await until_ready(self.serve, self.http, self.base, log, self.workers, 1200)
        persons = await self.gql("{ getPersons { id email } }", {})
        self.ids = {p["email"]: p["id"] for p in persons["getPersons"]}
        self.employees = [n for n, line in enumerate(csv_text(self.people).splitlines()[1:])
                          if line.split(",")[2] == "employee"]
        await self.gql("mutation($s: [SvcApprovalStageInput]) { "
                       "editOrganisationApprovalStages(stages: $s) { id } }",
                       {"s": [{"type": "ppm"}]})
        await self._records()
        await self.settle("the set-up")

    async def _records(self) -> None:
        """A day of eight hours in each submitted week of every employee (aliased mutations,
        RECORDS_A_REQUEST a request)."""
        items = [(self.ids[self.email(n)], week + DAY_MS + 32_400_000)
                 for week in WEEKS.values() for n in self.employees]
        batches = [items[i:i + RECORDS_A_REQUEST] for i in range(0, len(items),
                                                                   RECORDS_A_REQUEST)]
        semaphore = asyncio.Semaphore(4)

        async def batch(part: list[tuple[str, int]]) -> None:
            fields = " ".join(f'r{i}: addTimeRecord(personId: "{person}", startTime: {start}, '
                              'duration: 28800000) { id }'
                              for i, (person, start) in enumerate(part))
            async with semaphore:
                await self.gql(f"mutation {{ {fields} }}", {})

        started = time.perf_counter()
        await asyncio.gather(*(batch(part) for part in batches))
        note(f"monday: {len(items)} time records in {time.perf_counter() - started:.1f} s")

    async def gql(self, query: str, variables: dict[str, Any]) -> Any:
        response = await self.http.post(f"{self.base}/graphql",
                                        json={"query": query, "variables": variables},
                                        headers={"apikey": self.admin_key})
        if response.status_code != 200:
            raise RuntimeError(f"HTTP {response.status_code}: {response.text[:2000]}")
        body = response.json()
        if body.get("errors") or body.get("permissionsErrors"):
            raise RuntimeError(f"HTTP {response.status_code}: {str(body)[:2000]}")
        return body["data"]

    async def settle(self, what: str) -> None:
        """Until timebot's processes are idle (bench.serve.settled_cpu) and neither a mail
        arrived at the relay nor a message at the fake Slack for 3 s (the Slack sender paces
        its DMs, a second apart in a channel): what the last phase set off is done. Then the
        PostgreSQL databases analysed, as autovacuum would have by then (bench.mail_world.
        analyse)."""
        assert self.serve is not None
        while True:
            await settled_cpu(self.serve.pid, what)
            self.arrivals.refresh()
            before = (self.arrivals.total, await self.slack_calls("chat.postMessage"))
            await asyncio.sleep(3.0)
            self.arrivals.refresh()
            if (self.arrivals.total, await self.slack_calls("chat.postMessage")) == before:
                break
        await analyse(self.databases)

    async def slack_posts_since(self, monotonic: float) -> list[float]:
        """When (time.monotonic(), the machine's clock) each chat.postMessage since then was
        made."""
        calls = (await self.http.get(f"{self.fake.base_url}/calls/chat.postMessage")).json()
        return [call["at"] for call in calls if call["at"] >= monotonic]

    async def slack_calls(self, method: str) -> int:
        response = await self.http.get(f"{self.fake.base_url}/count/{method}")
        return int(response.json()["count"])

    async def stop(self) -> None:
        await self.http.aclose()
        if self.serve is not None and self.serve.poll() is None:
            self.serve.terminate()
            try:
                self.serve.wait(timeout=30)
            except subprocess.TimeoutExpired:
                note("monday: timebot serve did not stop within 30 s of SIGTERM, killed")
                kill_tree(self.serve)
        if os.environ.get("BENCH_LOG"):  # keep timebot's log, for diagnosis
            shutil.copyfile(self.root / "timebot.log", os.environ["BENCH_LOG"])
        for process in self.processes:
            stop(process)
