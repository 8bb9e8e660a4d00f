"""A decision's chat update reads its own rows, not the queue's history (#40): the Slack and
Teams rows of one submission (`ref` starting `approval:<submit>:`) and the Slack posts of one
dedupe-key prefix are found by the columns' indexes among thousands of sent rows, on SQLite
and PostgreSQL (plumbing.prefixes). A LIKE prefix read every row: SQLite's LIKE ignores case,
so its index cannot serve it, and PostgreSQL's needs a pattern index. Checked on the plans of
the statements the real methods run, and on what they return: exactly the rows that start
with the prefix, case and all."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from bot.slack.sender import SlackSender
from bot.teams.outgoing import TeamsOutbox
from plumbing.clock import Clock
from plumbing.prefixes import prefix_bounds
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
SENT = 3000
SUBMIT = "65a1b2c3d4e5f60718293a4b"


def _ref(number: int) -> str:
    return f"approval:{number:024x}:{number % 3}:{number:024x}"


def _common(number: int, ref: str, key: str) -> dict[str, Any]:
    return {"id": f"r{number:08d}", "seq": number, "priority": BULK, "context": {},
            "status": DONE, "attempts": 1, "next_attempt_ms": NOW, "created_ms": NOW,
            "ref": ref, "dedupe_key": key}


def _slack(number: int, ref: str, key: str) -> dict[str, Any]:
    return {**_common(number, ref, key), "channel": "D1", "payload": {},
            "method": "chat.postMessage"}


def _teams(number: int, ref: str, key: str) -> dict[str, Any]:
    return {**_common(number, ref, key), "method": "send", "tenant_id": "t", "activity": {},
            "organisation_id": "o", "conversation_id": "c", "service_url": "https://x"}


# Near misses beside the submission's own rows: another case, one character more, another id.
OWN = [f"approval:{SUBMIT}:1:aa", f"approval:{SUBMIT}:2:bb"]
NEAR = [f"approval:{SUBMIT.upper()}:1:aa", f"approval:{SUBMIT}0:1:aa",
        f"approval:{SUBMIT[:-1]}c:1:aa", f"approval:{SUBMIT}", f"approval:{SUBMIT};1"]


@pytest.fixture
async def history(state_db: StateDB) -> AsyncIterator[StateDB]:
    refs = [_ref(n) for n in range(SENT)] + OWN + NEAR
    rows = {model: [row(n, ref, f"key:{ref}") for n, ref in enumerate(refs)]
            for model, row in ((SlackOutgoing, _slack), (TeamsOutgoing, _teams))}
    async with table_history(state_db, rows) as db:
        yield db


async def _statements_and_plans(state_db: StateDB, call: Callable[[], Awaitable[Any]]
                                ) -> tuple[Any, list[str]]:
    result, plan, _ = await statements_and_plans(state_db, call)
    return result, plan


async def test_a_submissions_slack_rows_are_read_by_the_ref_index(history: StateDB) -> None:
    sender = SlackSender(history.sessions, None, Clock())  # type: ignore[arg-type]
    rows, plan = await _statements_and_plans(
        history, lambda: sender.sent_with_ref(f"approval:{SUBMIT}:"))
    assert [row.ref for row in rows] == OWN
    assert plan and not whole_table_reads(plan, "slack_outgoing"), "\n".join(plan)
    posts, plan = await _statements_and_plans(
        history, lambda: sender.with_key_prefix(f"key:approval:{SUBMIT}:"))
    assert [row.ref for row in posts] == OWN
    assert plan and not whole_table_reads(plan, "slack_outgoing"), "\n".join(plan)


async def test_a_submissions_teams_rows_are_read_by_the_ref_index(history: StateDB) -> None:
    outbox = TeamsOutbox(history.sessions, history.sessions, Clock())
    rows, plan = await _statements_and_plans(
        history, lambda: outbox.with_ref(f"approval:{SUBMIT}:"))
    assert [row.ref for row in rows] == OWN
    assert plan and not whole_table_reads(plan, "teams_outgoing"), "\n".join(plan)


def test_the_bounds_hold_every_string_with_the_prefix() -> None:
    assert prefix_bounds("approval:ab12:") == ("approval:ab12", "approval:ab13")
    assert prefix_bounds("approval:ab9:") == ("approval:ab9", "approval:aba")
    assert prefix_bounds("approval:abz:") == ("approval:abz", "approval:ac")
    assert prefix_bounds("x:zZ:") == ("x:zZ", "y")
    assert prefix_bounds("key:AY") == ("key:AY", "key:AZ")
    assert prefix_bounds("::") is None and prefix_bounds("zz") is None
    for prefix in ("approval:ab12:", "approval:abz:", "x:zZ:", "key:AY", "a9"):
        bounds = prefix_bounds(prefix)
        assert bounds is not None
        low, high = bounds
        for suffix in ("", ":", "~", "zzzz", "\U0010ffff", "0:1:x"):
            assert low <= prefix + suffix < high, (prefix, suffix)
