"""The MIME writer of outgoing mail: what it writes parses back (email.policy.default) to what
it was given, in valid 7-bit MIME with no line over 998 octets; and `OutgoingMessage` is an
EmailMessage to the callers that want one."""

from __future__ import annotations

import email
import re
import unicodedata
from email.message import EmailMessage
from email.policy import default
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mail.queues.mime_writer import OutgoingMessage, fold_header, write_message
from mail.queues.outbox import new_message

DOMAIN = "timebot.localhost"


def parse(raw: bytes) -> EmailMessage:
    message = email.message_from_bytes(raw, policy=default)
    assert isinstance(message, EmailMessage)
    return message


def body(text: str) -> str:
    """What a part's content reads back as: line breaks as `\\n`, ending with one."""
    text = re.sub(r"\r\n?", "\n", text)
    return text if text.endswith("\n") else text + "\n"


def check_lines(raw: bytes) -> None:
    assert raw.isascii()
    assert b"\r" not in raw  # `\n` line endings, as EmailMessage.as_bytes() gives
    for line in raw.split(b"\n"):
        assert len(line) <= 998, line[:80]


def check_structure(message: EmailMessage, html: bool) -> None:
    assert not message.defects
    if html:
        assert message.get_content_type() == "multipart/alternative"
        parts = list(message.iter_parts())
        assert [part.get_content_type() for part in parts] == ["text/plain", "text/html"]
        for part in parts:
            assert not part.defects
            assert part.get_content_charset() == "utf-8"
            assert part["Content-Transfer-Encoding"] in ("7bit", "quoted-printable", "base64")
    else:
        assert message.get_content_type() == "text/plain"
        assert message.get_content_charset() == "utf-8"
    assert message["MIME-Version"] == "1.0"


def content(message: EmailMessage, subtype: str) -> str:
    part = message.get_body((subtype,))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


# Display names as people have them: no control characters, single spaces between words.
def _name(text: str) -> str:
    return " ".join(
        "".join(c for c in text if unicodedata.category(c) not in ("Cc", "Cs")).split()
    )


names = st.text(min_size=1, max_size=120).map(_name).filter(bool)
BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines() breaks lines
no_breaks = st.text(st.characters(exclude_categories=["Cs"], exclude_characters=BREAKS),
                    max_size=400)
long_words = st.lists(st.text("xyz<>@.", min_size=1, max_size=300), min_size=1, max_size=6).map(
    " ".join
)


def quoted(name: str, address: str) -> str:
    """`"name" <address>` with the name as it is (non-ASCII too), escaped."""
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}" <{address}>'


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subject=no_breaks | long_words, text=st.text(max_size=3000),
       html=st.none() | st.text(max_size=3000), name=names, other=names)
def test_what_is_written_reads_back(
    subject: str, text: str, html: str | None, name: str, other: str
) -> None:
    raw = new_message(
        mail_from=quoted(name, f"timebot@{DOMAIN}"), to=quoted(other, "ann@example.com"),
        subject=subject, text=text, html=html, mail_domain=DOMAIN,
        headers={"Reply-To": quoted(name, f"approvals+x@{DOMAIN}")},
    ).as_bytes()
    check_lines(raw)
    message = parse(raw)
    check_structure(message, html is not None)
    assert message["Subject"] == subject
    sender = message["From"].addresses
    assert [(a.display_name, a.addr_spec) for a in sender] == [(name, f"timebot@{DOMAIN}")]
    recipient = message["To"].addresses
    assert [(a.display_name, a.addr_spec) for a in recipient] == [(other, "ann@example.com")]
    assert message["Reply-To"].addresses[0].display_name == name
    assert content(message, "plain") == body(text)
    if html is not None:
        assert content(message, "html") == body(html)


@settings(max_examples=100, deadline=None)
@given(value=no_breaks, name=st.sampled_from(["Subject", "In-Reply-To", "X-Anything"]))
def test_a_header_reads_back(value: str, name: str) -> None:
    folded = fold_header(name, value)
    raw = (folded + "\n").encode("ascii")
    check_lines(raw)
    for line in folded.split("\n")[1:-1]:
        assert line[:1] in (" ", "\t") and line.strip()  # folded, no blank lines
    assert str(parse(raw)[name]) == value


@settings(max_examples=100, deadline=None)
@given(name=names)
def test_an_address_given_encoded_stays_encoded(name: str) -> None:
    """Address headers are header syntax, as EmailMessage took them: a display name given as
    encoded words (email.utils.formataddr) reads as the name."""
    from email.utils import formataddr

    raw = write_message([("From", formataddr((name, "a@example.com")))], "x")
    check_lines(raw)
    assert parse(raw)["From"].addresses[0].display_name == name


def test_the_layout_of_a_receipt() -> None:
    raw = write_message(
        [("From", "timebot@timebot.localhost"), ("To", "mia@example.com"),
         ("Subject", "Re: Timesheet of Bob"), ("Message-ID", "<m1@timebot.localhost>")],
        "Approved\n\nYou approved it.\n", "<p>Approved</p>\n",
    )
    head, _, rest = raw.partition(b"\n\n")
    assert head.split(b"\n")[:4] == [
        b"From: timebot@timebot.localhost", b"To: mia@example.com",
        b"Subject: Re: Timesheet of Bob", b"Message-ID: <m1@timebot.localhost>",
    ]
    boundary = parse(raw).get_boundary()
    assert boundary is not None and f'boundary="{boundary}"'.encode() in head
    assert rest.startswith(f"--{boundary}\n".encode())
    assert rest.endswith(f"\n--{boundary}--\n".encode())
    assert b"Content-Transfer-Encoding: 7bit\n\nApproved\n\nYou approved it.\n\n--" in rest


