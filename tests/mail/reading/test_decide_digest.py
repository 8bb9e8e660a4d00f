"""The grammar of a reply to a daily digest (pure: mail.reading.decide_digest)."""

from __future__ import annotations

import pytest

from mail.reading.decide_digest import DigestCommand, plan_digest, read_digest_reply


@pytest.mark.parametrize("text", [
    "approve all", "Approve all, thanks!", "*APPROVE ALL*", "all approved",
    "tout approuver", "Approuvé, tout", "alle genehmigen", "Genehmigt, alle. Danke",
    "aprobar todo", "Apruebo todos", "alle goedkeuren",
])
def test_approve_all_in_the_known_languages(text: str) -> None:
    assert read_digest_reply(text) == (DigestCommand("approve", None),)


@pytest.mark.parametrize("text,numbers", [
    ("approve 1 3", (1, 3)), ("approve 1,3", (1, 3)), ("Approve #1, #3 and 4 please", (1, 3, 4)),
    ("approuver 2 et 3", (2, 3)), ("genehmigt 1 und 2", (1, 2)), ("apruebo 1 y 2", (1, 2)),
])
def test_approve_by_numbers(text: str, numbers: tuple[int, ...]) -> None:
    assert read_digest_reply(text) == (DigestCommand("approve", numbers),)


def test_reject_by_number_with_the_reason_in_its_own_letters() -> None:
    assert read_digest_reply("Reject 2: Too many hours on Tuesday\nPlease fix.") == (
        DigestCommand("reject", (2,), "Too many hours on Tuesday\nPlease fix."),)
    assert read_digest_reply("abgelehnt 2 Zu viele Stunden") == (
        DigestCommand("reject", (2,), "Zu viele Stunden"),)


@pytest.mark.parametrize("text", [
    "approve", "OK", "approve 1 3 but not 2", "Thanks, I will look at it", "", "1 3",
    "approve " + "1 " * 10_000,
])
def test_what_decides_nothing(text: str) -> None:
    commands = read_digest_reply(text)
    assert plan_digest(commands, 3).items == ()


def test_the_plan_numbers_win_over_all_and_conflicts_decide_nothing() -> None:
    commands = read_digest_reply("approve all\nreject 2 too many\napprove 3\nreject 3 no\n"
                                 "approve 9\nreject 1")
    plan = plan_digest(commands, 3)
    assert [(i.number, i.action) for i in plan.items] == [(2, "reject")]
    assert plan.unknown == (9,) and plan.twice == (3,) and plan.no_reason == (1,)


def test_text_after_an_approval_is_no_decision() -> None:
    assert read_digest_reply("approve 1\nand reject 2 later maybe") == (
        DigestCommand("approve", (1,)),)


def test_enormous_replies_are_bounded() -> None:
    numbers = " ".join(str(n) for n in range(100, 200))
    text = "\n".join(f"approve {numbers}" for _ in range(5_000))
    commands = read_digest_reply(text)
    assert len(commands) == 50
    plan = plan_digest(commands, 3)
    assert plan.items == () and len(plan.unknown) == 100
