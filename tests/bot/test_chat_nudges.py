"""The neutral chat core's nudges, digest, "Approve all (N)", Home content and linking words
(bot/chat/), with a markup that shows what it escaped."""

from __future__ import annotations

import json
from datetime import date
from zoneinfo import ZoneInfo

import pytest

from bot.chat.approvals import APPROVE, DECISION, REJECT, Request
from bot.chat.approve_all import (
    APPROVE_ALL,
    MAX_ITEMS,
    approve_all_block,
    read_value,
    result_text,
    waits_for,
)
from bot.chat.home import HomeFacts, by_day, home_content, title, usable_report
from bot.chat.linking import LINK_ACTION, link_prompt, link_refusal, linked_text
from bot.chat.nudge_schedule import snooze_until, snoozed
from bot.chat.nudges import (
    NUDGES_OFF,
    SNOOZE,
    SUBMIT_NOW,
    approver_nudge,
    control_change,
    control_text,
    control_value,
    digest,
    nudge_controls,
    staff_nudge_text,
    submit_now_message,
    submit_value,
)
from bot.chat.person import ChatPerson, NotIdentified
from bot.chat.values import BadValue
from timebot import l10n
from timebot.errors import InvalidCredentials

WEEK = 1_795_392_000_000  # Mon 23 Nov 2026 00:00 UTC
DAY = 86_400_000
HOUR = 3_600_000


class Angled:
    def escape(self, text: object) -> str:
        return f"<{text}>"

    def time(self, ms: int) -> str:
        return f"@{ms}"


def request(n: int) -> Request:
    return Request(f"s{n}", 1, f"t{n}", f"p{n}", WEEK, WEEK + 7 * DAY)


def test_the_approver_nudge_names_the_request_and_offers_the_decision() -> None:
    nudge = approver_nudge(request(1), "Ann", 5, Angled())
    assert nudge.text == ("Reminder: the timesheet of <Ann> for Mon 23 Nov - Sun 29 Nov 2026 has "
                          "waited for your approval since @5.")
    assert nudge.blocks[0].text == nudge.text
    assert nudge.blocks[1].group == DECISION
    assert [a.id for a in nudge.actions()] == [APPROVE, REJECT]


def test_the_nudge_controls_snooze_or_turn_off() -> None:
    controls = nudge_controls()
    assert [(a.id, a.value) for a in controls.actions] == [
        (SNOOZE, "1h"), (f"{SNOOZE}_tomorrow", "tomorrow"), (NUDGES_OFF, "off")]
    hour, tomorrow, _off = controls.actions  # what the schedule reads back
    assert snooze_until(hour.value, WEEK, "UTC") == WEEK + HOUR
    assert snooze_until(tomorrow.value, WEEK, "UTC") == WEEK + DAY + 9 * HOUR


def test_a_control_names_its_message_and_says_what_it_stored() -> None:
    hour, tomorrow, off = nudge_controls("teams-digest:p1:2026-11-23").actions
    assert control_value(hour.value, SNOOZE) == ("1h", "teams-digest:p1:2026-11-23")
    assert control_value(off.value) == ("off", "teams-digest:p1:2026-11-23")
    assert control_value("tomorrow", tomorrow.id) == ("tomorrow", None)  # Slack's, no key
    for forged, action_id in (("forever", None), ('["1h", 7]', None), ('[["1h"], "k"]', None),
                              (off.value, SNOOZE)):
        with pytest.raises(BadValue):
            control_value(forged, action_id)
    snooze = control_change("1h", WEEK, "UTC")
    assert snooze == {"off": False, "snoozed_until_ms": WEEK + HOUR}
    assert control_change("off", WEEK, "UTC") == {"off": True}
    assert control_text("1h", WEEK + HOUR, Angled()) == f"Nudges snoozed until @{WEEK + HOUR}."
    assert control_text("off", None, Angled()).startswith("Approval nudges are off; `/timesheet")

    class Stored:
        def __init__(self, off: bool, until: int | None) -> None:
            self.off, self.snoozed_until_ms = off, until

    assert snoozed(Stored(False, WEEK + HOUR), WEEK + HOUR - 1)
    assert not snoozed(Stored(False, WEEK + HOUR), WEEK + HOUR)
    assert snoozed(Stored(True, None), WEEK) and not snoozed(None, WEEK)


def test_the_digest_shows_what_fits_and_approve_all_names_exactly_those() -> None:
    items = [(request(n), f"P{n}", n) for n in range(5)]
    message = digest(items, Angled(), limit=3)
    assert message.text == "5 timesheet(s) wait for your approval (the first 3 here):"
    header, *rows, everything = message.blocks
    assert header.text == f"*{message.text}*"
    assert [row.text for row in rows] == [
        f"<P{n}> - Mon 23 Nov - Sun 29 Nov 2026 - since @{n}" for n in range(3)]
    (button,) = everything.actions
    assert (button.id, button.label, button.style) == (APPROVE_ALL, "Approve all (3)", "primary")
    assert read_value(button.value) == [("s0", 1), ("s1", 1), ("s2", 1)]
    assert button.confirm is not None and button.confirm.text == (
        "Approve the 3 timesheets listed here?")
    single = digest(items[:1], Angled())
    assert single.text == "1 timesheet(s) wait for your approval:"
    assert APPROVE_ALL not in [a.id for a in single.actions()]


