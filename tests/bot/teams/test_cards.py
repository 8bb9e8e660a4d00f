"""bot.teams.cards: the Adaptive Cards Teams shows (pure functions). A request card asks with
Universal Actions (Approve; Reject only with a reason typed into the card) and refreshes for
its approvers; its data reads back as the request it names and anything else is refused; the
outcome card has no buttons; the digest's "Approve all (N)" is behind a confirmation naming
N; texts are in the reader's language and formats."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.teams import cards
from bot.teams.cards import BadCard, CardRequest, DigestItem
from timebot import l10n
from timebot.summary import summarise

MONDAY = 1_794_787_200_000  # Mon 2026-11-16 00:00 UTC
DAY = 86_400_000
HOUR = 3_600_000
REQUEST = CardRequest("sub-1", 1, "ts-1", "p-ada", MONDAY, MONDAY + 7 * DAY)
FRENCH = l10n.Localisation(lang="fr", date_format="DD/MM/YYYY", time_zone="Europe/Paris",
                           time_format=24)


def summary() -> Any:
    person = {"id": "p-ada", "name": "Ada *Lovelace*", "email": "ada@example.com"}
    records = [
        {"id": "r1", "duration": 8 * HOUR, "comment": "", "startTime": {"ts": MONDAY + 9 * HOUR},
         "projects": [{"id": "x", "name": "Engine"}], "task": None, "absence": None},
        {"id": "r2", "duration": 4 * HOUR, "comment": "",
         "startTime": {"ts": MONDAY + DAY + 9 * HOUR}, "projects": [], "task": None,
         "absence": {"id": "a", "name": "Doctor"}},
    ]
    return summarise(person, records, None, MONDAY, MONDAY + 7 * DAY)


def actions_of(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every action of a card by its verb (Action.Execute) or title (Action.ShowCard), nested
    cards included."""
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


def test_a_review_card_asks_with_universal_actions_and_refreshes_for_its_approvers() -> None:
    card = cards.review_card(REQUEST, "Ada *Lovelace*", "stage 1 of 2", summary(),
                             ["29:ada-approver", "29:other", "29:ada-approver"])
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    actions = actions_of(card)
    approve = actions["approve"]
    assert approve["type"] == "Action.Execute" and approve["associatedInputs"] == "none"
    assert cards.request_of(approve["data"]) == REQUEST
    reject = actions["reject"]
    assert cards.request_of(reject["data"]) == REQUEST
    assert reject["associatedInputs"] == "auto"  # the reason travels with the click
    shown = actions["Reject"]["card"]["body"]
    assert shown == [{"type": "Input.Text", "id": "reason", "isMultiline": True,
                      "isRequired": True, "label": "Reason (the person sees it)",
                      "errorMessage": "Reason (the person sees it)", "maxLength": 2000}]
    refresh = card["refresh"]
    assert refresh["userIds"] == ["29:ada-approver", "29:other"]
    assert refresh["action"]["verb"] == "refresh"
    assert cards.request_of(refresh["action"]["data"]) == REQUEST
    text = texts_of(card)
    assert "Ada \\\\*Lovelace\\\\* submitted the timesheet" in text  # escaped Markdown
    facts = {f["title"]: f["value"] for f in card["body"][2]["facts"]}
    assert facts["Total:"] == "12h"
    assert facts["By project:"] == "Engine 8h"
    assert facts["Absences:"] == "Doctor 4h"


def test_the_refresh_names_at_most_sixty_users() -> None:
    block = cards.refresh_block(REQUEST, [f"29:u{n}" for n in range(100)])
    assert len(block["userIds"]) == 60


def test_a_card_asking_an_approver_because_another_is_away_says_why() -> None:
    card = cards.review_card(REQUEST, "Ada", "approval", summary(), ["29:x"],
                             reason="Grace is away until Fri 20 Nov")
    assert card["body"][0]["text"] == "Grace is away until Fri 20 Nov: you are asked too."


