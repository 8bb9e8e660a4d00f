"""The account's life over its real interfaces: scheduling and cancelling the deletion over
GraphQL (administrators told by e-mail, in the outbox), the purge when the grace period ends
and by `timebot service purge`, the subscription by `timebot service subscription`."""

from __future__ import annotations

import asyncio
import mailbox
import time
from email.header import decode_header, make_header
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from service.models import Base
from service.organisation.account_models import ServiceMail
from tests.mail.reviews_support import runtime_of
from tests.service.test_approvals_support import (
    add_project,
    add_record,
    add_tag,
    manage,
    set_stages,
    submit,
)
from tests.support import DAY_MS, LiveServer, Org, mail_of
from tests.timebot.cli_in_process import timebot_in_process
from tests.timebot.test_cli import cli_env, timebot
from timebot.state.claim_choice import DONE

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

SCHEDULE = "mutation { scheduleOrganisationDeletion { id scheduledDeletion { by { id } at } } }"
CANCEL = "mutation { cancelOrganisationDeletion { id scheduledDeletion { by { id } at } } }"
READ = "{ currentOrganisation { id scheduledDeletion { by { id name } at } } }"
GRACE_MS = 7 * DAY_MS


def _subject(message: mailbox.MaildirMessage) -> str:
    return str(make_header(decode_header(str(message["Subject"]))))


async def mails_to(live: LiveServer, address: str, containing: str, count: int) -> list[str]:
    """Subjects of the outbox's mails to `address` whose subject contains `containing`, once
    `count` of them are there (or after 20 s, whatever is there)."""
    deadline = time.monotonic() + 20
    found: list[str] = []
    while time.monotonic() < deadline:
        box = mailbox.Maildir(live.settings.outbox_dir, create=False)
        found = [
            _subject(message)
            for message in box
            if address in str(message["To"]) and containing in _subject(message)
        ]
        if len(found) >= count:
            break
        await asyncio.sleep(0.2)
    return found


async def all_mail_delivered(org: Org, addresses: list[str]) -> None:
    """Until every mail the service wrote for the organisation is handed to timebot's outbox
    and every outbox message to `addresses` is delivered (or 20 s): a mail not in the Maildir
    then is one that was never written."""
    outbox = mail_of(runtime_of(org)).outbox
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        async with org.live.service.sessions() as session:
            not_handed = await session.scalar(
                select(func.count()).select_from(ServiceMail).where(
                    ServiceMail.organisation_id == org.id, ServiceMail.handed_ms.is_(None)))
        undelivered = [message for message in await outbox.messages()
                       if message.status != DONE and set(message.rcpt_tos) & set(addresses)]
        if not not_handed and not undelivered:
            return
        await asyncio.sleep(0.2)


def cli_environment(live: LiveServer, tmp_path: Path) -> dict[str, str]:
    extra = {"TIMEBOT_SECRET_KEY": live.settings.secret_key}
    if live.backend == "postgresql":
        extra["TIMEBOT_SERVICE_DATABASE_URL"] = live.settings.service_database_url
        extra["TIMEBOT_DATABASE_URL"] = live.settings.database_url
        return cli_env(tmp_path / "cli", **extra)
    return cli_env(live.settings.data_dir, **extra)


async def test_only_an_admin_schedules_and_every_admin_is_told_once(org: Org) -> None:
    second_admin = await org.add_member("Ben Boss", role="admin")
    employee = await org.add_member("Eve Staff")
    assert await employee.gql.denied(SCHEDULE) == ["Mutation.scheduleOrganisationDeletion"]
    assert (await org.admin.gql(READ))["currentOrganisation"]["scheduledDeletion"] is None

    now = org.live.clock.now_ms()
    data = await org.admin.gql(SCHEDULE)
    scheduled = data["scheduleOrganisationDeletion"]["scheduledDeletion"]
    assert scheduled["by"]["id"] == org.admin.id
    assert now + GRACE_MS <= scheduled["at"] <= org.live.clock.now_ms() + GRACE_MS
    # A retry keeps the first date and tells nobody twice.
    again = await org.admin.gql(SCHEDULE)
    assert again["scheduleOrganisationDeletion"]["scheduledDeletion"] == scheduled
    read = await employee.gql(READ)
    assert read["currentOrganisation"]["scheduledDeletion"]["at"] == scheduled["at"]

    for admin in (org.admin, second_admin):
        subjects = await mails_to(org.live, admin.email, "scheduled for deletion", 1)
        assert len(subjects) == 1, subjects
    assert await mails_to(org.live, employee.email, "deletion", 0) == []
    await all_mail_delivered(org, [org.admin.email, second_admin.email, employee.email])
    assert len(await mails_to(org.live, org.admin.email, "scheduled for deletion", 1)) == 1

    assert await employee.gql.denied(CANCEL) == ["Mutation.cancelOrganisationDeletion"]
    cancelled = await second_admin.gql(CANCEL)
    assert cancelled["cancelOrganisationDeletion"]["scheduledDeletion"] is None
    assert len(await mails_to(org.live, org.admin.email, "was cancelled", 1)) == 1
    message = await org.admin.gql.error(CANCEL)
    assert "not scheduled for deletion" in message

    trail = await org.admin.gql(
        "query($s: SvcTimestamp) { getAuditTrails(startTime: $s, "
        "operations: [\"scheduleOrganisationDeletion\", \"cancelOrganisationDeletion\"]) "
        "{ operationName person { id } } }",
        {"s": now - 1000},
    )
    names = sorted(entry["operationName"] for entry in trail["getAuditTrails"])
    assert names == ["cancelOrganisationDeletion", "scheduleOrganisationDeletion"]


