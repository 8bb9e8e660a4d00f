"""The benchmarks' approval replies (bench.reply_mail) are what they claim to be: as Gmail and
Outlook write them (multipart/alternative, quoted-printable or base64, the review quoted
below), read by timebot's own reading as the decision on top with its comment, DKIM-signed so
that the signature verifies, and the one-line reply kept for comparison."""

from __future__ import annotations

import email
from email.policy import default

import dkim
import pytest

from bench.mail_load import SENDER_DOMAIN, new_key, signed_reply
from bench.reply_mail import GMAIL, ONE_LINE, OUTLOOK, realistic_reply, reply_message_id, styles
from mail.reading.decide import Approve, Reject, decide
from mail.reading.message import read_message

REVIEW = (
    b"From: timebot <timebot@timebot.localhost>\r\nTo: mia@example.com\r\n"
    b"Subject: Timesheet to review: Bob, 2 to 8 March 2026\r\n"
    b"Message-ID: <tok.review@timebot.localhost>\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: multipart/alternative; boundary="b"\r\n\r\n--b\r\n'
    b"Content-Type: text/plain; charset=utf-8\r\n\r\nHello Mia,\r\n\r\nBob submitted the "
    b"timesheet for 2 to 8 March 2026.\r\nMon 2 Mar  8:00  Project 1\r\n"
    b'Or reply to this e-mail with "approve", or "reject" and a reason.\r\n--b\r\n'
    b"Content-Type: text/html; charset=utf-8\r\n\r\n<p>Hello Mia,</p><p>Bob submitted the "
    b"timesheet.</p><table><tr><td>Mon 2 Mar</td><td>8:00</td></tr></table>\r\n--b--\r\n"
)


def _reply(style: str, decision: str) -> bytes:
    return realistic_reply(sender_name="Mia", sender="mia@example.com",
                           to="approvals+tok@timebot.localhost",
                           in_reply_to="<tok.review@timebot.localhost>", review=REVIEW,
                           decision=decision, style=style, index=7)


@pytest.mark.parametrize("style,encoding", [(GMAIL, "quoted-printable"),
                                            (OUTLOOK, "base64")])
def test_a_realistic_reply_has_both_parts_and_quotes_the_review(style: str,
                                                                encoding: str) -> None:
    message = email.message_from_bytes(_reply(style, "approve"), policy=default)
    assert message.get_content_type() == "multipart/alternative"
    parts = list(message.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert {str(p["Content-Transfer-Encoding"]) for p in parts} == {encoding}
    plain, rich = (str(p.get_content()) for p in parts)
    assert "Mon 2 Mar  8:00  Project 1" in plain  # the review's text, quoted
    assert "<td>Mon 2 Mar</td>" in rich  # the review's HTML, quoted
    assert "Head of Delivery" in plain and "Head of Delivery" in rich  # the signature


@pytest.mark.parametrize("style", [GMAIL, OUTLOOK])
def test_timebot_reads_the_decision_and_the_comment_on_top(style: str) -> None:
    approved = decide(read_message(_reply(style, "approve")).text)
    assert isinstance(approved, Approve)
    assert approved.comment.startswith("The overtime on Thursday is fine")
    rejected = decide(read_message(_reply(style, "reject")).text)
    assert isinstance(rejected, Reject)
    assert rejected.reason.startswith("Thursday's 8 hours are booked on the wrong project")
    assert "Bob submitted" not in rejected.reason  # the quoted review is no part of it


def test_the_one_line_reply_is_kept_for_comparison() -> None:
    assert decide(read_message(_reply(ONE_LINE, "approve")).text) == Approve(comment="")


def test_a_signed_reply_verifies_and_names_its_message_id() -> None:
    key = new_key()
    txt = {f"s1._domainkey.{SENDER_DOMAIN}.".encode(): key.txt_line.split(" ", 1)[1].encode()}
    rcpt, raw = signed_reply(key, f"mia@{SENDER_DOMAIN}", "tok", "<tok.review@x>",
                             review=REVIEW, style=OUTLOOK)
    assert rcpt.startswith("approvals+tok@")
    assert dkim.verify(raw, dnsfunc=lambda name, timeout=5: txt.get(name, b""))
    parsed = email.message_from_bytes(raw, policy=default)
    assert reply_message_id(raw) == str(parsed["Message-ID"])


def test_styles_take_turns_unless_one_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert styles(3) == [GMAIL, OUTLOOK, GMAIL]
    monkeypatch.setenv("BENCH_REPLY_STYLE", "outlook")
    assert styles(2) == [OUTLOOK, OUTLOOK]
    monkeypatch.setenv("BENCH_REPLY_STYLE", "pigeon")
    with pytest.raises(ValueError, match="pigeon"):
        styles(1)
