"""A release's timebot filled through its public interfaces only: the CLI (`service init`,
`service import`, `service apikey`), GraphQL over HTTP with the people's keys, SMTP to its
listener, the sign-in pages and Slack's OAuth install against the test's fake Slack.

Two runs of `timebot serve`: the first writes its mail to the Maildir outbox (the review mails
whose reply addresses and one-click links the upgrade test uses, the sign-in code of the Slack
install); the second relays to a closed port, so that what it mails waits in the queue, and
receives one mail while the service's database refuses it (left unprocessed). Returns what
the upgrade test checks (the manifest's part for this backend)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from email.message import EmailMessage
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import httpx

from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.harness import SIGNING_SECRET
from tests.net import free_port
from tests.protocol.test_inbox_outage import allow_connections
from tests.support import sqlite_write_lock_held
from tests.upgrade.harness import (
    MAIL_DOMAIN,
    Instance,
    eventually,
    gql,
    maildir_messages,
    send_mail,
    text_of,
)
from tests.upgrade.queries import answers
from tests.upgrade.rows import pg_dsn

DAY, HOUR = 86_400_000, 3_600_000
WEEK1 = 1_791_158_400_000  # Monday 5 October 2026, 00:00 UTC
WEEK2 = WEEK1 + 7 * DAY
TEAM = "T0UPGRADE"
PEOPLE_CSV = """Name,E-mail,Role,Manager,Tags
Mia Manager,mia@acme.example,manager,ada@acme.example,Leads
Max Manager,max@acme.example,manager,ada@acme.example,Leads
Eve Employee,eve@acme.example,employee,mia@acme.example,Dev;Remote
Emil Employee,emil@acme.example,,mia@acme.example,Dev
Erin Employee,erin@acme.example,employee,max@acme.example,Ops
Ezra Employee,ezra@acme.example,employee,max@acme.example,Ops
Ian Inbound,ian@acme.example,employee,max@acme.example,
"""
ADMIN = "ada@acme.example"
SUBMIT = ("mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
          "personId: $p, startTime: $s, endTime: $e) { id submitId status } }")
RECORD = ("mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!, $pr: [SvcId], $t: SvcId) {"
          " addTimeRecord(startTime: $s, duration: $d, personId: $p, projectIds: $pr,"
          " taskId: $t) { id } }")
COMMENT = ("mutation($id: SvcId!, $c: String!) { editTimeRecordComment(id: $id, comment: $c)"
           " { id } }")
LINK = re.compile(r"https?://\S+/(a|r)/([a-z2-7]+)")
Gql = Callable[..., Awaitable[dict[str, Any]]]


async def fill(instance: Instance) -> dict[str, Any]:
    instance.data_dir.mkdir(parents=True, exist_ok=True)
    people = await _people(instance)
    fake = await FakeSlack.start()
    fake.add_team(TEAM, "Acme Slack")
    try:
        filled = await _mailing_to_maildir(instance, people, fake)
        filled.update(await _relay_down(instance, people, filled, slack_env(fake)))
    finally:
        await fake.stop()
    waiting = await _outbox(instance, "queued")
    filled["outbox_waiting"] = {"count": len(waiting), "message_ids": sorted(waiting)}
    return filled


def _as(http: httpx.AsyncClient, instance: Instance, person: dict[str, str]) -> Gql:
    return lambda query, variables=None: gql(http, instance.base, person["apikey"], query,
                                             variables)


async def _mailing_to_maildir(instance: Instance, people: dict[str, dict[str, str]],
                              fake: FakeSlack) -> dict[str, Any]:
    """The first run: everything but the waiting and the unprocessed mail."""
    async with instance.serving(**slack_env(fake)), httpx.AsyncClient(timeout=30) as http:
        def as_(who: str) -> Gql:
            return _as(http, instance, people[who])
        structure = await _structure(as_)
        pending = await _timesheets(instance, as_, people, structure)
        await _slack_install(instance, http, fake)
    return {"people": people, "structure": structure, "pending": pending,
            "slack": {"team": TEAM, "token": fake.token_of(TEAM)}}


async def _relay_down(instance: Instance, people: dict[str, dict[str, str]],
                      filled: dict[str, Any], slack: dict[str, str]) -> dict[str, Any]:
    """The second run, relaying to a port nothing listens on: Emil's second week submitted (its
    review mail waits), the read queries' answers, then Ian's mail received while the
    service's database cannot answer, and the release stopped in that outage."""
    relay = f"127.0.0.1:{free_port()}"
    async with AsyncExitStack() as outage:  # outlasts the server
        async with instance.serving(TIMEBOT_SMTP_RELAY=relay, **slack), \
                httpx.AsyncClient(timeout=30) as http:
            emil = people["emil"]
            await _records(_as(http, instance, emil), emil["id"], WEEK2, filled["structure"])
            await _as(http, instance, emil)(SUBMIT, {"p": emil["id"], "s": WEEK2,
                                                     "e": WEEK2 + 7 * DAY})
            await eventually(lambda: _outbox(instance, "queued", "review"),
                             "the review mail queued while the relay is down")
            captured = await answers(http, instance.base, people,
                                     {**filled["structure"], **filled["pending"]})
            assert all("errors" not in body for body in captured.values()), captured
            await outage.enter_async_context(_service_refusing(instance))
            inbound = await _unprocessed_mail(instance)
    inbound["left"] = await _inbox_state(instance)
    return {"graphql": captured, "inbound": inbound}


