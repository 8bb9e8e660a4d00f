"""The neutral chat core's pure parts (bot/chat/): the command table, quick entry's answer,
the approval messages and rules with a plain markup, who is told how to link."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from bot.chat.approvals import (
    APPROVE,
    DECISION,
    REJECT,
    Request,
    may_try,
    outcome_for,
    outcome_message,
    parse_ref,
    ref_of,
    refusal_reason,
    request_message,
    waiting_blocks,
)
from bot.chat.commands import CommandTable
from bot.chat.deciding import claim_key
from bot.chat.markup import PLAIN
from bot.chat.message import Fact, reply
from bot.chat.person import ChatPerson, not_known, who_of, zone_of
from bot.chat.quick_entry import EDIT, MAX_CHOICES, PICK, UNDO, conversation, log_message
from bot.chat.values import BadValue
from timebot.timeentry import LogResult, Outcome
from timebot.timeentry.plan import Choice

WEEK = 1_795_392_000_000  # Mon 23 Nov 2026 00:00 UTC
DAY = 86_400_000
REQUEST = Request("s1", 1, "t1", "p1", WEEK, WEEK + 7 * DAY)


class Angled:
    """A markup that shows what it escaped and which moments it wrote."""

    def escape(self, text: object) -> str:
        return f"<{text}>"

    def time(self, ms: int) -> str:
        return f"@{ms}"


def test_the_table_finds_a_sub_command_a_fallback_or_none() -> None:
    table: CommandTable[str] = CommandTable()
    table.add("/time", "List", "list-handler", "your entries")
    table.fallback("/time", "log-handler")
    assert table.lookup("/time", "  LIST  recent ") == ("list", "list-handler", "recent")
    assert table.lookup("/time", "2h @acme fixing") == ("", "log-handler", "2h @acme fixing")
    assert table.lookup("/time", "   ") is None
    assert table.lookup("/timesheet", "status") is None
    assert table.help_text("/time") == "`/time list` your entries"
    assert table.help_text("/timesheet") == "`/timesheet` has no sub-commands yet."
    with pytest.raises(ValueError, match="registered twice"):
        table.add("/time", "list", "again")


def test_the_quick_entry_conversation_lists_its_sub_commands() -> None:
    table = conversation()
    assert sorted(table.commands["/time"]) == ["delete", "edit", "help", "list", "undo", "week"]
    assert sorted(table.commands["/timesheet"]) == ["status", "submit"]
    assert table.lookup("/time", "3h @acme")[0] == ""  # type: ignore[index]
    assert "`/timesheet submit` `[last]` submit this (last) week" in table.help_text("/timesheet")


def test_a_logged_entry_answers_with_undo_and_edit_a_doubt_with_its_candidates() -> None:
    logged = Outcome("2h @acme", record_id="r1", problem="—")
    doubt = Outcome("2h @ac", problem="which one?", choices=tuple(
        Choice(f"Acme {i}", f"2h @acme{i}") for i in range(MAX_CHOICES + 2)))
    answer = log_message(LogResult((logged, doubt)))
    assert answer.plain and answer.text == f"{logged.line()}\n{doubt.line()}"
    first, second = answer.blocks
    assert first.plain and first.text == logged.line()
    assert [(a.id, a.label, a.value, a.style) for a in first.actions] == [
        (UNDO, "Undo", "r1", "danger"), (EDIT, "Edit", "r1", None)]
    assert [(a.id, a.value) for a in second.actions] == [
        (f"{PICK}_{i}", f"2h @acme{i}") for i in range(MAX_CHOICES)]


def test_a_reply_is_plain_text_without_actions() -> None:
    answer = reply("a <b> & c")
    assert answer.plain and answer.text == "a <b> & c" and answer.actions() == ()


def test_a_request_encodes_what_decode_reads_and_refuses_anything_else() -> None:
    assert Request.decode(REQUEST.encode()) == REQUEST
    for value in ("", "[1,2]", '["s1",1,"t1","p1",5,5]', '["s1",true,"t1","p1",1,5]', "{"):
        with pytest.raises(BadValue):
            Request.decode(value)
    assert parse_ref(ref_of("s1", 2, "a1")) == ("s1", 2, "a1")
    assert parse_ref("other:s1:2:a1") is None


def test_the_request_message_names_person_period_stage_and_offers_the_decision() -> None:
    message = request_message(REQUEST, "Ann", "stage 1 of 2", "*Total 8h*", Angled())
    assert message.text == ("<Ann> submitted the timesheet for Mon 23 Nov - Sun 29 Nov 2026: "
                            "waiting for your approval")
    header, summary, decision = message.blocks
    assert header.text == ("*<Ann>* submitted the timesheet for *Mon 23 Nov - Sun 29 Nov "
                           "2026* (stage 1 of 2).")
    assert summary.text == "*Total 8h*"
    assert decision.group == DECISION and decision.text == ""
    assert [(a.id, a.value, a.style) for a in decision.actions] == [
        (APPROVE, REQUEST.encode(), "primary"), (REJECT, REQUEST.encode(), "danger")]
    assert message.facts == (Fact("person", "Ann"), Fact("period", "Mon 23 Nov - Sun 29 Nov 2026"),
                             Fact("stage", "stage 1 of 2"))


def test_the_outcome_message_and_the_waiting_list() -> None:
    outcome = outcome_message("Ann", WEEK, WEEK + 7 * DAY, "Approved by <Bo> at @0", Angled())
    assert outcome.text.startswith("Timesheet of <Ann> for Mon 23 Nov - Sun 29 Nov 2026: ")
    assert outcome.blocks[0].text.endswith("*\nApproved by <Bo> at @0")
    rows = waiting_blocks([(REQUEST, "Ann", "8h")], Angled())
    assert rows[0].text == "*<Ann>* - Mon 23 Nov - Sun 29 Nov 2026 - 8h"
    assert [a.id for a in rows[0].actions] == [APPROVE, REJECT]


def test_what_a_request_message_becomes_whatever_decided() -> None:
    markup = Angled()
    base = {"stage": 1, "by": {"name": "Bo"}, "pendingApprovers": [{"id": "a"}]}
    assert outcome_for({**base, "status": "a", "action": "approved"}, 1, "a", 5, markup) \
        == "Approved by <Bo> at @5"
    assert outcome_for({**base, "status": "a", "action": "autoApproved"}, 1, "a", 5, markup) \
        == "Approved automatically at @5"
    assert outcome_for({**base, "status": "r", "comment": " no "}, 1, "a", 5, markup) \
        == "Rejected by <Bo> at @5: <no>"
    assert outcome_for({**base, "status": "s", "action": "approved"}, 1, "a", 5, markup) is None
    assert outcome_for({**base, "status": "s", "action": "approved"}, 1, "b", 5, markup) \
        == "Approved by <Bo> at @5"
    assert outcome_for({**base, "status": "s", "action": "approved", "stage": 2}, 1, "a", 5,
                       markup) == "Approved by <Bo> at @5"
    assert outcome_for({**base, "status": "d", "action": "withdrawn"}, 1, "a", 5, markup) \
        == "No longer waiting for approval (withdrawn) since @5"
    assert outcome_for({**base, "status": "a"}, 1, "a", 5, PLAIN) == (
        "Approved by Bo at 1970-01-01 00:00 UTC")


def test_who_may_decide() -> None:
    waiting = {"submitId": "s1", "status": "s", "currentStage": 1,
               "pendingApprovers": [{"id": "a", "name": "Al"}, {"id": "b", "name": "<B>"}]}
    assert refusal_reason(None, REQUEST, "x", PLAIN) == (
        "This timesheet is no longer waiting for approval.")
    assert "out of date" in refusal_reason({**waiting, "submitId": "s0"}, REQUEST, "a", PLAIN)
    assert "moved on" in refusal_reason({**waiting, "currentStage": 2}, REQUEST, "a", PLAIN)
    assert refusal_reason(waiting, REQUEST, "x", Angled()) == (
        "You are not an approver of this stage: it waits for <Al>, <<B>>.")
    assert refusal_reason(waiting, REQUEST, "a", PLAIN) == "The service refused the decision."
    assert may_try(waiting, REQUEST) and may_try({**waiting, "status": "a"}, REQUEST)
    assert not may_try({**waiting, "status": "r"}, REQUEST)
    assert not may_try({**waiting, "submitId": "s0"}, REQUEST) and not may_try(None, REQUEST)
    assert claim_key(REQUEST, "a", reject=False) == "approve:s1:1:a"
    assert claim_key(REQUEST, "a", reject=True) == "reject:s1:1:a"


def test_a_person_in_chat_and_how_an_unknown_one_links() -> None:
    person = ChatPerson("o1", "p1", "Ann", "ann@example.com", "key", "Europe/Paris")
    who = who_of(person)
    assert (who.organisation_id, who.person_id, who.apikey) == ("o1", "p1", "key")
    assert who.zone == ZoneInfo("Europe/Paris")
    assert zone_of(ChatPerson("o1", "p1", "A", "a@x", "k", "Mars/Olympus")) == ZoneInfo("UTC")
    refusal = not_known("ann@example.com", "say `link`")
    assert refusal.can_link and refusal.message == (
        "I don't know ann@example.com in the time tracking service yet. Link your account once "
        "with your own API key: say `link` (the key is in your profile in the time tracking "
        "service).")