def test_long_message_ids_are_folded_between_them_never_encoded() -> None:
    ids = [f"<{'a' * 90}@example.com>", "<b@example.com>", f"<{'c' * 60}@example.com>"]
    folded = fold_header("References", " ".join(ids))
    assert "=?" not in folded
    lines = folded.rstrip("\n").split("\n")
    assert lines == [f"References: {ids[0]}", f" {ids[1]}", f" {ids[2]}"]
    assert str(parse(f"{folded}\n".encode())["References"]).split() == ids


def test_non_ascii_is_encoded_and_ascii_is_not() -> None:
    assert fold_header("Subject", "Re: Timesheet of Bob") == "Subject: Re: Timesheet of Bob\n"
    assert fold_header("Subject", "Re: Zoë").startswith("Subject: =?utf-8?")
    assert fold_header("From", "Zoë <z@example.com>").endswith(" <z@example.com>\n")
    assert fold_header("From", '"Doe, John" <j@example.com>') == (
        'From: "Doe, John" <j@example.com>\n'
    )
    # what a reader would decode is encoded, so that it reads as given
    assert str(parse(fold_header("Subject", "=?utf-8?q?x?=").encode() + b"\n")["Subject"]) \
        == "=?utf-8?q?x?="


def test_header_values_may_not_break_lines() -> None:
    for value in ("a\nBcc: x@example.com", "a\rb", "a\x85b", "a\u2028", "\x1e"):
        with pytest.raises(ValueError, match="linefeed or carriage return"):
            fold_header("Subject", value)
    with pytest.raises(ValueError, match="header name"):
        fold_header("Bad Name", "x")


@pytest.mark.parametrize(("text", "encoding"), [
    ("short ASCII lines\n", "7bit"),
    ("a line longer than seventy-eight characters " * 3, "quoted-printable"),
    ("Grüße aus Köln, wo die Zeiten der Woche erfasst sind.\n", "quoted-printable"),
    ("日本語のテキスト" * 20, "base64"),
    ("a\x00b\n", "quoted-printable"),
])
def test_the_transfer_encoding(text: str, encoding: str) -> None:
    message = parse(write_message([("Subject", "x")], text))
    assert message["Content-Transfer-Encoding"] == encoding
    assert str(message.get_content()) == body(text)  # type: ignore[attr-defined]


def test_line_breaks_of_a_body_become_newlines() -> None:
    message = parse(write_message([("Subject", "x")], "a\r\nb\rc\nd"))
    assert str(message.get_content()) == "a\nb\nc\nd\n"  # type: ignore[attr-defined]


def test_a_boundary_found_in_a_body_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    numbers = iter([1, 1, 2])
    monkeypatch.setattr(random, "randrange", lambda _: next(numbers))
    first = f"--==============={1:019d}=="
    message = parse(write_message([("Subject", "x")], f"{first}\n", "<p>x</p>"))
    assert message.get_boundary() == f"==============={2:019d}=="
    assert content(message, "plain") == f"{first}\n"


# --- OutgoingMessage --------------------------------------------------------------------------


def receipt() -> Any:
    return new_message(
        mail_from=f"timebot@{DOMAIN}", to="ann@example.com", subject="Re: Timesheet",
        text="Approved\n", html="<p>Approved</p>\n", mail_domain=DOMAIN,
        message_id=f"<m1@{DOMAIN}>", headers={"Auto-Submitted": "auto-replied"},
    )


def test_an_outgoing_message_answers_without_parsing() -> None:
    message = receipt()
    assert isinstance(message, OutgoingMessage) and isinstance(message, EmailMessage)
    assert message["Message-ID"] == f"<m1@{DOMAIN}>"
    assert message.get("subject") == "Re: Timesheet"
    assert message.get_all("To") == ["ann@example.com"]
    assert message.get_all("Cc", []) == [] and message["Cc"] is None
    assert "Auto-Submitted" in message and "Bcc" not in message
    assert message["Content-Type"].startswith("multipart/alternative;")
    assert bytes(message) == message.as_bytes()
    assert not message.parsed


def test_an_outgoing_message_is_an_email_message() -> None:
    message = receipt()
    assert content(message, "plain") == "Approved\n"  # parses it
    assert message.parsed
    assert message["Subject"] == "Re: Timesheet" and message["To"].addresses
    del message["Auto-Submitted"]
    message["X-Extra"] = "1"
    reread = parse(message.as_bytes())
    assert reread["X-Extra"] == "1" and reread["Auto-Submitted"] is None
    assert content(reread, "html") == "<p>Approved</p>\n"


def test_setting_a_header_parses_first() -> None:
    message = receipt()
    message["X-Extra"] = "1"
    assert message.parsed
    reread = parse(message.as_bytes())
    assert reread["X-Extra"] == "1" and reread["Message-ID"] == f"<m1@{DOMAIN}>"


def test_new_message_reads_as_before() -> None:
    """The headers EmailMessage used to write, with the same meaning."""
    message = parse(new_message(
        mail_from="Timebot <timebot@timebot.localhost>", to="ann@example.com", subject="Hi",
        text="Body", mail_domain=DOMAIN,
        headers={"Auto-Submitted": "auto-generated", "Reply-To": f"approvals+t@{DOMAIN}"},
    ).as_bytes())
    check_structure(message, html=False)
    assert message["From"] == "Timebot <timebot@timebot.localhost>"
    assert message["Date"].datetime is not None
    assert message["Message-ID"].endswith(f"@{DOMAIN}>")
    assert message["Reply-To"] == f"approvals+t@{DOMAIN}"
    assert message["Auto-Submitted"] == "auto-generated"
    assert str(message.get_content()) == "Body\n"  # type: ignore[attr-defined]