def slack_env(fake: FakeSlack) -> dict[str, str]:
    """Slack's OAuth app, its Web API the fake's."""
    return {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "client-secret",
            "SLACK_SIGNING_SECRET": SIGNING_SECRET, "TIMEBOT_SLACK_API_URL": fake.api_url}


async def _people(instance: Instance) -> dict[str, dict[str, str]]:
    """The organisation, its people (by CSV, with roles, managers and tags) and their keys."""
    made = (await instance.cli("service", "init", "--org", "Acme", "--admin-name", "Ada Admin",
                               "--admin-email", ADMIN)).json()
    csv = instance.data_dir.parent / "people.csv"
    csv.write_text(PEOPLE_CSV)
    await instance.cli("service", "import", "--org", made["organisation"]["id"], str(csv))
    named = [("Ada Admin", ADMIN), *re.findall(r"^([^,\n]+),([a-z]+@acme\.example),",
                                                  PEOPLE_CSV, re.MULTILINE)]
    people = {}
    for name, address in named:
        key = (await instance.cli("service", "apikey", "--email", address)).out.strip()
        people[address.split("@")[0]] = {"name": name, "email": address, "apikey": key}
    people["org"] = {"id": made["organisation"]["id"]}
    return people


async def _structure(as_: Callable[[str], Gql]) -> dict[str, str]:
    admin = as_("ada")
    await admin("mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages("
                "stages: $s) { id } }", {"s": [{"type": "ppm", "quorum": "any"}]})
    ids: dict[str, str] = {}
    add = "mutation($n: SvcName!, $p: SvcId) { addProject(name: $n, parentId: $p) { id } }"
    ids["acme"] = (await admin(add, {"n": "Acme", "p": None}))["addProject"]["id"]
    for name in ("Website", "Mobile"):
        ids[name.lower()] = (await admin(add, {"n": name, "p": ids["acme"]}))["addProject"]["id"]
    for name in ("Design", "Build"):
        ids[name.lower()] = (await admin("mutation($n: SvcName!) { addTask(name: $n) { id } }",
                                         {"n": name}))["addTask"]["id"]
    field = await admin("mutation($n: SvcName!, $t: String!) { addCustomField(name: $n, "
                        "fieldType: $t) { id } }", {"n": "Cost centre", "t": "text"})
    ids["field"] = field["addCustomField"]["id"]
    await admin("mutation($id: SvcId!) { editCustomFieldVisibilityPersons(id: $id, enabled:"
                " true) { id } }", {"id": ids["field"]})
    tags = (await admin("{ getTags { id name } }"))["getTags"]
    ids["tag_dev"] = next(tag["id"] for tag in tags if tag["name"] == "Dev")
    value = await admin(
        "mutation($f: SvcId!, $e: SvcId!, $v: String) { addCustomFieldValue(customFieldId: $f,"
        " entityType: \"tag\", entityId: $e, textValue: $v) { id } }",
        {"f": ids["field"], "e": ids["tag_dev"], "v": "CC-4711"})
    ids["field_value"] = value["addCustomFieldValue"]["id"]
    await admin("mutation($n: String!, $u: String!) { addIntegrationWebhook(name: $n, url: $u,"
                " events: [\"*\"]) { id } }",
                {"n": "ops", "u": f"http://127.0.0.1:{free_port()}/hook"})
    return ids