async def test_the_grace_period_ends_and_the_keys_say_the_organisation_is_gone(org: Org) -> None:
    employee = await org.add_member("Eve Staff")
    integration = (await employee.gql("mutation { createApiKey { key } }"))["createApiKey"]["key"]
    await org.admin.gql(SCHEDULE)
    org.live.clock.offset_ms += GRACE_MS - 60_000
    cancelled = await org.admin.gql(CANCEL)  # a minute before the end: still cancellable
    assert cancelled["cancelOrganisationDeletion"]["scheduledDeletion"] is None
    await org.admin.gql(SCHEDULE)  # a new grace period starts now
    org.live.clock.offset_ms += GRACE_MS + 60_000
    assert "grace period has ended" in await org.admin.gql.error(CANCEL)

    deadline = time.monotonic() + 20
    body: dict[str, object] = {}
    while time.monotonic() < deadline:
        body = await employee.gql.body("{ currentPerson { id } }")
        if body.get("errors"):
            break
        await asyncio.sleep(0.2)
    assert body["errors"] == [{"message": "APIKeyError:CantFindLinkedOrganisation"}]
    assert (await org.admin.gql.body("{ currentPerson { id } }"))["errors"] == [
        {"message": "APIKeyError:CantFindLinkedOrganisation"}
    ]
    # An integration key (stored as its digest) is retired with the others.
    assert (await org.gql_for(integration).body("{ currentPerson { id } }"))["errors"] == [
        {"message": "APIKeyError:CantFindLinkedOrganisation"}
    ]
    unknown = await org.gql_for("0" * 40).body("{ currentPerson { id } }")
    assert unknown["errors"] == [{"message": "APIKeyError:InvalidKey"}]


async def _row_counts(live: LiveServer) -> dict[str, int]:
    async with live.service.sessions() as session:
        counts = {}
        for table in Base.metadata.sorted_tables:
            counts[table.name] = int(
                await session.scalar(select(func.count()).select_from(table)) or 0
            )
        return counts


async def _rows_of(live: LiveServer, org_id: str) -> dict[str, int]:
    async with live.service.sessions() as session:
        found = {}
        for table in Base.metadata.sorted_tables:
            if "organisation_id" in table.c:
                statement = select(func.count()).select_from(table).where(
                    table.c.organisation_id == org_id
                )
                found[table.name] = int(await session.scalar(statement) or 0)
        return found


async def test_purge_by_the_operator_leaves_no_row_of_the_organisation(
    org: Org, tmp_path: Path
) -> None:
    live = org.live
    env = cli_environment(live, tmp_path)
    # Through the installed script once; the other runs in this process (cli_in_process).
    refused = await timebot(env, "service", "purge", "--org", org.id)
    assert refused.code != 0 and "not scheduled for deletion" in refused.err

    before = await _row_counts(live)
    doomed = await (await _new_org_with_everything(org))
    await doomed.admin.gql(SCHEDULE)
    await mails_to(live, doomed.admin.email, "scheduled for deletion", 1)
    during = await _rows_of(live, doomed.id)
    assert sum(during.values()) > 20, during

    purged = await timebot_in_process(env, "service", "purge", "--org", doomed.id)
    assert purged.code == 0, purged.err
    assert await _rows_of(live, doomed.id) == {name: 0 for name in during}
    after = await _row_counts(live)
    changed = {name: (before[name], after[name]) for name in before if before[name] != after[name]}
    assert set(changed) <= {"retired_keys"}, changed
    async with live.service.sessions() as session:
        leftovers = await session.scalar(
            text("SELECT count(*) FROM organisations WHERE id = :id"), {"id": doomed.id}
        )
    assert leftovers == 0
    answer = await doomed.admin.gql.body("{ currentPerson { id } }")
    assert answer["errors"] == [{"message": "APIKeyError:CantFindLinkedOrganisation"}]
    again = await timebot_in_process(env, "service", "purge", "--org", doomed.id)
    assert again.code != 0 and "no organisation" in again.err


async def _new_org_with_everything(org: Org):  # type: ignore[no-untyped-def]
    from tests.support import new_org

    async def build() -> Org:
        doomed = await new_org(org.live, org.http, "Doomed")
        manager = await doomed.add_member("Max Manager", role="manager")
        worker = await doomed.add_member("Wes Worker")
        await manage(doomed, manager, worker)
        project = await add_project(doomed, "Apollo", managers=(manager,))
        await add_tag(doomed, "Team", people=(worker,))
        await add_record(worker, worker, projects=(project,))
        await set_stages(doomed, [{"type": "ppm", "quorum": "any"}])
        await submit(worker, worker)
        return doomed

    return build()


async def test_an_inactive_subscription_answers_402_until_active_again(
    org: Org, tmp_path: Path
) -> None:
    env = cli_environment(org.live, tmp_path)
    off = await timebot_in_process(env, "service", "subscription", "--org", org.id, "--inactive")
    assert off.code == 0, off.err
    response = await org.admin.gql.raw("{ currentPerson { id } }")
    assert response.status_code == 402
    assert response.json()["errors"] == [{"message": "AccountIsInactive"}]
    on = await timebot_in_process(env, "service", "subscription", "--org", org.id, "--active")
    assert on.code == 0, on.err
    assert (await org.admin.gql("{ currentPerson { id } }"))["currentPerson"]["id"] == org.admin.id
    missing = await timebot_in_process(env, "service", "subscription", "--org", "f" * 24,
                                       "--active")
    assert missing.code != 0 and "no organisation" in missing.err
    # Through the installed script once; the other runs in this process (cli_in_process).
    neither = await timebot(env, "service", "subscription", "--org", org.id)
    assert neither.code != 0 and "--inactive" in neither.err