def test_a_review_card_in_the_readers_language() -> None:
    with l10n.using(FRENCH):
        card = cards.review_card(REQUEST, "Ada", "approbation", summary(), ["29:x"])
    actions = actions_of(card)
    assert actions["approve"]["title"] == "Approuver"
    assert "Rejeter" in actions
    assert "16/11/2026" in texts_of(card)  # the reader's date format
    assert card["body"][2]["facts"][0]["title"] == "Total :"


@pytest.mark.parametrize("data", [
    None, [], "sub-1", {},
    {**REQUEST.data(), "stage": "1"},  # not a number
    {**REQUEST.data(), "stage": True},
    {**REQUEST.data(), "submitId": ""},
    {**REQUEST.data(), "submitId": "x" * 65},
    {**REQUEST.data(), "endTime": MONDAY},  # the period ends before it starts
    {**REQUEST.data(), "personId": {"id": "p"}},
])
def test_data_timebot_did_not_write_is_refused(data: Any) -> None:
    with pytest.raises(BadCard):
        cards.request_of(data)


def test_the_reason_is_read_stripped_and_bounded() -> None:
    assert cards.reason_of({**REQUEST.data(), "reason": "  hours missing \n"}) == \
        "hours missing"
    assert cards.reason_of({**REQUEST.data(), "reason": "   "}) == ""
    assert cards.reason_of({**REQUEST.data(), "reason": 3}) == ""
    assert len(cards.reason_of({"reason": "x" * 5000})) == 2000


def test_the_outcome_card_has_no_buttons_and_no_refresh() -> None:
    outcome = cards.outcome_text({"status": "a", "action": "approved", "by": {"name": "Bob"}},
                                 1, "p-bob", MONDAY + 8 * DAY)
    assert outcome == "Approved by Bob at 2026-11-24 00:00 UTC"
    card = cards.outcome_card("Ada", REQUEST.start_ms, REQUEST.end_ms, outcome)
    assert "actions" not in card and "refresh" not in card
    assert card["body"][0]["text"] == (
        "Timesheet of Ada for Mon 16 Nov to Sun 22 Nov 2026: Approved by Bob at "
        "2026-11-24 00:00 UTC")


@pytest.mark.parametrize(("data", "stage", "approver", "shown"), [
    ({"status": "r", "by": {"name": "Bob"}, "comment": "Tuesday *missing*"}, 1, "p-bob",
     "Rejected by Bob at {at}: Tuesday \\*missing\\*"),
    ({"status": "a", "action": "autoApproved"}, 1, "p-bob", "Approved automatically at {at}"),
    ({"status": "s", "action": "withdrawn"}, 1, "p-bob",
     "No longer waiting for approval (withdrawn) since {at}"),
    ({"status": "s", "action": "approved", "stage": 2, "by": {"name": "Cy"}}, 1, "p-bob",
     "Approved by Cy at {at}"),
    ({"status": "s", "action": "approved", "stage": 1, "by": {"name": "Cy"},
      "pendingApprovers": [{"id": "p-bob"}]}, 1, "p-bob", None),  # still waits for Bob
    ({"status": "s", "action": "approved", "stage": 1, "by": {"name": "Bob"},
      "pendingApprovers": [{"id": "p-cy"}]}, 1, "p-bob", "Approved by Bob at {at}"),
])
def test_what_a_request_card_becomes(data: dict[str, Any], stage: int, approver: str,
                                     shown: str | None) -> None:
    at = "2026-11-24 00:00 UTC"
    expected = None if shown is None else shown.format(at=at)
    assert cards.outcome_text(data, stage, approver, MONDAY + 8 * DAY) == expected


def test_the_outcome_in_the_readers_language_and_time_zone() -> None:
    with l10n.using(FRENCH):
        outcome = cards.outcome_text({"status": "a", "by": {"name": "Bob"}}, 1, "p",
                                     MONDAY + 8 * DAY)
    assert outcome is not None
    assert "24/11/2026 01:00" in outcome and outcome.startswith("Approuvé")