async def _records(gql_of: Gql, person: str, week: int, ids: dict[str, str]) -> None:
    for day, hours, project, task, comment in (
            (0, 3, "website", "design", "Kickoff workshop"), (1, 5, "mobile", "build", "")):
        added = await gql_of(RECORD, {"s": week + day * DAY + 9 * HOUR, "d": hours * HOUR,
                                      "p": person, "pr": [ids[project]], "t": ids[task]})
        if comment:
            await gql_of(COMMENT, {"id": added["addTimeRecord"]["id"], "c": comment})


async def _timesheets(instance: Instance, as_: Callable[[str], Gql],
                      people: dict[str, dict[str, str]], ids: dict[str, str]) -> dict[str, Any]:
    """Week 1 of four employees submitted: Eve's approved, Emil's rejected, Erin's and Ezra's
    pending (their review mails' reply address and links kept); a Journal thread on Erin's."""
    for who in ("ada", "mia", "max", "eve", "emil", "erin", "ezra", "ian"):
        people[who]["id"] = (await as_(who)("{ currentPerson { id } }"))["currentPerson"]["id"]
    events = {}
    for who in ("eve", "emil", "erin", "ezra"):
        await _records(as_(who), people[who]["id"], WEEK1, ids)
        events[who] = (await as_(who)(SUBMIT, {"p": people[who]["id"], "s": WEEK1,
                                               "e": WEEK1 + 7 * DAY}))["submitTimesheet"]
    reviews = {who: await eventually(partial(_review_mail, instance, people[who]),
                                     f"the review mail of {who}'s timesheet")
               for who in ("eve", "emil", "erin", "ezra")}
    await as_("mia")("mutation($id: SvcId!) { approveTimesheet(id: $id) { id } }",
                     {"id": events["eve"]["submitId"]})
    await as_("mia")("mutation($id: SvcId!, $c: String!) { rejectTimesheet(id: $id, stage: 0,"
                     " comment: $c) { id } }",
                     {"id": events["emil"]["submitId"], "c": "Tuesday is missing"})
    thread = {"id": events["erin"]["id"], "type": "approvalEvent"}
    add = ("mutation($c: SvcMessageContent!, $r: SvcReferenceInput!) { addMessage(content: $c,"
           " reference: $r) { id } }")
    await as_("erin")(add, {"c": "Monday was the workshop", "r": thread})
    await as_("max")(add, {"c": "Thanks, noted", "r": thread})
    erin, ezra = reviews["erin"], reviews["ezra"]
    links = {kind: token for kind, token in LINK.findall(text_of(ezra))}
    return {
        "reply": {"owner": "erin", "approver": "max", "submit_id": events["erin"]["submitId"],
                  "reply_to": str(erin["Reply-To"]), "subject": str(erin["Subject"]),
                  "message_id": str(erin["Message-ID"])},
        "link": {"owner": "ezra", "approver": "max", "submit_id": events["ezra"]["submitId"],
                 "approve": links["a"], "reject": links["r"]},
        "journal": thread, "approved": events["eve"]["submitId"],
        "rejected": events["emil"]["submitId"],
    }


def _review_mail(instance: Instance, owner: dict[str, str]) -> EmailMessage | None:
    for message in maildir_messages(instance.data_dir / "outbox"):
        if f"Timesheet to review: {owner['name']}" in str(message["Subject"]):
            return message
    return None


