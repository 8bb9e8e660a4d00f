"""An upgrade from each release to head loses nothing: the databases a release made and filled
(tests/upgrade/fixtures/<version>, made by make_fixture.py with the release's own code) are
opened by head's `timebot serve` on SQLite and PostgreSQL. Head migrates them; every row of the
release's tables reads back the same; the release's GraphQL answers are head's; old API keys,
reply addresses and one-click links work; the mail the release left waiting is sent once, and
the mail it received but did not process is processed once (also across a restart); new
writes work; /healthz names head's release and schema."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from plumbing.release import VERSION
from shell.build_info import schema_revisions
from shell.supervisor import migrate_all
from tests.bot.slack.fake_slack import FakeSlack
from tests.upgrade.fill import SUBMIT, slack_env
from tests.upgrade.harness import MAIL_DOMAIN, Instance, eventually, gql, send_mail
from tests.upgrade.queries import WEEK1, answers
from tests.upgrade.releases import RELEASES
from tests.upgrade.restore import FIXTURES, Sink, head_clock, restored
from tests.upgrade.rows import Tables, differences, pg_tables, sqlite_tables
from timebot.config import load_settings

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

WEEK = 7 * 86_400_000
CASES = [pytest.param(version, backend, id=f"{version}-{backend}")
         for version in RELEASES if (FIXTURES / version / "manifest.json").is_file()
         for backend in ("sqlite", "postgresql")]
MIA_SLACK = "U0MIAUPGRADE"
STATE = ("query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalState("
         "personId: $p, startTime: $s, endTime: $e) { status } }")


async def _tables(instance: Instance, name: str, wanted: Tables | None) -> Tables:
    """The fingerprints of one database ("service", "bot") of the instance."""
    if instance.databases:
        return await pg_tables(instance.databases[["service", "bot"].index(name)], wanted)
    return sqlite_tables(instance.data_dir / f"{name}.db", wanted)


def test_every_release_has_its_fixture() -> None:
    assert [version for version in RELEASES
            if not (FIXTURES / version / "manifest.json").is_file()] == []


@pytest.mark.parametrize(("version", "backend"), CASES)
async def test_an_upgrade_from_a_release_loses_nothing(
    version: str, backend: str, tmp_path: Path
) -> None:
    manifest = json.loads((FIXTURES / version / "manifest.json").read_text())
    fixture: dict[str, Any] = manifest["backends"][backend]
    people = fixture["people"]
    async with restored(version, backend, tmp_path) as instance, Sink().running() as sink, \
            slack_of(fixture) as fake:
        env = {**head_clock(fixture["made_ms"]), **sink.relay(), **slack_env(fake),
               "TIMEBOT_SECRET_KEY": manifest["secret_key"]}
        settings = load_settings(instance.env(**env))
        started = time.perf_counter()
        await migrate_all(settings)  # what `timebot serve` does first
        took = time.perf_counter() - started
        carried, added = 0, []
        for name, expected in fixture["tables"].items():
            found = await _tables(instance, name, expected)
            assert differences(expected, found) == [], name
            carried += sum(table["rows"] for table in found.values())
            added += sorted(set(await _tables(instance, name, None)) - set(expected))
        print(f"\n{version} -> {VERSION} on {backend}: migrated in {took:.2f} s, {carried} rows"
              f" carried, tables added: {', '.join(added) or 'none'}")

        async with instance.serving(**env), httpx.AsyncClient(timeout=30) as http:
            health = (await http.get(f"{instance.base}/healthz")).json()
            assert health == {"status": "ok", "version": VERSION,
                              "schema": schema_revisions(settings)}
            assert await answers(http, instance.base, people,
                                 {**fixture["structure"], **fixture["pending"]}) == \
                fixture["graphql"]
            await _waiting_mail_sent(sink, fixture)
            await _reply_address_works(instance, http, sink, fixture)
            await _links_work(instance, http, fixture)
            await _new_writes(instance, http, people)
            await _slack_installation_works(instance, http, fake, fixture)
        async with instance.serving(**env), httpx.AsyncClient(timeout=30) as http:
            # A restart: its barrier is a new mail's receipt, sent after its queues were read.
            await _log_by_mail(instance, sink, people["eve"]["email"], "<after-restart@x.test>")
            ian = people["ian"]
            records = await gql(http, instance.base, ian["apikey"],
                                "query($p: SvcId) { getTimeRecords(filter: [{personId: $p}])"
                                " { duration } }", {"p": ian["id"]})
        assert records["getTimeRecords"] == [{"duration": 2 * 3_600_000}]
        for message_id in fixture["outbox_waiting"]["message_ids"]:
            assert sink.message_ids()[message_id] == 1, message_id
        assert len(sink.to(fixture["inbound"]["sender"], "Re: my hours")) == 1

async def _waiting_mail_sent(sink: Sink, fixture: dict[str, Any]) -> None:
    """The mail the release left in its queue reaches the relay; the mail it received and
    had not processed is (its receipt says so)."""
    waiting = fixture["outbox_waiting"]["message_ids"]
    assert len(waiting) == fixture["outbox_waiting"]["count"] >= 1
    await eventually(lambda: all(sink.message_ids()[m] for m in waiting),
                     "the release's waiting mail at the relay")
    sender = fixture["inbound"]["sender"]
    await eventually(lambda: sink.to(sender, "Re: my hours", "Logged 1 entry"),
                     "the receipt of the release's unprocessed mail")


async def _reply_address_works(instance: Instance, http: httpx.AsyncClient, sink: Sink,
                               fixture: dict[str, Any]) -> None:
    reply, people = fixture["pending"]["reply"], fixture["people"]
    approver, owner = people[reply["approver"]], people[reply["owner"]]
    await send_mail(instance.smtp_port, approver["email"], reply["reply_to"],
                    f"Re: {reply['subject']}", "approve\n", "<approve-after-upgrade@x.test>",
                    In_Reply_To=reply["message_id"])
    await eventually(lambda: sink.to(approver["email"], "Re: Timesheet to review", "Approved"),
                     "the Approved receipt")
    state = await gql(http, instance.base, owner["apikey"], STATE,
                      {"p": owner["id"], "s": WEEK1, "e": WEEK1 + WEEK})
    assert state["getApprovalState"]["status"] == "a"


async def _links_work(instance: Instance, http: httpx.AsyncClient,
                      fixture: dict[str, Any]) -> None:
    link, people = fixture["pending"]["link"], fixture["people"]
    owner = people[link["owner"]]
    for kind in ("approve", "reject"):  # shown, nothing decided
        page = await http.get(f"{instance.base}/{kind[0]}/{link[kind]}")
        assert page.status_code == 200 and owner["name"] in page.text, page.text
    decided = await http.post(f"{instance.base}/a/{link['approve']}")
    assert decided.status_code == 200 and "You approved the timesheet" in decided.text, \
        decided.text
    state = await gql(http, instance.base, owner["apikey"], STATE,
                      {"p": owner["id"], "s": WEEK1, "e": WEEK1 + WEEK})
    assert state["getApprovalState"]["status"] == "a"


async def _new_writes(instance: Instance, http: httpx.AsyncClient,
                      people: dict[str, Any]) -> None:
    """A new time record and a new person, read back."""
    eve, ada = people["eve"], people["ada"]
    start = WEEK1 + 2 * WEEK + 9 * 3_600_000
    added = await gql(http, instance.base, eve["apikey"],
                      "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s,"
                      " duration: 3600000, personId: $p) { id } }", {"s": start, "p": eve["id"]})
    read = await gql(http, instance.base, eve["apikey"],
                     "query($s: SvcTimestamp, $p: SvcId) { getTimeRecords(startTime: $s,"
                     " filter: [{personId: $p}]) { id duration } }", {"s": start, "p": eve["id"]})
    assert read["getTimeRecords"] == [{"id": added["addTimeRecord"]["id"], "duration": 3_600_000}]
    roles = (await gql(http, instance.base, ada["apikey"], "{ getRoles { id name } }"))
    role = next(r["id"] for r in roles["getRoles"] if r["name"] == "Employee")
    person = await gql(http, instance.base, ada["apikey"],
                       "mutation($r: SvcId!) { addPerson(name: \"Nia New\", email:"
                       " \"nia@acme.example\", roleId: $r) { id email } }", {"r": role})
    assert person["addPerson"]["email"] == "nia@acme.example"


@asynccontextmanager
async def slack_of(fixture: dict[str, Any]) -> AsyncIterator[FakeSlack]:
    """The fake Slack, knowing the bot token the release was given at its OAuth install (and
    Mia as a member of the workspace)."""
    fake = await FakeSlack.start()
    fake.add_team(fixture["slack"]["team"], "Acme Slack")
    fake.tokens[fixture["slack"]["token"]] = fixture["slack"]["team"]
    fake.add_user(MIA_SLACK, fixture["people"]["mia"]["email"], name="Mia Manager",
                  team=fixture["slack"]["team"])
    try:
        yield fake
    finally:
        await fake.stop()


async def _slack_installation_works(instance: Instance, http: httpx.AsyncClient,
                                    fake: FakeSlack, fixture: dict[str, Any]) -> None:
    """The installation's bot token, sealed by the release, is unsealed by head: Eve's new
    submission reaches Mia in Slack with it."""
    eve = fixture["people"]["eve"]
    week = WEEK1 + 2 * WEEK
    await gql(http, instance.base, eve["apikey"], SUBMIT,
              {"p": eve["id"], "s": week, "e": week + WEEK})
    (dm,) = await fake.wait_for("chat.postMessage", channel=MIA_SLACK, seconds=60)
    assert dm.token == fixture["slack"]["token"]


async def _log_by_mail(instance: Instance, sink: Sink, sender: str, message_id: str) -> None:
    """A time entry by mail and its receipt: the restarted server has worked its queues."""
    await send_mail(instance.smtp_port, sender, f"time@{MAIL_DOMAIN}", "more hours",
                    "1h @acme/website after the upgrade\n", message_id)
    await eventually(lambda: sink.to(sender, "Re: more hours", "Logged 1 entry"),
                     "the receipt after the restart")
