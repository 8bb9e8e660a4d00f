"""getTimesheetScore over POST /graphql: on time, late, not submitted and rejected periods
of a person's last complete weeks; who may read it; bad input named."""

from __future__ import annotations

import pytest

from service.timesheets.score_rules import Event, timesheet_score
from tests.service.test_approvals_support import SUBMIT, WEEK, add_record, reject, set_stages
from tests.support import DAY_MS, HOUR_MS, Member, Org

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

SCORE = ("query($p: SvcId!, $n: Int) { getTimesheetScore(personId: $p, periods: $n) "
         "{ score periods onTime late notSubmitted rejections } }")
WEEK_MS = 7 * DAY_MS


def test_score_rule() -> None:
    weeks = [(0, 10), (10, 20)]
    events = [Event(0, "submit", 5), Event(10, "auto_submit", 25), Event(10, "reject", 26)]
    score = timesheet_score(weeks, events)
    assert (score.on_time, score.late, score.not_submitted, score.rejections) == (1, 1, 0, 1)
    assert score.score == round(100 * (1 + 0.5 - 0.25) / 2)
    assert timesheet_score([], []).score == 0
    assert timesheet_score([(0, 10)], [Event(0, "reject", 1)] * 9).score == 0


async def submit_week(org: Org, who: Member, week: int, at_ms: int) -> dict[str, str]:
    org.live.clock.set(at_ms)
    await add_record(who, who, day=week * 7)
    data = await who.gql(SUBMIT, {"p": who.id, "s": WEEK + week * WEEK_MS,
                                  "e": WEEK + (week + 1) * WEEK_MS})
    return data["submitTimesheet"]  # type: ignore[no-any-return]


async def test_timesheet_score(org: Org) -> None:
    org.live.clock.set(WEEK - 2 * WEEK_MS)  # Bob starts on Monday 16 February 2026
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    await submit_week(org, bob, 0, WEEK + 4 * DAY_MS)  # in its week: on time
    await submit_week(org, bob, 1, WEEK + 2 * WEEK_MS + DAY_MS)  # the week after: late
    await set_stages(org, [{"type": "admin", "quorum": "ANY"}])
    event = await submit_week(org, bob, 2, WEEK + 2 * WEEK_MS + 4 * DAY_MS)
    await reject(org.admin, event["id"], 0, "hours missing")
    org.live.clock.set(WEEK + 3 * WEEK_MS + 10 * HOUR_MS)  # Monday 23 March
    # Five complete weeks since Bob started; two of them never submitted.
    score = (await bob.gql(SCORE, {"p": bob.id}))["getTimesheetScore"]
    assert score == {"score": round(100 * (2 + 0.5 - 0.25) / 5), "periods": 5, "onTime": 2,
                     "late": 1, "notSubmitted": 2, "rejections": 1}
    last = (await org.admin.gql(SCORE, {"p": bob.id, "n": 1}))["getTimesheetScore"]
    assert last == {"score": 75, "periods": 1, "onTime": 1, "late": 0, "notSubmitted": 0,
                    "rejections": 1}
    assert await eve.gql.denied(SCORE, {"p": bob.id}) == ["Query.getTimesheetScore"]
    message = await bob.gql.error(SCORE, {"p": bob.id, "n": 0})
    assert 'Invalid argument "periods"' in message and "from 1 to 260" in message
    assert 'Invalid argument "personId"' in await org.admin.gql.error(
        SCORE, {"p": "0123456789abcdef01234567"})
