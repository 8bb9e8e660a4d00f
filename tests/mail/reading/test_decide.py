# ruff: noqa: RUF001  (test data in many scripts: look-alike letters are intended)
"""decide(): the decision words, reasons, and what is not a decision."""

from __future__ import annotations

import pytest

from mail.reading.decide import Approve, Comment, Decision, Reject, RejectWithoutReason, decide

QUOTE = "\n\nOn Mon, Jan 5, 2026 at 10:00 AM Timebot <timebot@x.example> wrote:\n> Reply approve\n"

APPROVALS = [
    "approve", "Approve", "APPROVE", "approved", "Approved.", "  approve", "accept", "Accepted!",
    "ok", "OK", "Ok.", "okay", "yes", "Yes!!", "yes, approved", "LGTM", "*approve*", '"OK"',
    "Approve 👍", "Approved, thanks!", "OK, thank you", "ok danke", "Yes please",
    # French, German, Spanish, Dutch
    "approuver", "Approuvé", "accepter", "Accepté", "oui", "Oui, merci", "d'accord", "D’accord",
    "genehmigen", "Genehmigt", "akzeptieren", "Akzeptiert", "ja", "Ja, passt", "einverstanden",
    "freigegeben", "aprobar", "Aprobado", "aceptar", "Acepto", "sí", "Si", "vale", "De acuerdo",
    "goedkeuren", "Goedgekeurd", "akkoord",
]  # fmt: skip

REJECT_WORDS = [
    "reject", "Reject", "REJECTED", "refuse", "Refused", "decline", "declined", "deny",
    "rejeter", "Rejeté", "refuser", "Refusé", "ablehnen", "Abgelehnt", "lehne ab",
    "zurückweisen", "rechazar", "Rechazado", "denegar", "afwijzen", "Afgewezen", "weigeren",
]  # fmt: skip


@pytest.mark.parametrize("text", APPROVALS)
def test_approvals(text: str) -> None:
    assert decide(text) == Approve()
    assert decide(text + QUOTE) == Approve()


@pytest.mark.parametrize("word", REJECT_WORDS)
def test_rejections_with_reason_on_the_same_line(word: str) -> None:
    for separator in (" ", ": ", " - ", ", ", " — ", ". "):
        assert decide(f"{word}{separator}Tuesday is wrong" + QUOTE) == Reject("Tuesday is wrong")


@pytest.mark.parametrize("word", REJECT_WORDS)
def test_rejections_without_reason(word: str) -> None:
    assert decide(word) == RejectWithoutReason()
    assert decide(f"  {word}!" + QUOTE) == RejectWithoutReason()
    assert decide(f"{word}\n\nSent from my iPhone" + QUOTE) == RejectWithoutReason()
    assert decide(f"{word}:\n-- \nAnna Approver\nHead of Ops") == RejectWithoutReason()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "reject\nThe hours on Wednesday\nlook doubled.",
            Reject("The hours on Wednesday\nlook doubled."),
        ),
        ("Reject:\n\n  Friday was a holiday.\n\nThanks", Reject("Friday was a holiday.\n\nThanks")),
        ("reject because Monday is empty", Reject("because Monday is empty")),
        ("Reject — wrong week.\nSent from my iPhone", Reject("wrong week.")),
        ("reject Monday\n\nVon meinem iPhone gesendet\n\n> approve", Reject("Monday")),
        ("Abgelehnt: Überstunden fehlen", Reject("Überstunden fehlen")),
        ("Rechazado - faltan horas", Reject("faltan horas")),
        ("Refusé : il manque mardi", Reject("il manque mardi")),
        ("Lehne ab, bitte Dienstag prüfen", Reject("bitte Dienstag prüfen")),
        ("reject: 拒绝，周二不对", Reject("拒绝，周二不对")),
    ],
)
def test_rejection_reasons(text: str, expected: Decision) -> None:
    assert decide(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Approve\n\nGreat week, thanks Bob.", Approve("Great week, thanks Bob.")),
        ("ok\nsee you monday\n\n-- \nAnna", Approve("see you monday")),
    ],
)
def test_approval_with_comment(text: str, expected: Decision) -> None:
    assert decide(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Why are there 12 hours on Friday?",
        "OK but next time split the meetings",  # says more than "ok": no accident
        "Yes, but I need to check the hours first",
        "No",
        "No problem",
        "non",
        "nein",
        "Rejection is not what I want",
        "approvement",
        "I approve",  # the decision word must come first
        "Please reject it",
        "accepted? what does this mean",
    ],
)
def test_comments(text: str) -> None:
    assert decide(text + QUOTE) == Comment(text)


@pytest.mark.parametrize(
    "text",
    [
        "> approve\n\nWhat is this?",
        "On Mon, Jan 5, 2026, Timebot wrote:\n> reject: no\n\nWhat is this?",
        "What is this?\n\n-----Original Message-----\nFrom: Timebot\nSent: Monday\napprove",
        "What is this?\n\nFrom: Timebot <t@x.example>\nSent: Monday\nTo: Anna\nSubject: x\n\n"
        "approve",
        "What is this?\n\nAm 05.01.2026 um 10:00 schrieb Timebot <t@x.example>:\n\n> approve",
        "What is this?\n\nLe 5 janv. 2026 à 10:00, Timebot a écrit :\n> approve",
        "What is this?\n\nEl 5 ene 2026, a las 10:00, Timebot escribió:\n> approve",
        "What is this?\n\nOp 5 jan. 2026 om 10:00 schreef Timebot <t@x.example>:\n> approve",
        "What is this?\n\n在 2026年1月5日 10:00，Timebot <t@x.example> 写道：\n> approve",
    ],
)
def test_decision_words_only_in_the_quote_are_no_decision(text: str) -> None:
    assert decide(text) == Comment("What is this?")


