"""A rolling upgrade on PostgreSQL: the previous release and head run side by side on one pair
of databases, as two replicas do while a deployment rolls, while approval replies come in by
mail and quick entries by Slack to both. Head migrates the schema under the running release
(expand only), the release goes on serving on it, then stops; head serves the rest. Every
reply is decided once and answered by one receipt, every Slack command logs one record — the
same reply delivered to both replicas and the same command sent to both included."""

from __future__ import annotations

import asyncio
import email
import email.policy
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest

from plumbing.release import VERSION
from service.db import schema_tree as service_tree
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.signing import SlackRequests, command_fields
from tests.net import free_port
from tests.pg import create_pg_database, drop_pg_database, pg_url
from tests.sheets_over_http import gql, submitted_to_max
from tests.timebot.serve_process import Served, serve_env, serving
from tests.timebot.test_cli import timebot
from tests.upgrade.releases import RELEASES, release_env
from timebot.state.db import schema_tree as bot_tree

# The revisions head migrates both databases to (its newest migrations, whatever they are).
HEAD_SCHEMA = (f"service:{'+'.join(sorted(service_tree('sqlite://').heads()))},"
               f"timebot:{'+'.join(sorted(bot_tree().heads()))}")

pytestmark = pytest.mark.slow

PREVIOUS = list(RELEASES)[-1]
AUTHSERV = "mx.rolling.test"
DOMAIN = "rolling.example"
SIGNING_SECRET = "rolling-signing-secret"
SHEETS = 12
COMMANDS = 8


def _outbox(data_dir: Path) -> list[EmailMessage]:
    folder = data_dir / "outbox" / "new"
    return [email.message_from_bytes(path.read_bytes(), policy=email.policy.default)  # type: ignore[misc]
            for path in sorted(folder.glob("*"))] if folder.exists() else []


def _to_max(data_dirs: list[Path]) -> list[EmailMessage]:
    return [message for data_dir in data_dirs for message in _outbox(data_dir)
            if f"max@{DOMAIN}" in str(message["To"])]


async def _wait(condition: Any, what: str, seconds: float = 90.0) -> Any:
    for _ in range(int(seconds * 10)):
        found = condition()
        if found:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def _reply(smtp_port: int, review: EmailMessage, message_id: str) -> None:
    process = await asyncio.create_subprocess_exec(
        "swaks", "--server", f"127.0.0.1:{smtp_port}", "--to", str(review["Reply-To"]),
        "--from", f"max@{DOMAIN}", "--helo", f"client.{DOMAIN}", "--timeout", "30",
        "--header", f"Subject: Re: {review['Subject']}",
        "--header", f"Message-Id: {message_id}",
        "--header", f"In-Reply-To: {review['Message-ID']}",
        "--add-header", f"Authentication-Results: {AUTHSERV}; dmarc=pass header.from={DOMAIN}",
        "--body", "approve\n", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")


class Replica:
    """One `timebot serve` of a release (None: head) on the shared databases."""

    def __init__(self, tmp_path: Path, name: str, databases: dict[str, str],
                 fake: FakeSlack, release: str | None) -> None:
        self.data_dir = tmp_path / name
        self.data_dir.mkdir()
        self.smtp_port = free_port()
        env = serve_env(
            self.data_dir, TIMEBOT_HTTP_PORT=str(free_port()),
            TIMEBOT_SMTP_PORT=str(self.smtp_port),
            TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS=AUTHSERV,
            SLACK_BOT_TOKEN="xoxb-rolling", SLACK_SIGNING_SECRET=SIGNING_SECRET,
            TIMEBOT_SLACK_API_URL=fake.api_url, **databases)
        self.env = release_env(release, env) if release else env
        self.served: Served | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.env['TIMEBOT_HTTP_PORT']}"