def digest_items(count: int) -> list[DigestItem]:
    return [DigestItem(CardRequest(f"sub-{n}", 1, "", f"p-{n}", MONDAY, MONDAY + 7 * DAY),
                       f"Person {n}", MONDAY + 7 * DAY) for n in range(count)]


def test_the_digest_approves_all_behind_a_confirmation_naming_n() -> None:
    card = cards.digest_card(digest_items(3))
    assert card["body"][0]["text"] == "3 timesheet(s) wait for your approval"
    confirm = actions_of(card)["Approve all (3)"]
    assert confirm["type"] == "Action.ShowCard"  # nothing is decided by the first click
    assert confirm["card"]["body"][0]["text"] == "Approve the 3 timesheets listed here?"
    approve_all = confirm["card"]["actions"][0]
    assert approve_all["verb"] == "approveAll" and approve_all["title"] == "Approve 3"
    assert cards.approve_all_of(approve_all["data"]) == [("sub-0", 1), ("sub-1", 1),
                                                         ("sub-2", 1)]
    # and each request keeps its own buttons
    assert len([c for c in card["body"] if c["type"] == "Container"]) == 3


def test_a_digest_of_one_has_no_approve_all_and_a_long_one_names_the_shown() -> None:
    assert "actions" not in cards.digest_card(digest_items(1))
    card = cards.digest_card(digest_items(45))
    assert card["body"][0]["text"] == (
        "45 timesheet(s) wait for your approval (the first 40 here)")
    named = cards.approve_all_of(
        actions_of(card)["Approve all (40)"]["card"]["actions"][0]["data"])
    assert len(named) == 40


@pytest.mark.parametrize("data", [
    None, {}, {"requests": []}, {"requests": [["sub-1", 1], ["sub-1", 1]]},
    {"requests": [["sub-1"]]}, {"requests": [["sub-1", -1]]},
    {"requests": [["s", 1]] * 41},
])
def test_an_approve_all_timebot_did_not_write_is_refused(data: Any) -> None:
    with pytest.raises(BadCard):
        cards.approve_all_of(data)


def test_nudges() -> None:
    item = digest_items(1)[0]
    nudge = cards.approver_nudge_card(item, ["29:bob"])
    assert nudge["body"][0]["text"].startswith(
        "Reminder: the timesheet of Person 0 for Mon 16 Nov to Sun 22 Nov 2026 has waited")
    assert "approve" in actions_of(nudge) and nudge["refresh"]["userIds"] == ["29:bob"]
    staff = cards.staff_nudge_card("The week is ending.", MONDAY, MONDAY + 7 * DAY, "staff:p:1")
    submit = actions_of(staff)["submitNow"]
    assert submit["data"] == {"startTime": MONDAY, "endTime": MONDAY + 7 * DAY,
                              "key": "staff:p:1"}
    decide = cards.review_card(REQUEST, "Ada", "approval", summary(), ["29:admin"])
    climb = cards.notice_card(["Bob has not decided [this]."], decide)
    assert climb["body"][0]["text"] == "Bob has not decided \\[this\\]."
    assert "approve" in actions_of(climb) and climb["refresh"] == decide["refresh"]
    assert "actions" not in cards.notice_card(["Bob has not decided."])


def test_envelopes() -> None:
    card = cards.outcome_card("Ada", MONDAY, MONDAY + DAY, "done")
    activity = cards.message(card, "Ada: done")
    assert activity == {"type": "message", "summary": "Ada: done", "attachments": [
        {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}]}
    assert cards.card_response(card) == {
        "statusCode": 200, "type": "application/vnd.microsoft.card.adaptive", "value": card}
    assert cards.error_response(400, "no")["value"] == {"code": "BadRequest", "message": "no"}