def test_approve_all_reads_only_what_it_wrote() -> None:
    many = [request(n) for n in range(MAX_ITEMS + 5)]
    (button,) = approve_all_block(many).actions
    assert len(read_value(button.value)) == MAX_ITEMS and "(40)" in button.label
    for value in ("", "[]", '[["s1",1],["s1",1]]', '[["s1"]]', '[["s1",-1]]', "{}"):
        with pytest.raises(BadValue):
            read_value(value)


def test_approve_all_decides_only_what_still_waits_for_the_clicker() -> None:
    state = {"submitId": "s1", "status": "s", "currentStage": 1,
             "pendingApprovers": [{"id": "a"}]}
    assert waits_for(state, request(1), "a")
    assert not waits_for(state, request(1), "b")
    assert not waits_for({**state, "currentStage": 2}, request(1), "a")
    assert not waits_for({**state, "status": "a"}, request(1), "a")
    assert not waits_for(state, request(2), "a") and not waits_for(None, request(1), "a")
    assert result_text(1, ["1. A: approved", "2. B: no"]) == (
        "You approved 1 of the 2 timesheets:\n1. A: approved\n2. B: no")


def test_the_staff_nudge_says_why_and_submit_now_carries_the_period() -> None:
    end = WEEK + 7 * DAY
    assert staff_nudge_text("draft", WEEK, end, WEEK + DAY) == (
        "The week is ending: your timesheet for Mon 23 Nov - Sun 29 Nov 2026 is not submitted "
        "yet.")
    assert staff_nudge_text("draft", WEEK, WEEK + DAY, WEEK + HOUR, "daily").startswith(
        "The day is ending: your timesheet for Mon 23 Nov")
    assert staff_nudge_text("rejected", WEEK, end, WEEK).endswith(
        "was rejected: correct it and submit again.")
    assert staff_nudge_text("draft", WEEK, end, end) == (
        "Your timesheet for Mon 23 Nov - Sun 29 Nov 2026 is not submitted yet.")
    message = submit_now_message("Submit it", WEEK, end, "staff:p1:1")
    (action,) = message.actions()
    assert (action.id, action.style) == (SUBMIT_NOW, "primary")
    assert submit_value(action.value) == (WEEK, end, "staff:p1:1")
    assert submit_value(json.dumps([WEEK, end])) == (WEEK, end, None)
    with pytest.raises(BadValue):
        submit_value(json.dumps([end, WEEK]))


def test_the_home_in_words() -> None:
    days = by_day([{"startTime": {"ts": WEEK + HOUR}, "duration": 2 * HOUR},
                   {"startTime": {"ts": WEEK + DAY + HOUR}, "duration": HOUR}],
                  WEEK, WEEK + 2 * DAY)
    assert days == [(date(2026, 11, 23), 2 * HOUR), (date(2026, 11, 24), HOUR)]
    facts = HomeFacts(l10n.current(), days, "rejected", [(request(1), "Ann", "8h")], WEEK,
                      WEEK + 2 * DAY, ["Vacation: 3 days left"], None, "week", ZoneInfo("UTC"))
    content = home_content(facts, Angled())
    assert content.title == title("week", "Mon 23 Nov - Tue 24 Nov 2026")
    assert content.hours.endswith("\n*Total 3h*")
    assert content.status == "*Timesheet:* Rejected: correct it and submit again"
    assert content.time_off == "*Time off:* <Vacation: 3 days left>"
    assert content.waiting_title == "Waiting for you (1)"
    empty = home_content(HomeFacts(l10n.current(), days, None, [], WEEK, WEEK + 2 * DAY, [],
                                   2 * HOUR, "month", ZoneInfo("UTC")), Angled())
    assert empty.time_off is None and empty.waiting_title is None
    assert empty.status == "*Timesheet:* Draft (not submitted)"
    assert empty.title.startswith("This month (") and "of 2h expected" in empty.hours
    report = {"quotas": [{"absenceTypeId": "v"}, {"absenceTypeId": "x"}], "absenceTypes": []}
    assert usable_report(report, [{"id": "v"}])["quotas"] == [{"absenceTypeId": "v"}]
    assert usable_report(report, None) is report


def test_how_a_person_links() -> None:
    prompt = link_prompt("I don't know you <yet>", can_link=True)
    assert prompt.plain and prompt.blocks[0].plain
    assert [a.id for a in prompt.actions()] == [LINK_ACTION]
    assert link_prompt("No e-mail", can_link=False).actions() == ()
    assert link_refusal(InvalidCredentials("no")) == (
        "The time tracking service does not know this key.")
    assert link_refusal(NotIdentified("x" * 200, can_link=False)) == "x" * 150
    person = ChatPerson("o", "p", "Ann", "ann@example.com", "k", "UTC")
    assert linked_text(person) == ("Linked: you are Ann (ann@example.com) in the time tracking "
                                   "service. I act only as you.")
