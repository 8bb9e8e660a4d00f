"""One timebot with the Slack app (and a fake Slack) per backend, for the whole tests/bot
package; each test makes its own people."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.bot.slack.harness import SlackHarness, start_slack_harness


@pytest.fixture(scope="session")
async def harnesses(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[dict[str, SlackHarness]]:
    """This worker's harnesses, one per backend, kept until the session ends: `harness` starts
    each when first asked for it."""
    started: dict[str, SlackHarness] = {}
    try:
        yield started
    finally:
        for one in started.values():
            await one.stop()


@pytest.fixture(scope="package", params=["sqlite", "postgresql"])
async def harness(
    request: pytest.FixtureRequest, harnesses: dict[str, SlackHarness],
    tmp_path_factory: pytest.TempPathFactory,
) -> SlackHarness:
    """The backend's harness, shared by the package's tests of this worker. Under `--dist
    loadfile` each file runs its SQLite tests then its PostgreSQL ones, so the parameter
    changes twice a file: `harnesses` keeps both running instead of restarting them."""
    backend: str = request.param
    if backend not in harnesses:
        started = harnesses[backend] = await start_slack_harness(
            backend, tmp_path_factory.mktemp(f"slack-{backend}"))
        # The tests tick the nudges themselves (`h.bot.nudges.tick()`). The loop, on the live
        # clock, would nudge this week's staff at its end (approvers of other tests among
        # them) in the middle of those tests: seen on a Friday afternoon, a "week is ending"
        # nudge where a test waited for its review request.
        started.bot.nudges.interval_seconds = 10.0**9  # should the loop be started again
        await started.bot.nudges.stop()
    return harnesses[backend]


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
