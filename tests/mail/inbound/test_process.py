"""The pure parts of processing a reply: which approval states let a decision go ahead
(`judge`), the dispatch by recipient kind, and the receipt's form (headers, first line)."""

from __future__ import annotations

import email
from email.policy import default
from typing import Any

import pytest

from mail.inbound.addresses import RecipientKind
from mail.inbound.process import recipient_kind, recipients_of
from mail.outbound.receipts import (
    Outcome,
    TimesheetInfo,
    Verdict,
    compose_receipt,
    receipt_text,
    thread_subject,
)
from mail.queues.inbox import InboundMessage
from mail.reading.message import read_message
from mail.replies.approval_state import StateView, after_approval, judge
from timebot.secret_key.tokens import ApprovalToken

ME, OTHER, THIRD = "a" * 24, "b" * 24, "c" * 24
EVENT = "e" * 24
SHEET = TimesheetInfo("Bob", 1_772_409_600_000, 1_772_409_600_000 + 7 * 86_400_000)
TOKEN = ApprovalToken(EVENT, ME, 0, 1_900_000_000_000)


def state(status: str = "s", current: int | None = 0, submit: str = EVENT,
          approved: tuple[tuple[str, ...], ...] = ((), ()),
          pending: tuple[str, ...] = (ME, OTHER)) -> StateView:
    stages: list[dict[str, Any]] = [
        {"stage": index, "type": kind, "skipped": False,
         "approvedBy": [{"person": {"id": who}} for who in approved[index]],
         "pending": []}
        for index, kind in enumerate(("ppm", "admin"))
    ]
    return StateView.parse({
        "status": status, "currentStage": current, "submitId": submit,
        "pendingApprovers": [{"id": who, "name": who[:1].upper()} for who in pending],
        "stageDetails": stages,
    })


def code(outcome: Outcome | None) -> str | None:
    return None if outcome is None else outcome.code


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_a_pending_approver_of_the_current_stage_goes_ahead(action: str) -> None:
    assert judge(action, TOKEN, SHEET, state(), rejected_stage=None, ours=False) is None


def test_refusals() -> None:
    cases = [
        ("approve", state(submit="f" * 24), False, "superseded"),
        ("approve", state(status="d", current=None), False, "superseded"),
        ("approve", state(current=1, approved=((OTHER,), ()), pending=(THIRD,)), False,
         "stage-moved-on"),
        ("reject", state(current=1, approved=((OTHER,), ()), pending=(THIRD,)), False,
         "stage-moved-on"),
        ("approve", state(pending=(OTHER,)), False, "not-your-turn"),
        ("reject", state(pending=(OTHER,)), False, "not-your-turn"),
        ("approve", state(status="a", current=None, approved=((ME,), (THIRD,)), pending=()),
         False, "already-decided"),
        ("approve", state(status="r", current=None, pending=()), False, "already-decided"),
        ("reject", state(status="r", current=None, pending=()), False, "already-decided"),
        ("approve", state(approved=((ME,), ()), pending=(OTHER,)), False, "already-decided"),
    ]
    for action, current, ours, expected in cases:
        assert code(judge(action, TOKEN, SHEET, current, rejected_stage=None, ours=ours)) \
            == expected, (action, current)


def test_a_stage_later_than_the_current_one_is_not_your_turn() -> None:
    later = ApprovalToken(EVENT, ME, 1, 1_900_000_000_000)
    outcome = judge("approve", later, SHEET, state(), rejected_stage=None, ours=False)
    assert code(outcome) == "not-your-turn"


def test_the_same_reply_again_answers_as_the_first_time() -> None:
    """After a crash between acting and answering: Approved / Rejected, not Nothing changed."""
    moved = state(current=1, approved=((ME,), ()), pending=(THIRD,))
    outcome = judge("approve", TOKEN, SHEET, moved, rejected_stage=None, ours=True)
    assert outcome is not None and outcome.verdict is Verdict.APPROVED
    assert "stage 2 of 2 (Admins)" in outcome.why
    done = state(status="a", current=None, approved=((ME,), ()), pending=())
    outcome = judge("approve", TOKEN, SHEET, done, rejected_stage=None, ours=True)
    assert outcome is not None and outcome.verdict is Verdict.APPROVED
    rejected = state(status="r", current=None, pending=())
    outcome = judge("reject", TOKEN, SHEET, rejected, rejected_stage=0, ours=True, reason="x")
    assert outcome is not None and outcome.verdict is Verdict.REJECTED and outcome.reason == "x"