def test_empty_reply_is_an_empty_comment() -> None:
    assert decide("") == Comment("")
    assert decide(QUOTE) == Comment("")
    assert decide("\n\n-- \nAnna") == Comment("")


def test_bottom_posted_decision() -> None:
    text = (
        "On Mon, Jan 5, 2026 at 10:00 AM Timebot wrote:\n> Reply approve or reject\n\n"
        "reject\nFriday"
    )
    assert decide(text) == Reject("Friday")


def test_crlf_and_invisible_characters() -> None:
    assert decide("\ufeff\u200bApprove\r\n\r\n> x\r\n") == Approve()
    assert decide("Reject:\xa0wrong\r\n") == Reject("wrong")


MIA = "Mia Example <mia@acme.example>"
HISTORY = "> Ingrid submitted her timesheet for 2026-11-16 to 2026-11-22.\n> Reply approve."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Approve\nOn Mon, 23 Nov 2026, {MIA} wrote:\n{HISTORY}", Approve()),
        (f"Approve\n> On Mon, 23 Nov 2026, {MIA} wrote:\n{HISTORY}", Approve()),
        (f"Approved, thanks!\nOn Mon, 23 Nov 2026 at 09:12, Mia Example <\nmia@acme.example> "
         f"wrote:\n{HISTORY}", Approve()),
        (f"ok\nLe lun. 23 nov. 2026 à 09:12, {MIA} a écrit :\n{HISTORY}", Approve()),
        (f"Genehmigt\nAm Mo., 23. Nov. 2026 um 09:12 Uhr schrieb {MIA}:\n{HISTORY}", Approve()),
        (f"Genehmigt\nMia schrieb am 23.11.2026 um 09:12:\n{HISTORY}", Approve()),
        (f"Aprobado\nEl lun, 23 nov 2026 a las 9:12, {MIA} escribió:\n{HISTORY}", Approve()),
        (f"akkoord\nOp ma 23 nov. 2026 om 09:12 schreef {MIA}:\n{HISTORY}", Approve()),
        (f"yes\n2026-11-23 09:12 GMT+01:00 {MIA}:\n{HISTORY}", Approve()),
        (f"Approve\nOn Mon, 23 Nov 2026, {MIA} wrote:\nIngrid submitted her timesheet.",
         Approve()),
        (f"Reject: Tuesday is missing\nOn Mon, 23 Nov 2026, {MIA} wrote:\n{HISTORY}",
         Reject("Tuesday is missing")),
        (f"Reject\nTuesday is missing.\nOn Mon, 23 Nov 2026, {MIA} wrote:\n{HISTORY}",
         Reject("Tuesday is missing.")),
        (f"Refusé : il manque mardi\nLe lun. 23 nov. 2026 à 09:12, {MIA} a écrit :\n{HISTORY}",
         Reject("il manque mardi")),
        (f"Please fix Tuesday's hours.\nOn Mon, 23 Nov 2026, {MIA} wrote:\n{HISTORY}",
         Comment("Please fix Tuesday's hours.")),
        (f"Approve\n---- On Mon, 23 Nov 2026 09:12:00 +0100 {MIA} wrote ----\n{HISTORY}",
         Approve()),
        (f"Approve\n\nDen 23 nov. 2026 kl. 09:12 skrev {MIA}:\n{HISTORY}", Approve()),
        (f"Approve\nW dniu 23.11.2026 o 09:12, {MIA} napisał(a):\n{HISTORY}", Approve()),
        (f"Approve\n23.11.2026 09:12, {MIA} написал:\n{HISTORY}", Approve()),
        (f"Approve\nпн, 23 лист. 2026 о 09:12 {MIA} пише:\n{HISTORY}", Approve()),
        (f"Approve\n\nSendt fra min iPad\n\nDen 23. nov. 2026 kl. 09:12 skrev {MIA}:\n{HISTORY}",
         Approve()),
        (f"Approve\n\nFrån: {MIA}\nSkickat: den 23 november 2026 09:12\nTill: Anna\n"
         "Ämne: Tidrapport\n\nIngrid submitted her timesheet. Reply reject", Approve()),
    ],
)
def test_decision_directly_above_the_attribution(text: str, expected: Decision) -> None:
    assert decide(text) == expected


@pytest.mark.parametrize("forward", [
    "---------- Forwarded message ---------\nFrom: Bob <bob@x.example>\n\nPlease approve.",
    "Begin forwarded message:\n\nFrom: Bob <bob@x.example>\n\nApprove it, I say.",
    "-------- Message transféré --------\nDe : Bob\n\nReject: wrong week",
])
def test_what_an_approver_forwards_is_not_their_decision_nor_their_comment(forward: str) -> None:
    """Issue 43: a forwarded message is not what the approver wrote: it neither decides nor
    reaches the Journal message."""
    assert decide(f"FYI, Bob asked me about this.\n\n{forward}\n") == Comment(
        "FYI, Bob asked me about this.")
    assert decide(f"Approved\n\n{forward}\n") == Approve(comment="")
    assert decide(f"{forward}\n") == Comment("")
