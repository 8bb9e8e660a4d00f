"""Slack's pace of a workspace is the app's, not a process's: the workers of `timebot serve
--workers N` each send at 1/N of it, so that together they keep it (each worker has a pacer
of its own; before, two workers posted up to twice the workspace's rate: the monday bench's
1,440 review DMs went out at 10 to 12 a second against a pace of 8)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.slack.pacing import RateLimits
from tests.bot.slack.fake_slack import FakeSlack
from tests.net import free_port
from tests.timebot.serve_process import serve_env, serving

pytestmark = pytest.mark.slow


def test_the_workspace_rate_is_split_and_a_channel_pace_is_kept() -> None:
    limits = RateLimits()
    assert limits.shared_by(1) == limits
    halved = limits.shared_by(2)
    assert halved.workspace_per_second == limits.workspace_per_second / 2
    assert halved.per_channel_interval == limits.per_channel_interval
    assert halved.concurrency == limits.concurrency
    assert limits.shared_by(0) == limits  # (no worker count: the whole rate)


def _paces(lines: list[str]) -> list[float]:
    paces = []
    for line in lines:
        try:
            logged = json.loads(line)
        except ValueError:
            continue
        if logged.get("event") == "slack_installed":
            paces.append(float(logged["messages_per_second"]))
    return paces


@pytest.mark.parametrize("workers", [1, 2])
async def test_each_worker_of_timebot_serve_sends_at_its_share(tmp_path: Path,
                                                               workers: int) -> None:
    fake = await FakeSlack.start()
    try:
        env = serve_env(tmp_path / "data", TIMEBOT_HTTP_PORT=str(free_port()),
                        TIMEBOT_SMTP_PORT="0", SLACK_BOT_TOKEN="xoxb-pace",
                        SLACK_SIGNING_SECRET="pace-secret", TIMEBOT_SLACK_API_URL=fake.api_url)
        async with serving(env, "--workers", str(workers), cwd=tmp_path) as served:
            for _ in range(300):  # every worker has logged its start
                if len(_paces(served.err)) == workers:
                    break
                await asyncio.sleep(0.1)
            assert _paces(served.err) == [RateLimits().workspace_per_second / workers] * workers
    finally:
        await fake.stop()
