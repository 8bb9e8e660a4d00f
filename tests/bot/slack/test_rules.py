"""The pure rules of the Slack app: nudge schedules, who is reminded, what a request message
becomes after an event, why someone may not decide."""

from __future__ import annotations

from bot.chat.approvals import Request
from bot.chat.nudge_schedule import approver_nudge_due, snooze_until, staff_nudge_due, to_remind
from bot.slack.approvals import outcome_for, refusal_reason
from tests.service.test_approvals_support import WEEK
from tests.support import DAY_MS, HOUR_MS
from timebot.notify.periods import week_of


def test_approver_nudges_after_n_days_then_1_2_4_7_7() -> None:
    since = WEEK
    assert not approver_nudge_due(since, 0, None, since + 2 * DAY_MS - 1, 2)
    assert approver_nudge_due(since, 0, None, since + 2 * DAY_MS, 2)
    last = since + 2 * DAY_MS
    for count, gap in ((1, 1), (2, 2), (3, 4), (4, 7), (5, 7), (9, 7)):
        assert not approver_nudge_due(since, count, last, last + gap * DAY_MS - 1, 2)
        assert approver_nudge_due(since, count, last, last + gap * DAY_MS, 2)


def test_snooze_until_tomorrow_is_nine_in_their_zone() -> None:
    now = WEEK + 20 * HOUR_MS  # Monday 20:00 UTC = 21:00 in Paris
    assert snooze_until("1h", now, "Europe/Paris") == now + HOUR_MS
    assert snooze_until("tomorrow", now, "Europe/Paris") == WEEK + DAY_MS + 8 * HOUR_MS


def test_staff_nudge_window_is_friday_from_16_local() -> None:
    period = week_of(WEEK)
    friday = WEEK + 4 * DAY_MS
    assert not staff_nudge_due(friday + 15 * HOUR_MS, "UTC", period)
    assert staff_nudge_due(friday + 16 * HOUR_MS, "UTC", period)
    assert not staff_nudge_due(friday + 16 * HOUR_MS, "America/New_York", period)
    assert staff_nudge_due(friday + 21 * HOUR_MS, "America/New_York", period)
    assert not staff_nudge_due(friday - DAY_MS + 17 * HOUR_MS, "UTC", period)


def test_remind_never_those_submitted_or_approved() -> None:
    states = [{"person": {"id": str(n), "name": name}, "status": status}
              for n, (name, status) in enumerate(
                  [("D", "d"), ("S", "s"), ("A", "a"), ("R", "r"), ("E", None)])]
    remind, skipped = to_remind(states)
    assert [p["name"] for p in remind] == ["D", "R", "E"] and skipped == ["S", "A"]


def test_outcome_of_a_request_message() -> None:
    base = {"by": {"name": "Ann"}, "pendingApprovers": [{"id": "b"}], "stage": 1}
    assert outcome_for({**base, "status": "a", "action": "approved"}, 1, "b", 0) \
        .startswith("Approved by Ann")
    assert "Rejected by Ann" in str(outcome_for(
        {**base, "status": "r", "action": "rejected", "comment": "no"}, 0, "b", 0))
    # Stage 0 done, stage 1 waits for b: stage 0's messages are settled, b's stays.
    submitted = {**base, "status": "s", "action": "approved"}
    assert outcome_for(submitted, 0, "a", 0) is not None
    assert outcome_for(submitted, 1, "b", 0) is None
    # "all" quorum: a approved stage 1, b still pending.
    assert outcome_for(submitted, 1, "a", 0) is not None


def test_refusal_reasons() -> None:
    request = Request("s1", 0, "t", "p", 0, 1)
    assert "out of date" in refusal_reason({"submitId": "s2", "status": "s"}, request, "x")
    assert "already approved" in refusal_reason({"submitId": "s1", "status": "a"}, request,
                                                "x")
    state = {"submitId": "s1", "status": "s", "currentStage": 0,
             "pendingApprovers": [{"id": "b", "name": "Bob"}]}
    assert refusal_reason(state, request, "x") == \
        "You are not an approver of this stage: it waits for Bob."
    moved = {**state, "currentStage": 1}
    assert "moved on" in refusal_reason(moved, request, "b")
