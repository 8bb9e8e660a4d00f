"""An organisation whose subscription is inactive: the fronts tell the person plainly (a time@
mail's receipt, a /time answer in Slack) instead of failing silently or blaming the key."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import update

from plumbing.db import unit_of_work
from service.models import Organisation
from tests.bot.slack.test_time_commands import World, world  # noqa: F401 (the fixture)
from tests.protocol.test_time_entry_mail import (  # noqa: F401 (the fixtures)
    fx,
    receipt_to,
    server,
    swaks,
    text_of,
)
from tests.support import LiveServer
from tests.timebot.timeentry_setup import Fixture

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


@asynccontextmanager
async def inactive(live: LiveServer, org_id: str) -> AsyncIterator[None]:
    async def mark(active: bool) -> None:
        async with unit_of_work(live.service.sessions) as session:
            await session.execute(
                update(Organisation).where(Organisation.id == org_id).values(active=active)
            )

    await mark(False)
    try:
        yield
    finally:
        await mark(True)


async def test_a_time_mail_is_answered_with_the_reason(
    server: tuple[LiveServer, int], fx: Fixture  # noqa: F811
) -> None:
    live, port = server
    async with inactive(live, fx.org.id):
        await swaks(port, fx.employee.email, "2h @acme/website planning")
        body = text_of(await receipt_to(live, fx.employee.email))
    assert "subscription is inactive" in body, body
    assert "key" not in body.lower(), body
    assert await fx.records() == []


async def test_a_slack_command_is_answered_with_the_reason(world: World) -> None:  # noqa: F811
    user, _member = await world.user("Ina Active")
    async with inactive(world.live, world.fx.org.id):
        answer = await world.run("/time", "2h @acme/website planning", user)
    assert "subscription is inactive" in answer["text"], answer
    assert "link" not in answer["text"].lower(), answer
    assert await world.fx.records() == []
    again = await world.run("/time", "list", user)
    assert "subscription is inactive" not in again["text"]
