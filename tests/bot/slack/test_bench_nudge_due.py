"""The staff nudge bench/slack_nudges.py makes due (a 7-day schedule on the person's
timeline, a daily period, `timesheetReminder` at 00:00 of its last day) goes at the nudge
loop's next tick whatever the day and hour the bench runs, once per day; a person without
that setup is not nudged then (her nudge waits for Friday 16:00)."""

from __future__ import annotations

import pytest

from bench.slack_nudges import make_nudge_due
from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_nudges import settle
from tests.bot.slack.test_reminder_timing_nudges import dms
from tests.service.test_approvals_support import WEEK
from tests.support import DAY_MS, HOUR_MS


@pytest.mark.parametrize("moment", [
    WEEK + 5 * DAY_MS + 23 * HOUR_MS + 30 * 60_000,  # Saturday 23:30 UTC
    WEEK + 6 * DAY_MS + 7 * HOUR_MS,  # Sunday 07:00
    WEEK + 2 * DAY_MS + 5 * 60_000,  # Wednesday 00:05
], ids=["saturday-night", "sunday-morning", "wednesday-midnight"])
async def test_the_bench_nudge_is_due_whenever_it_runs(h: SlackHarness, moment: int) -> None:
    h.live.clock.set(moment)
    nora = await h.slack_member("Nora Bench")
    plain = await h.slack_member("Paul Plain")
    await make_nudge_due(h.org.admin.gql, nora.id)
    nudges = h.bot.nudges
    nudges.discover_every = 0
    await nudges.tick()
    await settle(h)
    assert dms(h, plain) == []
    sent = dms(h, nora)
    assert len(sent) == 1 and "The day is ending" in sent[0], sent
    await nudges.tick()
    await settle(h)
    assert len(dms(h, nora)) == 1