async def _slack_install(instance: Instance, http: httpx.AsyncClient, fake: FakeSlack) -> None:
    """The administrator signs in (the code from the Maildir) and adds timebot to Slack."""
    async with httpx.AsyncClient(base_url=instance.base, timeout=30,
                                 headers={"x-forwarded-for": "10.1.2.3"}) as browser:
        assert (await browser.post("/signin/code", data={"email": ADMIN})).status_code == 200
        code = await eventually(lambda: _signin_code(instance), "the sign-in code")
        signed = await browser.post("/signin/pin", data={"pin": code})
        assert signed.status_code == 303, signed.text
        page = await browser.get("/account")
        link = re.search(r'href="(/slack/install\?[^"]+)"', page.text)
        assert link is not None, "no Add to Slack on the account page"
        started = await browser.get(link.group(1).replace("&amp;", "&"))
        assert started.status_code == 302, started.text
        fake.approve(TEAM)
        back = await http.get(started.headers["location"])
        assert back.status_code == 302
        target = urlsplit(back.headers["location"])
        done = await browser.get(f"{target.path}?{target.query}")
        assert done.headers["location"] == "/account?done=slack", done.text


def _signin_code(instance: Instance) -> str | None:
    for message in maildir_messages(instance.data_dir / "outbox"):
        found = re.search(r"sign-in code: (\d{6})", str(message["Subject"]))
        if found and ADMIN in str(message["To"]):
            return found.group(1)
    return None


@asynccontextmanager
async def _service_refusing(instance: Instance) -> AsyncIterator[None]:
    """The service's database unavailable: PostgreSQL refuses connections; SQLite's file is
    held by another connection's write transaction."""
    if instance.databases:
        await allow_connections(instance.databases[0], False)
        try:
            yield
        finally:
            await allow_connections(instance.databases[0], True)
        return
    with sqlite_write_lock_held(instance.data_dir / "service.db"):
        yield


async def _unprocessed_mail(instance: Instance) -> dict[str, Any]:
    """Ian's time entry by mail, accepted and kept in the inbox while the service's database
    cannot answer (the caller stops the release before it can be processed)."""
    message_id = "<ian-upgrade-1@client.example.com>"
    await send_mail(instance.smtp_port, "ian@acme.example", f"time@{MAIL_DOMAIN}",
                    "my hours", "2h @acme/website answering mail\n", message_id)
    await eventually(lambda: _inbox_attempted(instance), "the inbox's first attempt")
    return {"sender": "ian@acme.example", "message_id": message_id}


async def _select(instance: Instance, query: str) -> list[tuple[Any, ...]]:
    """Rows of the bot's database, read without either version's code."""
    if not instance.databases:
        connection = sqlite3.connect(f"file:{instance.data_dir / 'bot.db'}?mode=ro", uri=True)
        try:
            return list(connection.execute(query))
        finally:
            connection.close()
    pg = await asyncpg.connect(pg_dsn(instance.databases[1]))
    try:
        return [tuple(row) for row in await pg.fetch(query)]
    finally:
        await pg.close()


async def _inbox_state(instance: Instance) -> list[Any]:
    rows = await _select(instance, "SELECT status, attempts FROM inbox_messages"
                         " WHERE mail_from = 'ian@acme.example'")
    return list(rows[0]) if rows else []


async def _inbox_attempted(instance: Instance) -> bool:
    """Taken up once (SQLite: the attempt waits on the lock; PostgreSQL: it failed)."""
    state = await _inbox_state(instance)
    return bool(state) and state[0] != "done" and state[1] >= 1


async def _outbox(instance: Instance, status: str, kind: str | None = None) -> list[str]:
    rows = await _select(instance, "SELECT message_id, kind FROM outbox_messages"
                         f" WHERE status = '{status}'")
    return [str(row[0]) for row in rows if kind is None or row[1] == kind]


def sqlite_checkpoint(path: Path) -> None:
    """The WAL written into the file, so that the file alone holds every row."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()