def test_a_last_stage_approver_may_still_reject_an_approved_timesheet() -> None:
    last = ApprovalToken(EVENT, ME, 1, 1_900_000_000_000)
    done = state(status="a", current=None, approved=((OTHER,), (ME,)), pending=())
    assert judge("reject", last, SHEET, done, rejected_stage=None, ours=False) is None
    first = judge("reject", TOKEN, SHEET, done, rejected_stage=None, ours=False)
    assert code(first) == "already-decided"


def inbound(source: str, rcpt: list[str], raw: bytes) -> InboundMessage:
    return InboundMessage("1", source, "ann@example.com", rcpt, raw, 1)


def test_dispatch_by_recipient_kind() -> None:
    domain = "timebot.localhost"
    raw = (b"From: ann@example.com\r\nTo: time@timebot.localhost\r\n"
           b"Cc: approvals+abc@timebot.localhost\r\nSubject: x\r\n\r\n2h\r\n")
    read = read_message(raw)
    # SMTP/LMTP: the envelope decides
    kind, address = recipient_kind(recipients_of(inbound("smtp", [f"time@{domain}"], raw), read,
                                                 domain))
    assert (kind, address) == (RecipientKind.TIME_ENTRY, f"time@{domain}")
    # IMAP: the headers; a reply address wins over time@
    kind, _ = recipient_kind(recipients_of(inbound("imap", ["box"], raw), read, domain))
    assert kind is RecipientKind.APPROVAL_REPLY
    # nothing of ours: an approval reply whose token may be in the threading headers
    assert recipient_kind([]) == (RecipientKind.APPROVAL_REPLY, None)


def test_thread_subject() -> None:
    assert thread_subject("Re: RE: AW: Timesheet of Bob") == "Timesheet of Bob"
    assert thread_subject("  Timesheet   of Bob ") == "Timesheet of Bob"
    assert thread_subject("Reply needed") == "Reply needed"


REPLY = (
    b"From: Mia <mia@example.com>\r\nTo: approvals+tok@timebot.localhost\r\n"
    b"Subject: Re: Timesheet of Bob\r\nMessage-ID: <r1@example.com>\r\n"
    b"In-Reply-To: <tok.n@timebot.localhost>\r\n"
    b"References: <first@timebot.localhost> <tok.n@timebot.localhost>\r\n\r\nreject\r\n"
)


@pytest.mark.parametrize("verdict", list(Verdict))
def test_the_receipt_per_the_contract(verdict: Verdict) -> None:
    outcome = Outcome(verdict, "x", "Why it is so.", "What to do.", reason="Tue <b>missing</b>")
    message = compose_receipt(
        outcome, read_message(REPLY), to="mia@example.com", mail_from="timebot@timebot.localhost",
        mail_domain="timebot.localhost",
    )
    parsed = email.message_from_bytes(message.as_bytes(), policy=default)
    assert parsed["In-Reply-To"] == "<r1@example.com>"
    assert parsed["References"].split() == [
        "<first@timebot.localhost>", "<tok.n@timebot.localhost>", "<r1@example.com>"
    ]
    assert parsed["Subject"] == "Re: Timesheet of Bob"
    assert parsed["Auto-Submitted"] == "auto-replied"
    text = parsed.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    html = parsed.get_body(("html",)).get_content()  # type: ignore[union-attr]
    assert text.splitlines()[0] == verdict.value
    assert f"<strong>{verdict.value}</strong>" in html
    assert "Tue &lt;b&gt;missing&lt;/b&gt;" in html and "Tue <b>missing</b>" in text


def test_error_receipts_are_the_refusals() -> None:
    assert Outcome(Verdict.NOTHING_CHANGED, "reason-missing", "").is_error
    assert not Outcome(Verdict.NOTHING_CHANGED, "comment-added", "").is_error
    assert not Outcome(Verdict.APPROVED, "approved", "").is_error
    assert receipt_text(Outcome(Verdict.APPROVED, "approved", "ok")).startswith("Approved\n")


def test_the_approved_receipt_names_what_comes_next() -> None:
    before = state()
    before = StateView(before.status, before.current_stage, before.submit_id, before.pending,
                       (before.stages[0], type(before.stages[1])("admin", False, frozenset(),
                                                                 ((THIRD, "Ada"),))))
    fully = after_approval(SHEET, before, 0, ME, "a", 1)
    assert "It is now approved." in fully.why
    moved = after_approval(SHEET, before, 0, ME, "s", 1)
    assert "It now waits for stage 2 of 2 (Admins) (Ada)." in moved.why
    same = after_approval(SHEET, before, 0, ME, "s", 0)
    assert "It now waits for B." in same.why
