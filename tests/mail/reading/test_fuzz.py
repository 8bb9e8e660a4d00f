# ruff: noqa: RUF001  (test data in many scripts: look-alike letters are intended)
"""Hypothesis: the reader, the extraction, decide and the guards never crash (small budget)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mail.inbound.loop_guard import why_not_act
from mail.inbound.sender_auth import check_authentication_results, parse_authentication_results
from mail.reading.decide import Approve, Comment, Reject, RejectWithoutReason, decide
from mail.reading.html_text import html_to_text
from mail.reading.message import ReadMessage, read_message
from mail.reading.quotes import extract_reply

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

HEADER_NAMES = st.sampled_from(
    ["From", "To", "Subject", "Content-Type", "Content-Transfer-Encoding", "Return-Path",
     "Auto-Submitted", "References", "In-Reply-To", "Message-ID", "Authentication-Results",
     "Content-Disposition", "X-Autoreply", "Precedence"]
)  # fmt: skip
HEADER_VALUES = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        ["multipart/mixed; boundary=b", "multipart/alternative; boundary=\"b\"",
         "text/plain; charset=koi8-r", "text/html; charset=nonsense", "base64",
         "quoted-printable", "=?utf-8?b?////?=", "=?x?q?=ZZ?=", "<>", "a@b, c@d",
         "multipart/report; report-type=delivery-status; boundary=b"]
    ),
)  # fmt: skip


@st.composite
def mime_like(draw: st.DrawFn) -> bytes:
    headers = draw(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=8))
    head = "".join(f"{name}: {value}\r\n" for name, value in headers)
    parts = draw(
        st.lists(
            st.one_of(
                st.binary(max_size=80),
                st.sampled_from([b"--b\r\n", b"--b--\r\n", b"Content-Type: text/html\r\n\r\n",
                                 b"<blockquote>", b"> approve\r\n", b"=C3=\r\n", b"\r\n"]),
            ),
            max_size=10,
        )
    )  # fmt: skip
    return head.encode("utf-8", "surrogateescape") + b"\r\n" + b"".join(parts)


def _check(message: ReadMessage) -> None:
    assert isinstance(message.text, str)
    assert isinstance(message.headers, tuple)
    why_not_act(
        message, own_addresses=["timebot@timebot.localhost"], mail_domain="timebot.localhost"
    )
    decision = decide(message.text)
    assert isinstance(decision, Approve | Reject | RejectWithoutReason | Comment)


@FUZZ
@given(st.binary(max_size=600))
def test_reader_on_arbitrary_bytes(data: bytes) -> None:
    _check(read_message(data))


@FUZZ
@given(mime_like())
def test_reader_on_mime_like_bytes(data: bytes) -> None:
    _check(read_message(data))


@FUZZ
@given(st.text(max_size=400))
def test_decide_and_extract_on_arbitrary_text(text: str) -> None:
    decision = decide(text)
    assert isinstance(decision, Approve | Reject | RejectWithoutReason | Comment)
    if isinstance(decision, Reject):
        assert decision.reason.strip()
    assert isinstance(extract_reply(text), str)


WORDS = st.sampled_from(
    ["approve", "reject", "ok", "> ", "On Mon Bob wrote:", "-- ", "\n", " ", ":", "From:",
     "Sent:", "Sent from my iPhone", "写道：", "schrieb", "Ja", "nein", "<br>", "é", "\u200b"]
)  # fmt: skip


@FUZZ
@given(st.lists(WORDS, max_size=30))
def test_decide_on_reply_shaped_text(words: list[str]) -> None:
    text = "".join(words)
    decide(text)
    html_to_text(text)


@FUZZ
@given(st.text(max_size=200))
def test_authentication_results_parser(value: str) -> None:
    parse_authentication_results(value)
    check_authentication_results(
        [("Authentication-Results", value)], "example.com", ["mx.example"]
    )
