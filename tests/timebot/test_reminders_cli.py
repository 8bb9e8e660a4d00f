"""`timebot reminders preview|send` through the real command, on SQLite and PostgreSQL: the
operator sees who would be reminded of the last ended week (and why the others are not),
the digests and the approval reminders; `send` queues what is due once, a second run nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from plumbing.clock import Clock
from plumbing.db import unit_of_work
from service.embedded import EmbeddedService
from service.organisation.provisioning import add_person
from tests.migrated import create_migrated_pg_database, place_migrated_sqlite
from tests.pg import drop_pg_database_soon, pg_url
from tests.support import TEST_SECRET_KEY
from tests.timebot.cli_in_process import invoke
from tests.timebot.test_cli import Run
from timebot.notify.periods import last_ended_week

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

TIMEBOT = str(Path(sys.executable).with_name("timebot"))
HOUR_MS = 3_600_000


def _env(world: dict[str, Any]) -> dict[str, str]:
    return {**os.environ, "TIMEBOT_DATA_DIR": str(world["dir"]),
            "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY, **world["urls"]}


def run(world: dict[str, Any], *args: str, check: bool = True) -> Run:
    """`timebot ARGS` in this process (tests.timebot.cli_in_process): what the commands do."""
    return _checked(invoke(_env(world), *args), args, check)


def run_script(world: dict[str, Any], *args: str, check: bool = True) -> Run:
    """`timebot ARGS` through the installed script, a process of its own."""
    result = subprocess.run([TIMEBOT, *args], env=_env(world), capture_output=True, text=True,
                            timeout=180)
    return _checked(Run(result.returncode, result.stdout, result.stderr), args, check)


def _checked(result: Run, args: tuple[str, ...], check: bool) -> Run:
    if check and result.code != 0:
        raise AssertionError(f"timebot {' '.join(args)} failed: {result.err}")
    return result


async def _gql(service: EmbeddedService, key: str, query: str, variables: Any = None) -> Any:
    response = await service.executor.run({"query": query, "variables": variables or {}}, key)
    assert not response.body.get("errors"), response.body
    return response.body["data"]


async def _people(service_url: str, admin_key: str, week_start: int) -> dict[str, str]:
    """Bob with a draft week, Sue submitted, Archie archived (as at now: no clock trick)."""
    service = EmbeddedService(service_url, clock=Clock())
    await service.start()
    try:
        ids = {}
        org_id = (await _gql(service, admin_key, "{ currentOrganisation { id } }"))[
            "currentOrganisation"]["id"]
        for name in ("Bob Draft", "Sue Submitted", "Archie Archived"):
            email = name.split()[0].lower() + "@globex.example"
            async with unit_of_work(service.sessions) as session:
                person, _key = await add_person(session, org_id, name, email, "employee",
                                                service.clock.now_ms())
            ids[name] = person.id
        for name in ("Bob Draft", "Sue Submitted"):
            await _gql(service, admin_key,
                "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, "
                "duration: 7200000, personId: $p) { id } }",
                {"s": week_start + 33 * HOUR_MS, "p": ids[name]})
        # Approved by a named approver, who is reminded every 2 days.
        await _gql(service, admin_key,
            "mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s)"
            " { id } }", {"s": [{"type": "person", "quorum": "any",
                                 "personIds": [ids["Bob Draft"]]}]})
        await _gql(service, admin_key,
            "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 2) { id } }")
        await _gql(service, admin_key,
            "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { submitTimesheet("
            "personId: $p, startTime: $s, endTime: $e) { id } }",
            {"p": ids["Sue Submitted"], "s": week_start, "e": week_start + 7 * 24 * HOUR_MS})
        await _gql(service, admin_key, "mutation($id: SvcId!) { archivePerson(id: $id) { id } }",
                   {"id": ids["Archie Archived"]})
        return ids
    finally:
        await service.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
async def world(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    # Fresh databases already migrated (tests.migrated): what these commands do, not the
    # migrations, is under test.
    databases: list[str] = []
    urls: dict[str, str] = {}
    if request.param == "postgresql":
        databases = [await create_migrated_pg_database("timebot"),
                     await create_migrated_pg_database("service")]
        urls = {"TIMEBOT_DATABASE_URL": pg_url(databases[0]),
                "TIMEBOT_SERVICE_DATABASE_URL": pg_url(databases[1])}
    else:
        await place_migrated_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}", "timebot")
        await place_migrated_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'service.db'}", "service")
    world: dict[str, Any] = {"dir": tmp_path, "urls": urls}
    created = json.loads(run(world, "service", "init", "--org", "Globex", "--admin-name",
                             "Gina Admin", "--admin-email", "gina@globex.example").out)
    world["org"] = created["organisation"]["id"]
    world["admin_key"] = created["admin"]["apikey"]
    service_url = urls.get("TIMEBOT_SERVICE_DATABASE_URL") or \
        f"sqlite+aiosqlite:///{tmp_path / 'service.db'}"
    now = int(datetime.now(UTC).timestamp() * 1000)
    week = last_ended_week(now, "UTC")
    world["week"] = week
    world["at"] = min(week.end_ms + HOUR_MS, now)
    world["ids"] = await _people(service_url, created["admin"]["apikey"], week.start_ms)
    try:
        yield world
    finally:
        for name in databases:
            drop_pg_database_soon(name)


def _line(output: str, who: str) -> str:
    [line] = [line for line in output.splitlines() if who in line and "period reminder" in line]
    return line


def _serve_since_long_ago(world: dict[str, Any]) -> None:
    """As if timebot had served the organisation for weeks (its first tick's record)."""
    async def record() -> None:
        from sqlalchemy import insert

        from plumbing.db import create_engine
        from timebot.state.models import SchedulerEpoch

        engine = create_engine(world["urls"].get("TIMEBOT_DATABASE_URL")
                               or f"sqlite+aiosqlite:///{world['dir'] / 'bot.db'}")
        try:
            async with engine.begin() as connection:
                await connection.execute(insert(SchedulerEpoch).values(
                    organisation_id=world["org"], first_seen_ms=0))
        finally:
            await engine.dispose()

    asyncio.run(record())


def test_preview_says_who_and_why_not_then_send_queues_once(world: dict[str, Any]) -> None:
    at = datetime.fromtimestamp(world["at"] / 1000, UTC).isoformat()
    fresh = run(world, "reminders", "preview", "--org", world["org"], "--at", at).out
    # A fresh organisation: the week ended before timebot served it (no burst at first start).
    assert "before timebot first served" in _line(fresh, "bob@globex.example")
    _serve_since_long_ago(world)
    preview = run(world, "reminders", "preview", "--org", world["org"], "--at", at).out
    assert "due now" in _line(preview, "bob@globex.example")
    assert "due now" in _line(preview, "gina@globex.example")  # an empty week is reminded too
    assert "timesheet submitted" in _line(preview, "sue@globex.example")
    [waiting] = [line for line in preview.splitlines() if line.startswith("approval reminder")]
    assert "bob@globex.example" in waiting and "Sue Submitted, stage 1" in waiting
    assert "next reminder mail" in waiting and "(reminder 1, every 2 days)" in waiting
    assert "Archie Archived" not in preview  # archived people are not reminded of anything
    outbox = world["dir"] / "outbox" / "new"
    assert not outbox.exists() or not list(outbox.iterdir()), "a preview sends nothing"

    started_ms = int(datetime.now(UTC).timestamp() * 1000)
    sent = run(world, "reminders", "send", "--org", world["org"], "--at", at).out
    assert "queued 2 " in sent
    # Handed over now, not as at --at: leases taken as at a past --at look expired to a
    # running timebot, whose worker then sends the same mail too.
    assert all(sent_ms >= started_ms for sent_ms in _sent_ms(world)), _sent_ms(world)
    mails = [p.read_text(errors="replace") for p in outbox.iterdir()]
    assert sorted(m.split("\nTo: ", 1)[1].split("\n", 1)[0].strip() for m in mails
                  if "\nTo: " in m) == ["bob@globex.example", "gina@globex.example"], mails
    again = run(world, "reminders", "send", "--org", world["org"], "--at", at).out
    assert "queued 0 " in again and len(list(outbox.iterdir())) == 2
    after = run(world, "reminders", "preview", "--org", world["org"], "--at", at).out
    assert "already sent" in _line(after, "bob@globex.example")


def _sent_ms(world: dict[str, Any]) -> list[int]:
    from sqlalchemy import text

    from plumbing.db import create_engine

    url = (world["urls"].get("TIMEBOT_DATABASE_URL")
           or f"sqlite+aiosqlite:///{world['dir'] / 'bot.db'}")

    async def read() -> list[int]:
        engine = create_engine(url)
        try:
            async with engine.connect() as connection:
                rows = await connection.execute(text("SELECT sent_ms FROM outbox_messages"))
                return [int(value) for value in rows.scalars()]
        finally:
            await engine.dispose()

    return asyncio.run(read())


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    """Through the installed `timebot` script (the other tests run the commands in-process)."""
    world: dict[str, Any] = {"dir": tmp_path, "urls": {}}
    org = json.loads(run_script(world, "service", "init", "--org", "Initech", "--admin-name",
                                "Ian", "--admin-email", "ian@initech.example").out)[
        "organisation"]["id"]
    bad_time = run_script(world, "reminders", "preview", "--org", org, "--at", "monday",
                          check=False)
    assert bad_time.code != 0 and "--at" in bad_time.err and "ISO 8601" in bad_time.err
    refused = run_script(world, "reminders", "send", "--org", org, "--at", "2999-01-01",
                         check=False)
    assert refused.code != 0 and "future" in refused.err
    unknown = run_script(world, "reminders", "preview", "--org", "0" * 24, check=False)
    assert unknown.code != 0 and "no such organisation" in unknown.err


def _record_absence(world: dict[str, Any], approver_id: str, until: Any) -> None:
    """What an out-of-office auto-reply to a review e-mail records (mail.replies.away_notice)."""
    async def record() -> None:
        from plumbing.db import create_engine, session_factory
        from timebot.state.away import record_absence

        engine = create_engine(world["urls"].get("TIMEBOT_DATABASE_URL")
                               or f"sqlite+aiosqlite:///{world['dir'] / 'bot.db'}")
        try:
            await record_absence(session_factory(engine), organisation_id=world["org"],
                                 approver_id=approver_id, until=until, seen_ms=world["at"],
                                 message_key=f"<{until}@globex.example>")
        finally:
            await engine.dispose()

    asyncio.run(record())


def test_preview_notes_an_away_approver(world: dict[str, Any]) -> None:
    """Issue 28: the approval reminder line of an approver known to be away says until when."""
    from datetime import timedelta

    at = datetime.fromtimestamp(world["at"] / 1000, UTC)

    def previewed() -> tuple[str, str]:
        """The whole preview, and its approval reminder line."""
        preview = run(world, "reminders", "preview", "--org", world["org"],
                      "--at", at.isoformat()).out
        [line] = [line for line in preview.splitlines() if line.startswith("approval reminder")]
        return preview, line

    assert "away" not in previewed()[1]
    _record_absence(world, world["ids"]["Bob Draft"], at.date() - timedelta(days=1))
    assert "away" not in previewed()[1]  # back already
    back = at.date() + timedelta(days=6)
    _record_absence(world, world["ids"]["Bob Draft"], back)
    preview, line = previewed()
    assert "bob@globex.example" in line
    assert f"away until {back.strftime('%a %d %b %Y')} (auto-reply)" in line, line
    # What climbs and when: Bob, the only approver, is away (the administrator is asked one
    # working day after the submission), and the approval reminders every 2 days climb
    # after 4 to the administrator (Bob has no manager of his own).
    [escalation] = [line for line in preview.splitlines() if line.startswith("escalation")]
    assert "Gina Admin" in escalation and f"Bob Draft is away until {back:%a %d %b %Y}" in \
        escalation, escalation
    [climbing] = [line for line in preview.splitlines() if line.startswith("climbing reminder")]
    assert "Gina Admin" in climbing and "Bob Draft has not decided in 4 days" in climbing
    assert " from " in climbing, climbing


def _scheduled_report(world: dict[str, Any]) -> None:
    """A saved report of the last ended week, made at its start (its lastRun: nothing before
    it is sent), sent on the Monday after the week at 00:00 UTC to boss@ and Sue."""
    async def make() -> None:
        service_url = world["urls"].get("TIMEBOT_SERVICE_DATABASE_URL") or \
            f"sqlite+aiosqlite:///{world['dir'] / 'service.db'}"
        service = EmbeddedService(service_url, clock=Clock(frozen_ms=world["week"].start_ms))
        await service.start()
        try:
            key = world["admin_key"]
            folder = (await _gql(service, key, 'mutation { createReportFolder(name: "Team") '
                                 "{ id } }"))["createReportFolder"]["id"]
            report = (await _gql(service, key,
                'mutation($f: SvcId!) { createReport(name: "Weekly hours", folderId: $f, '
                'records: ["time"], attributes: {person: true}) { id } }', {"f": folder}))[
                "createReport"]["id"]
            await _gql(service, key,
                "mutation($id: SvcId!) { editReportReccurenceEnabled(id: $id, enabled: true)"
                " { id } editReportReccurenceHourOfDay(id: $id, hourOfDay: 0) { id }"
                ' a: addReportEmailToNotify(id: $id, email: "boss@example.org") { id }'
                ' b: addReportEmailToNotify(id: $id, email: "sue@globex.example") { id } }',
                {"id": report})
        finally:
            await service.stop()

    asyncio.run(make())


def test_saved_reports_schedules_are_previewed_and_sent_once(world: dict[str, Any]) -> None:
    """#43: a report's recurrence shows in the preview (what, to whom, when) and `send` sends
    the occurrence due now, once however often it runs."""
    _scheduled_report(world)
    monday = world["week"].end_ms  # the send moment: Monday 00:00 UTC after the week
    before = datetime.fromtimestamp((monday - HOUR_MS) / 1000, UTC).isoformat()
    at = datetime.fromtimestamp(world["at"] / 1000, UTC).isoformat()
    early = run(world, "reminders", "preview", "--org", world["org"], "--at", before).out
    lines = [line for line in early.splitlines() if line.startswith("report")]
    assert len(lines) == 2, early
    sent_on = datetime.fromtimestamp(monday / 1000, UTC).strftime("%a %d %b %Y %H:%M")
    for address in ("boss@example.org", "sue@globex.example"):
        [line] = [line for line in lines if address in line]
        assert f"next {sent_on} UTC" in line and "Weekly hours" in line, line
    outbox = world["dir"] / "outbox" / "new"

    due = run(world, "reminders", "preview", "--org", world["org"], "--at", at).out
    reports = [line for line in due.splitlines() if line.startswith("report")]
    assert len(reports) == 2 and all("due now" in line for line in reports), due
    assert not outbox.exists() or not list(outbox.iterdir()), "a preview sends nothing"

    sent = run(world, "reminders", "send", "--org", world["org"], "--at", at).out
    assert "2 report mail(s)" in sent, sent
    mails = [p.read_text(errors="replace") for p in outbox.iterdir()]
    assert sum("Subject: Weekly hours: " in m for m in mails) == 2, mails
    again = run(world, "reminders", "send", "--org", world["org"], "--at", at).out
    assert "0 report mail(s)" in again, again
    assert sum("Subject: Weekly hours: " in p.read_text(errors="replace")
               for p in outbox.iterdir()) == 2
    after = run(world, "reminders", "preview", "--org", world["org"], "--at", at).out
    assert all("sent" in line for line in after.splitlines() if line.startswith("report"))
