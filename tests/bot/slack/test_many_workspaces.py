"""Several workspaces on one process cost what one does (#27: 100 of them acked 170 times
slower than one).

Three organisations, each with its own workspace installed through OAuth (the whole flow,
over HTTP), on one timebot. What one workspace's request or event costs must not grow with
the others installed beside it:

- the work after the acks is bounded for the process (bot.slack.component.WORK_SLOTS), not per
  workspace: 100 workspaces' commands did not run 400 at once;
- an event or review request of one organisation reaches the parts of its own workspace only
  (bot.slack.routes): one look-up of its sent DMs, one of its queued DM, not one per workspace;
- what an ack only reads (a team's installation, a retry already taken) is read beside a
  writer of the bot database, not queued behind every writer of the process (SQLite).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import event, update

from bot.slack.component import WORK_SLOTS
from bot.slack.installation import NOT_CONNECTED
from tests.bot.slack.signing import command_fields
from tests.bot.slack.test_oauth_install import (
    TEAM_A,
    TEAM_B,
    TEAM_C,
    Two,
    command,
    install,
    member_in,
    oauth_world,
)
from tests.service.test_approvals_support import add_record, approve, submit
from tests.support import Org
from tests.timebot.signin_support import browser, sign_in
from timebot.state.slack_models import SlackInstallation


@dataclass
class Three:
    two: Two  # organisations a and b, workspaces TEAM_A and TEAM_B
    c: Org  # workspace TEAM_C


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def three(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Three]:
    async with oauth_world(request.param, tmp_path_factory.mktemp(f"many-{request.param}"),
                           ("A", "B", "C")) as (two, orgs):
        for org, team in zip(orgs, (TEAM_A, TEAM_B, TEAM_C), strict=True):
            async with browser(two.live) as admin:
                await sign_in(two.live, admin, org.admin.email)
                assert (await install(two, admin, org, team)).headers["location"] == \
                    "/account?done=slack"
        yield Three(two, orgs[2])


async def test_the_work_after_the_acks_is_bounded_for_the_process_not_per_workspace(
    three: Three,
) -> None:
    """WORK_SLOTS works at once, whichever workspaces their commands came from: the next one
    starts only once one of them answered (its response_url), never beside them."""
    fake = three.two.fake
    fake.reset()
    teams = [TEAM_A, TEAM_B] * WORK_SLOTS
    users = {}
    for index, team in enumerate([*teams[:WORK_SLOTS], TEAM_C]):
        user = "U" + uuid.uuid4().hex[:10].upper()  # not cached: the work asks users.info
        fake.add_user(user, f"nobody{index}.{user.lower()}@example.com", team=team)
        users[user] = team
    holds = [fake.hold("users.info") for _ in range(WORK_SLOTS + 1)]  # a call each
    listed = list(users.items())
    for user, team in listed[:WORK_SLOTS]:
        assert (await command(three.two, team, user, "status")).status_code == 200
    for hold in holds[:WORK_SLOTS]:  # every slot taken, each work waiting at users.info
        await hold.arrived.wait()
    user, team = listed[WORK_SLOTS]  # another workspace's command
    assert (await command(three.two, team, user, "status")).status_code == 200
    for hold in holds:
        hold.release()
    await fake.wait_for("response_url", count=WORK_SLOTS + 1)
    order = [(call.method, call.args.get("user")) for call in fake.calls
             if call.method in ("users.info", "response_url")]
    last = order.index(("users.info", user))
    assert ("response_url", None) in [(method, None) for method, _ in order[:last]], order


@contextmanager
def statements(three: Three, needle: str) -> Iterator[list[tuple[str, str]]]:
    """The statements on timebot's own database whose SQL has `needle` (with their
    parameters), while the block runs."""
    seen: list[tuple[str, str]] = []
    runtime = three.two.live.app.state.runtime
    # The pure reads go to the read-only engine (SQLite), the rest to the state engine.
    engines = [engine.sync_engine for engine in (runtime.state_engine, runtime.read_engine)
               if engine is not None]

    def statement(_conn: Any, _cursor: Any, sql: str, parameters: Any, *_args: Any) -> None:
        if needle in " ".join(sql.split()):
            seen.append((sql, str(parameters)))

    for engine in engines:
        event.listen(engine, "before_cursor_execute", statement)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", statement)


async def test_an_organisations_events_reach_its_own_workspace_only(three: Three) -> None:
    """A submission and its approval in organisation C: its review DM looked up once in the
    Slack queue, its sent DMs read once per event — not once per installed workspace."""
    fake = three.two.fake
    fake.reset()
    owner = await member_in(three.two, three.c, TEAM_C, "Olga")
    approver = await member_in(three.two, three.c, TEAM_C, "Vera")
    await three.c.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.id, "s": [{"type": "person", "personIds": [approver.id],
                                "quorum": "any"}]})
    await add_record(owner.member, owner.member, day=0, hours=3)
    with statements(three, "ref LIKE") as sent_reads, \
            statements(three, "dedupe_key =") as queued_reads:
        submit_id = str((await submit(owner.member, owner.member))["submitId"])
        (dm,) = await fake.wait_for("chat.postMessage", channel=approver.slack_id)
        await approve(approver.member, submit_id)
        (update,) = await fake.wait_for("chat.update")
    assert update.token == dm.token == fake.token_of(TEAM_C)
    # The submission's event and the approval's: C's bot reads its sent DMs once each.
    settled = [sql for sql, parameters in sent_reads if f"approval:{submit_id}:" in parameters]
    assert len(settled) == 2, settled
    # The review request: one look-up of its DM in the Slack queue.
    asked = [sql for sql, parameters in queued_reads
             if f"approval-dm:review:{submit_id}:" in parameters]
    assert len(asked) == 1, asked


async def test_keeping_every_organisation_subscribed_reads_the_registrations_once(
    three: Three,
) -> None:
    """The subscription loop (every 30 s) over three subscribed organisations: one read of
    the webhook registrations, not one per organisation; and nothing subscribed again."""
    runtime = three.two.live.app.state.runtime
    engine = runtime.state_engine.sync_engine
    seen: list[str] = []

    def statement(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        task = asyncio.current_task()
        if task is not None and task.get_name() == "counted-ensure-all" \
                and "webhook_registrations" in sql:
            seen.append(" ".join(sql.split())[:80])

    event.listen(engine, "before_cursor_execute", statement)
    try:
        subscribed = await asyncio.create_task(runtime.subscriptions.ensure_all(),
                                               name="counted-ensure-all")
    finally:
        event.remove(engine, "before_cursor_execute", statement)
    assert subscribed >= 3
    assert len(seen) == 1, seen


@asynccontextmanager
async def write_lock_held(three: Three) -> AsyncIterator[None]:
    """Another transaction of the bot database writing, and not done, while the block runs:
    on SQLite the database's write lock (BEGIN IMMEDIATE, which this process's writers queue
    for); on PostgreSQL a row lock on an installation."""
    runtime = three.two.live.app.state.runtime
    async with runtime.state_sessions() as session:
        await session.execute(update(SlackInstallation).where(
            SlackInstallation.team_id == TEAM_A).values(updated_ms=SlackInstallation.updated_ms))
        try:
            yield
        finally:
            await session.rollback()


async def answered(request: Any) -> httpx.Response:
    # Not a measure of time: a guard, so that an ack queued behind the write lock (the old
    # way, until the lock is released) fails here instead of hanging the suite.
    response: httpx.Response = await asyncio.wait_for(request, timeout=20)
    return response


async def test_a_team_not_installed_is_answered_while_the_database_is_being_written(
    three: Three,
) -> None:
    """The look-up of a team's installation only reads: it answers "not connected" while
    another transaction holds the write lock."""
    async with write_lock_held(three):
        response = await answered(command(three.two, "T0NOBODY0", "U0STRANGER", "status"))
    assert response.status_code == 200
    assert NOT_CONNECTED in response.text


async def test_a_retry_is_answered_while_the_database_is_being_written(three: Three) -> None:
    """A command taken once, then again (Slack retries an ack that was slow): the retry is
    known from a read, and answered while another transaction holds the write lock."""
    two = three.two
    user = await member_in(two, two.a, TEAM_A, "Rita")
    fields = {**command_fields(two.fake, "/timesheet", "status", user=user.slack_id),
              "team_id": TEAM_A}
    two.fake.reset()
    assert (await two.slack.form(fields)).status_code == 200
    await two.fake.wait_for("response_url")
    async with write_lock_held(three):
        retry = await answered(two.slack.form(fields, headers={"x-slack-retry-num": "1"}))
    assert retry.status_code == 200
    assert retry.text == ""
