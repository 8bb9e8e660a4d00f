"""One timebot with the Slack app (and a fake Slack) per backend, for the whole tests/bot
package; each test makes its own people."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.bot.harness import SlackHarness, start_slack_harness


@pytest.fixture(scope="package", params=["sqlite", "postgresql"])
async def harness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SlackHarness]:
    backend: str = request.param
    started = await start_slack_harness(backend, tmp_path_factory.mktemp(f"slack-{backend}"))
    try:
        yield started
    finally:
        await started.stop()


@pytest.fixture
async def h(harness: SlackHarness) -> AsyncIterator[SlackHarness]:
    """The harness with the calls of earlier tests forgotten and the clock restored."""
    harness.fake.reset()
    clock = harness.live.clock
    frozen, offset = clock.frozen_ms, clock.offset_ms
    try:
        yield harness
    finally:
        clock.frozen_ms, clock.offset_ms = frozen, offset