async def test_the_previous_release_and_head_serve_one_database_while_it_rolls(
    tmp_path: Path,
) -> None:
    names = [await create_pg_database(), await create_pg_database()]
    databases = {"TIMEBOT_SERVICE_DATABASE_URL": pg_url(names[0]),
                 "TIMEBOT_DATABASE_URL": pg_url(names[1])}
    fake = await FakeSlack.start()
    old = Replica(tmp_path, "old", databases, fake, PREVIOUS)
    new = Replica(tmp_path, "new", databases, fake, None)
    try:
        async with httpx.AsyncClient(timeout=60) as http, AsyncExitStack() as old_stack:
            created = (await timebot(old.env, "service", "init", "--org", "Rolling",
                                     "--admin-name", "Ada", "--admin-email", f"ada@{DOMAIN}"))
            assert created.code == 0, created.err
            admin = created.json()["admin"]["apikey"]
            old.served = await old_stack.enter_async_context(
                serving(old.env, cwd=old.data_dir))
            health = (await http.get(f"{old.base}/healthz")).json()
            assert health["version"] == PREVIOUS, health
            people = await _set_up(http, old.base, admin, fake)

            reviews = await _wait(lambda: (found := [m for m in _to_max([old.data_dir])
                                                     if not m["In-Reply-To"]])
                                  and len(found) >= SHEETS and found, "the review requests")
            assert len(reviews) == SHEETS

            async with serving(new.env, cwd=new.data_dir) as new.served:
                health = (await http.get(f"{new.base}/healthz")).json()
                assert health["version"] == VERSION and health["schema"] == HEAD_SCHEMA, health
                # The release goes on serving on the schema head migrated under it.
                assert (await http.get(f"{old.base}/readyz")).status_code == 200

                replicas = [old, new]
                replies: list[str] = []
                sends = []
                for index, review in enumerate(reviews[: SHEETS // 2]):
                    message_id = f"<{uuid.uuid4().hex}@{DOMAIN}>"
                    replies.append(message_id)
                    sends.append(_reply(replicas[index % 2].smtp_port, review, message_id))
                # The same reply delivered to both replicas (an MTA retrying elsewhere).
                sends.append(_reply(new.smtp_port, reviews[0], replies[0]))
                commands = [_command(http, replicas[index % 2], fake, people[index], index)
                            for index in range(COMMANDS // 2)]
                # The same slash command sent to both (same trigger): logged once.
                duplicate = command_fields(fake, "/time", "1h @Website rolling dup",
                                           user=people[-1][0])
                commands += [_post_command(http, replica, fake, duplicate) for replica in replicas]
                await asyncio.gather(*sends, *commands)

                await old_stack.aclose()  # the release's replica is replaced: SIGTERM
                for review in reviews[SHEETS // 2:]:
                    message_id = f"<{uuid.uuid4().hex}@{DOMAIN}>"
                    replies.append(message_id)
                    await _reply(new.smtp_port, review, message_id)
                await asyncio.gather(*(
                    _command(http, new, fake, people[index], index)
                    for index in range(COMMANDS // 2, COMMANDS)))

                data_dirs = [old.data_dir, new.data_dir]

                def receipts() -> Counter[str]:
                    return Counter(str(m["In-Reply-To"]).strip()
                                   for m in _to_max(data_dirs) if m["In-Reply-To"])

                await _wait(lambda: len(receipts()) >= SHEETS, "a receipt for every reply")
                await asyncio.sleep(1.0)  # a doubled receipt would have come by now
                assert receipts() == Counter(dict.fromkeys(replies, 1)), receipts()
                for message in _to_max(data_dirs):
                    if message["In-Reply-To"]:
                        body = message.get_body(("plain",))
                        assert body is not None
                        assert str(body.get_content()).splitlines()[0] == "Approved", message

                pending = await gql(http, new.base, admin, "{ getPendingApprovals(showAll: "
                                     "true) { submitId } }")
                assert pending["getPendingApprovals"] == []
                for index, (_user, person_id) in enumerate(people[:COMMANDS]):
                    comments = await _comments(http, new.base, admin, person_id)
                    assert comments.count(f"rolling {index}") == 1, comments
                dup = await _comments(http, new.base, admin, people[-1][1])
                assert dup.count("rolling dup") == 1, dup
    finally:
        await fake.stop()
        for name in names:
            await drop_pg_database(name)


async def _set_up(http: httpx.AsyncClient, base: str, admin: str,
                  fake: FakeSlack) -> list[tuple[str, str]]:
    """Max approves SHEETS submitted timesheets; each of their people has a Slack user."""
    await gql(http, base, admin, "mutation { addProject(name: \"Website\") { id } }")
    users: dict[str, str] = {}

    def slack_user(index: int, person: str, address: str) -> None:
        users[person] = f"UROLL{index:03d}"
        fake.add_user(users[person], address, name=f"Erin {index}", tz="Europe/Berlin")

    people = await submitted_to_max(http, base, admin, DOMAIN, SHEETS, slack_user)
    return [(users[person], person) for person in people]


async def _post_command(http: httpx.AsyncClient, replica: Replica, fake: FakeSlack,
                        fields: dict[str, str]) -> None:
    slack = SlackRequests(http, f"{replica.base}/slack/events", SIGNING_SECRET, fake)
    response = await slack.form(fields)
    assert response.status_code == 200, response.text


async def _command(http: httpx.AsyncClient, replica: Replica, fake: FakeSlack,
                   person: tuple[str, str], index: int) -> None:
    await _post_command(http, replica, fake, command_fields(
        fake, "/time", f"1h @Website rolling {index}", user=person[0]))


async def _comments(http: httpx.AsyncClient, base: str, admin: str, person: str) -> list[str]:
    async def read() -> list[str]:
        data = await gql(http, base, admin, "query($p: SvcId!) { getTimeRecords(filter: "
                          "[{personId: $p}]) { comment } }", p=person)
        return [str(record["comment"]) for record in data["getTimeRecords"]]

    for _ in range(300):  # a command's work follows its acknowledgement
        found = await read()
        if any("rolling" in comment for comment in found):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    return await read()
