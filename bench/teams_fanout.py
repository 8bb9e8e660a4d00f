"""A review card to many approvers in Teams (#42).

- teams_fanout: seconds from a submission whose stage names 1,000 (BENCH_TEAMS_APPROVERS)
  approvers, each linked in Teams, to the last of their review cards reaching the fake Bot
  Connector — the review dispatch (the e-mail too, as in production), the cards rendered in
  each approver's language and queued once each, the sender draining them, while each
  approver's away status is read from the fake Microsoft Graph in the background (noted:
  how many reads, how many before the last card). Baseline: the goal, 60 s (ratio <= 1
  meets it).

A running timebot (embedded service on SQLite, in this process) with the Teams front on,
pointed at the fake Teams of shell/demo_teams.py on loopback (tests/bot/teams/harness.py);
the organisation's tenant connected through the admin-consent flow. The approvers are
written as linked Teams users directly (their first message to the bot is set-up, not what
is measured).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from sqlalchemy import func, select

from bench.busy import busy_machine
from bench.common import Figure, note
from bot.teams.cards_component import cards_of
from tests.bot.teams.harness import start_teams_world
from tests.service.test_approvals_support import add_record, submit
from timebot.state.db import unit_of_work
from timebot.state.teams_models import TeamsOutgoing, TeamsUser

FIGURES = ("teams_fanout",)
GOAL_SECONDS = 60.0
APPROVERS = int(os.environ.get("BENCH_TEAMS_APPROVERS", "1000"))


async def measure(approvers: int, data_dir: Path) -> float:
    world = await start_teams_world("sqlite", data_dir, {"TIMEBOT_LOG_LEVEL": "WARNING"})
    try:
        runtime = world.live.app.state.runtime
        await runtime.subscriptions.ensure(world.org.id)
        owner = await world.member("Olive Owner")
        conversations = set()
        users = []
        for number in range(approvers):
            member = await world.member(f"Approver {number}")
            users.append(TeamsUser(
                tenant_id=world.tenant_id, aad_object_id=member.teams.aad_object_id,
                organisation_id=world.org.id, person_id=member.member.id,
                teams_user_id=member.teams.user_id,
                conversation_id=member.teams.conversation_id,
                service_url=world.fake.service_url, linked_at_ms=0))
            conversations.add(member.teams.conversation_id)
        async with unit_of_work(runtime.state_sessions) as session:
            session.add_all(users)
        await world.org.admin.gql(
            "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
            "id: $id, stages: $s) { id } }",
            {"id": owner.member.id, "s": [{"type": "person", "personIds": [
                u.person_id for u in users], "quorum": "any"}]})
        await add_record(owner.member, owner.member, day=0, hours=3)
        note(f"{approvers} approvers linked; submitting")
        with busy_machine():
            started = time.time()  # the fake records each call's wall-clock time
            await submit(owner.member, owner.member)
            sent = await world.fake.wait_for("send", approvers, seconds=600.0)
            elapsed = max(call.at for call in sent) - started
        async with runtime.read_sessions() as session:
            queued = (await session.execute(select(func.min(TeamsOutgoing.created_ms),
                                                   func.max(TeamsOutgoing.created_ms)))).one()
        note(f"cards queued from {queued[0] / 1000 - started:.1f} s to "
             f"{queued[1] / 1000 - started:.1f} s; sent from "
             f"{min(call.at for call in sent) - started:.1f} s to {elapsed:.1f} s")
        parts = cards_of(runtime)
        if parts is not None:  # each approver's away status, read from Graph meanwhile
            await parts.away.settled()
            reads = [c for c in world.fake.calls if c.kind in ("replies", "presence")]
            note(f"Graph: {len(reads)} reads for {approvers} approvers, "
                 f"{sum(c.at <= started + elapsed for c in reads)} before the last card; "
                 f"the last {max((c.at for c in reads), default=started) - started:.1f} s "
                 f"after the submission")
        cards = {call.conversation_id for call in world.fake.calls_to("send")}
        missing = conversations - cards
        if missing or len(world.fake.calls_to("send")) != approvers:
            raise AssertionError(f"{len(missing)} approvers without a card, "
                                 f"{len(world.fake.calls_to('send'))} sends")
        return elapsed
    finally:
        await world.stop()


def run(names: set[str]) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="timebot-bench-teams-") as folder:
        seconds = asyncio.run(measure(APPROVERS, Path(folder)))
    note(f"teams_fanout: {APPROVERS} cards in {seconds:.1f} s")
    return [Figure("teams_fanout", seconds, "s", GOAL_SECONDS)]
