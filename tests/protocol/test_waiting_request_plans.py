"""The nudgers read the requests still waiting, not the queue's history (#40): among thousands
of decided request messages (and, for Slack, another installation's), a Slack installation's
tick and the Teams tick find their undecided requests through `ix_*_outgoing_waiting` on
SQLite and PostgreSQL, and return exactly those. A row that a release before `settled_ms`
decided (an outcome in its context, not settled) is not nudged, and is settled by the read
that meets it: the next read does not see it. Checked on the plans of the statements the real
methods run, and on what they return."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import select

from bot.slack.approver_nudges import ApproverNudges
from bot.slack.sender import SlackSender
from bot.teams.nudges import TeamsNudges
from plumbing.clock import Clock
from tests.protocol.conftest import StateDB
from tests.protocol.table_history import (
    statements_and_plans,
    table_history,
    whole_table_reads,
)
from timebot.state.claim_choice import DONE
from timebot.state.lanes import BULK
from timebot.state.models import SlackOutgoing
from timebot.state.teams_models import TeamsOutgoing

NOW = 1_800_000_000_000
DECIDED = 3000
OTHER_TEAM = 1000
TEAM, OTHER = "T0OURS", "T0OTHER"


def _ref(number: int) -> str:
    return f"approval:{number:024x}:0:{number:024x}"


def _context(number: int, **more: Any) -> dict[str, Any]:
    return {"submitId": f"{number:024x}", "timesheetId": f"t{number}", "personId": "p1",
            "startTime": NOW, "endTime": NOW + 1, "personName": "Sam", "approverId": "a1",
            "organisationId": "o1", **more}


def _row(number: int, *, context: dict[str, Any], settled: bool, ref: str | None = None
         ) -> dict[str, Any]:
    return {"id": f"r{number:08d}", "seq": number, "priority": BULK, "status": DONE,
            "attempts": 1, "next_attempt_ms": NOW, "created_ms": NOW,
            "ref": ref or _ref(number), "dedupe_key": f"key:{number}", "context": context,
            "settled_ms": NOW if settled else None}


def _slack(number: int, team: str, **row: Any) -> dict[str, Any]:
    return {**_row(number, **row), "channel": "D1", "payload": {},
            "method": "chat.postMessage", "team_id": team}


def _teams(number: int, **row: Any) -> dict[str, Any]:
    return {**_row(number, **row), "method": "send", "tenant_id": "t", "activity": {},
            "organisation_id": "o1", "conversation_id": "c", "service_url": "https://x"}


OPEN = [DECIDED + OTHER_TEAM + n for n in range(3)]
OLD_RELEASE = DECIDED + OTHER_TEAM + 10  # decided by a release before settled_ms
NUDGE = DECIDED + OTHER_TEAM + 11  # a nudge of the first open request


def _history(row: Callable[..., dict[str, Any]]) -> list[dict[str, Any]]:
    decided = [row(n, context=_context(n, outcome="Approved"), settled=True)
               for n in range(DECIDED)]
    waiting = [row(n, context=_context(n), settled=False) for n in OPEN]
    return [*decided, *waiting,
            row(OLD_RELEASE, context=_context(OLD_RELEASE, outcome="Approved"), settled=False),
            row(NUDGE, context=_context(OPEN[0], nudge=1), settled=False, ref=_ref(OPEN[0]))]


@pytest.fixture
async def history(state_db: StateDB) -> AsyncIterator[StateDB]:
    other = [_slack(DECIDED + n, OTHER, context=_context(DECIDED + n), settled=False)
             for n in range(OTHER_TEAM)]
    rows = {SlackOutgoing: [*_history(lambda n, **r: _slack(n, TEAM, **r)), *other],
            TeamsOutgoing: _history(_teams)}
    async with table_history(state_db, rows) as db:
        yield db


_updates: list[int] = []  # UPDATE statements of each call below, in order (one test's)


@pytest.fixture(autouse=True)
def _fresh_updates() -> None:
    _updates.clear()


async def _statements_and_plans(state_db: StateDB, call: Callable[[], Awaitable[Any]]
                                ) -> tuple[Any, list[str]]:
    result, plan, ran = await statements_and_plans(state_db, call)
    _updates.append(sum(statement.lstrip().upper().startswith("UPDATE") for statement in ran))
    return result, plan


def _runtime(state_db: StateDB) -> Any:
    return SimpleNamespace(read_sessions=state_db.sessions, state_sessions=state_db.sessions,
                           clock=Clock(frozen_ms=NOW + 5))


async def _settled(state_db: StateDB, model: Any, number: int) -> int | None:
    async with state_db.sessions() as session:
        return await session.scalar(select(model.settled_ms).where(
            model.id == f"r{number:08d}"))


async def test_a_slack_installation_reads_its_own_waiting_requests_by_index(
    history: StateDB,
) -> None:
    sender = SlackSender(history.sessions, None, Clock(), team_id=TEAM)  # type: ignore[arg-type]
    nudges = ApproverNudges(SimpleNamespace(runtime=_runtime(history),  # type: ignore[arg-type]
                                            sender=sender))
    waiting, plan = await _statements_and_plans(history, nudges._waiting)
    assert [item.request.submit_id for item in waiting] == [f"{n:024x}" for n in OPEN]
    assert plan and not whole_table_reads(plan, "slack_outgoing"), "\n".join(plan)
    assert any("ix_slack_outgoing_waiting" in line for line in plan), "\n".join(plan)
    # the row a release before decided: settled by this read, not read by the next
    assert await _settled(history, SlackOutgoing, OLD_RELEASE) == NOW + 5
    assert await _settled(history, SlackOutgoing, OPEN[0]) is None
    again, _ = await _statements_and_plans(history, nudges._waiting)
    assert [item.row_id for item in again] == [item.row_id for item in waiting]
    assert _updates == [1, 0]


async def test_the_teams_tick_reads_the_waiting_cards_by_index(history: StateDB) -> None:
    nudges = TeamsNudges(_runtime(history), None, None)  # type: ignore[arg-type]
    waiting, plan = await _statements_and_plans(history, nudges._waiting)
    assert [row.id for row in waiting] == [f"r{n:08d}" for n in OPEN]
    assert plan and not whole_table_reads(plan, "teams_outgoing"), "\n".join(plan)
    assert any("ix_teams_outgoing_waiting" in line for line in plan), "\n".join(plan)
    assert await _settled(history, TeamsOutgoing, OLD_RELEASE) == NOW + 5
    again, _ = await _statements_and_plans(history, nudges._waiting)
    assert [row.id for row in again] == [row.id for row in waiting]
    assert _updates == [1, 0]
