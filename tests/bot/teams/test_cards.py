"""bot.teams.render and bot.teams.cards: the neutral chat messages (bot.chat) as Adaptive
Cards (pure functions). A review request asks with Universal Actions (Approve; Reject only
with a reason typed into the card) and refreshes for its approver; a card's data reads back as
what timebot wrote and anything else is refused; the outcome has no buttons; the digest's
"Approve all (N)" is behind a confirmation naming N; texts are in the reader's language and
formats, outside text escaped for Markdown."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.chat.approvals import (
    APPROVE,
    REJECT,
    Request,
    outcome_for,
    outcome_message,
    request_message,
    summary_text,
)
from bot.chat.approve_all import APPROVE_ALL, read_value
from bot.chat.nudges import SUBMIT_NOW, approver_nudge, digest, submit_now_message, submit_value
from bot.teams import cards, render
from bot.teams.cards import BadCard
from bot.teams.render import TEAMS
from timebot import l10n
from timebot.summary import summarise

MONDAY = 1_794_787_200_000  # Mon 2026-11-16 00:00 UTC
DAY = 86_400_000
HOUR = 3_600_000
REQUEST = Request("sub-1", 1, "ts-1", "p-ada", MONDAY, MONDAY + 7 * DAY)
FRENCH = l10n.Localisation(lang="fr", date_format="DD/MM/YYYY", time_zone="Europe/Paris",
                           time_format=24)


def summary() -> Any:
    person = {"id": "p-ada", "name": "Ada *Lovelace*", "email": "ada@example.com"}
    records = [
        {"id": "r1", "duration": 8 * HOUR, "comment": "", "startTime": {"ts": MONDAY + 9 * HOUR},
         "projects": [{"id": "x", "name": "Engine_2"}], "task": None, "absence": None},
        {"id": "r2", "duration": 4 * HOUR, "comment": "",
         "startTime": {"ts": MONDAY + DAY + 9 * HOUR}, "projects": [], "task": None,
         "absence": {"id": "a", "name": "Doctor"}},
    ]
    return summarise(person, records, None, MONDAY, MONDAY + 7 * DAY)


def request_card() -> dict[str, Any]:
    message = request_message(REQUEST, "Ada *Lovelace*", "stage 1 of 2",
                              summary_text(summary(), TEAMS), TEAMS)
    return render.card_of(message, render.refresh_block(REQUEST.encode(), ["29:ann"]))


def actions_of(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every action of a card by its verb (Action.Execute) or title (Action.ShowCard)."""
    found: dict[str, dict[str, Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "Action.Execute":
                found[str(node["verb"])] = node
            elif node.get("type") == "Action.ShowCard":
                found[str(node["title"])] = node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk({k: v for k, v in card.items() if k != "refresh"})
    return found


def texts_of(card: dict[str, Any]) -> str:
    return json.dumps(card, ensure_ascii=False)


def test_a_review_card_asks_with_universal_actions_and_refreshes_for_its_approver() -> None:
    card = request_card()
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    actions = actions_of(card)
    approve = actions[APPROVE]
    assert approve["type"] == "Action.Execute" and approve["associatedInputs"] == "none"
    assert Request.decode(render.value_of(approve["data"])) == REQUEST
    reject = actions[REJECT]
    assert Request.decode(render.value_of(reject["data"])) == REQUEST
    assert reject["associatedInputs"] == "auto"  # the reason travels with the click
    [reason] = actions["Reject"]["card"]["body"]
    assert (reason["type"], reason["id"], reason["isRequired"]) == ("Input.Text", "reason",
                                                                    True)
    assert card["refresh"] == {"action": {"type": "Action.Execute", "verb": "refresh",
                                          "data": {"value": REQUEST.encode()}},
                               "userIds": ["29:ann"]}
    first = card["body"][0]["text"]
    # the chat markup's bold as Markdown's, the name's own stars escaped
    assert first.startswith("**Ada \\*Lovelace\\*** submitted the timesheet for **Mon 16 Nov")
    assert "Engine\\_2 8h" in texts_of(card).replace("\\\\", "\\")


def test_the_refresh_names_at_most_sixty_users() -> None:
    block = render.refresh_block(REQUEST.encode(), [f"29:u{n}" for n in range(100)])
    assert len(block["userIds"]) == 60


def test_a_review_card_in_the_readers_language() -> None:
    with l10n.using(FRENCH):
        card = request_card()
    actions = actions_of(card)
    assert actions[APPROVE]["title"] == "Approuver"
    assert "Rejeter" in actions
    assert "16/11/2026" in texts_of(card)  # the reader's date format


@pytest.mark.parametrize("data", [None, [], "sub-1", {}, {"value": 3}, {"value": ""},
                                  {"value": "x" * 2001}])
def test_data_timebot_did_not_write_is_refused(data: Any) -> None:
    with pytest.raises(BadCard):
        render.value_of(data)


def test_the_reason_is_read_stripped_and_bounded() -> None:
    assert cards.reason_of({"value": "v", "reason": "  hours missing \n"}) == "hours missing"
    assert cards.reason_of({"value": "v", "reason": "   "}) == ""
    assert cards.reason_of({"value": "v", "reason": 3}) == ""
    assert len(cards.reason_of({"reason": "x" * 5000})) == 2000


def test_the_outcome_card_has_no_buttons_and_no_refresh() -> None:
    outcome = outcome_for({"status": "a", "action": "approved", "by": {"name": "Bob_B"}},
                          1, "p-bob", MONDAY + 8 * DAY, TEAMS)
    assert outcome == "Approved by Bob\\_B at 2026-11-24 00:00 UTC"
    card = render.card_of(outcome_message("Ada", MONDAY, MONDAY + 7 * DAY, outcome, TEAMS))
    assert "actions" not in texts_of(card) and "refresh" not in card
    assert card["body"][0]["text"] == (
        "Timesheet of **Ada** for **Mon 16 Nov - Sun 22 Nov 2026**\n"
        "Approved by Bob\\_B at 2026-11-24 00:00 UTC")


def test_the_outcome_in_the_readers_language_and_time_zone() -> None:
    with l10n.using(FRENCH):
        outcome = outcome_for({"status": "a", "by": {"name": "Bob"}}, 1, "p",
                              MONDAY + 8 * DAY, TEAMS)
    assert outcome is not None
    assert "24/11/2026 01:00" in outcome and outcome.startswith("Approuvé")


def waiting(count: int) -> list[tuple[Request, str, int]]:
    return [(Request(f"sub-{n}", 1, "", f"p-{n}", MONDAY, MONDAY + 7 * DAY), f"Person {n}",
             MONDAY + 7 * DAY) for n in range(count)]


def test_the_digest_approves_all_behind_a_confirmation_naming_n() -> None:
    card = render.card_of(digest(waiting(3), TEAMS))
    assert card["body"][0]["text"] == "**3 timesheet(s) wait for your approval:**"
    confirm = actions_of(card)["Approve all (3)"]
    assert confirm["type"] == "Action.ShowCard"  # nothing is decided by the first click
    assert confirm["card"]["body"][0]["text"] == "Approve the 3 timesheets listed here?"
    approve_all = confirm["card"]["actions"][0]
    assert approve_all["verb"] == APPROVE_ALL and approve_all["title"] == "Approve 3"
    assert read_value(render.value_of(approve_all["data"])) == [
        ("sub-0", 1), ("sub-1", 1), ("sub-2", 1)]
    # and each request keeps its own buttons
    assert len([b for b in card["body"] if b["type"] == "ActionSet"]) == 4


def test_a_digest_of_one_has_no_approve_all() -> None:
    assert APPROVE_ALL not in texts_of(render.card_of(digest(waiting(1), TEAMS)))


def test_nudges_and_notices() -> None:
    request, name, since = waiting(1)[0]
    nudge = render.card_of(approver_nudge(request, name, since, TEAMS))
    assert nudge["body"][0]["text"].startswith(
        "Reminder: the timesheet of Person 0 for Mon 16 Nov - Sun 22 Nov 2026 has waited")
    assert APPROVE in actions_of(nudge)
    staff = render.card_of(submit_now_message("The week is ending.", MONDAY,
                                              MONDAY + 7 * DAY, "staff:p:1"))
    submit = actions_of(staff)[SUBMIT_NOW]
    assert submit_value(render.value_of(submit["data"])) == (MONDAY, MONDAY + 7 * DAY,
                                                             "staff:p:1")
    notice = render.card_of(cards.notice_message(["Bob has not decided [this]."], TEAMS))
    assert notice["body"][0]["text"] == "Bob has not decided \\[this\\]."
    assert "ActionSet" not in texts_of(notice)


def test_envelopes() -> None:
    card = render.card_of(cards.notice_message(["done"], TEAMS))
    activity = cards.message(card, "Ada: done")
    assert activity == {"type": "message", "summary": "Ada: done", "attachments": [
        {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}]}
    assert cards.card_response(card) == {
        "statusCode": 200, "type": "application/vnd.microsoft.card.adaptive", "value": card}
    assert cards.error_response(400, "no")["value"] == {"code": "BadRequest", "message": "no"}
