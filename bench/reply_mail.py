"""Approval replies as mail clients write them, for the benchmarks: the decision and a comment
on top, the writer's signature, and the review request quoted below — as Gmail sends it
(multipart/alternative, quoted-printable plain text with `>` lines and HTML with a
`gmail_quote` blockquote) or as Outlook does (multipart/alternative, base64, the review below a
"From: / Sent: / To: / Subject:" block and a rule, without `>`).

The review quoted is the one replied to (its text and HTML parts, as the approver's client
received them) when the caller has it, else a review of the same shape.
"""

from __future__ import annotations

import email
import html
import os
import uuid
from email.message import EmailMessage, Message
from email.policy import SMTP, default
from email.utils import formatdate

GMAIL = "gmail"
OUTLOOK = "outlook"
ONE_LINE = "oneline"  # the benchmarks' reply before issue #40, for comparison

_WHEN = "Mon, 9 Mar 2026 at 09:00"
_FALLBACK_TEXT = (
    "Hello Mia,\n\nBob submitted the timesheet for 2 to 8 March 2026 and it waits for your "
    "approval.\n\nMon 2 Mar   8:00  Project 1: work item 1\nTue 3 Mar   8:00  Project 2\n"
    "Wed 4 Mar   8:00  Project 1: work item 3\nThu 5 Mar   8:00  Project 3\n"
    "Fri 6 Mar   8:00  Project 1\nTotal      40:00\n\n"
    "Approve: https://timebot.localhost/a/x\nReject:  https://timebot.localhost/r/x\n\n"
    "Or reply to this e-mail with \"approve\", or \"reject\" and a reason.\n"
)


def comment_of(decision: str, index: int) -> str:
    """The words on top of the reply: the decision on its first line (an approval's comment on
    the lines after it, mail.reading.decide), varied a little."""
    if decision == "reject":
        return ("Reject: Thursday's 8 hours are booked on the wrong project, please move "
                f"them to Project 2 and submit again (ref {index}).")
    return ("Approved, thanks!\n\nThe overtime on Thursday is fine, it was agreed for the "
            f"release (ref {index}).")


def _signature(name: str) -> list[str]:
    return [name, "Head of Delivery | Example GmbH", "+49 30 1234 5678",
            "Sent from my phone, please excuse typos"]


def _review_parts(review: bytes | None) -> tuple[str, str, str]:
    """(text, html, subject) of the review replied to."""
    if review is None:
        escaped = html.escape(_FALLBACK_TEXT).replace("\n", "<br>\n")
        return _FALLBACK_TEXT, f"<html><body><p>{escaped}</p></body></html>", \
            "Timesheet to review: Bob, 2 to 8 March 2026"
    message = email.message_from_bytes(review, policy=default)
    assert isinstance(message, EmailMessage)
    text_part = message.get_body(("plain",))
    html_part = message.get_body(("html",))
    text = str(text_part.get_content()) if text_part is not None else _FALLBACK_TEXT
    body = str(html_part.get_content()) if html_part is not None else \
        html.escape(text).replace("\n", "<br>\n")
    return text, body, str(message["Subject"] or "")


def _gmail(comment: str, name: str, review_from: str, text: str, body: str) -> tuple[str, str]:
    signature = _signature(name)
    plain = "\n".join([comment, "", "-- ", *signature, "",
                       f"On {_WHEN}, {review_from} wrote:",
                       *(f"> {line}" if line else ">" for line in text.splitlines())]) + "\n"
    sig_html = "<br>".join(html.escape(line) for line in signature)
    words = "<br>".join(html.escape(line) for line in comment.splitlines())
    rich = (f'<div dir="ltr">{words}<br clear="all"><div><br></div>'
            f'<span class="gmail_signature_prefix">-- </span><br><div dir="ltr" '
            f'class="gmail_signature">{sig_html}</div></div><br><div class="gmail_quote">'
            f'<div dir="ltr" class="gmail_attr">On {_WHEN}, {html.escape(review_from)} '
            'wrote:<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px '
            '0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">'
            f"{body}</blockquote></div>\n")
    return plain, rich


def _outlook(comment: str, name: str, review_from: str, to: str, subject: str, text: str,
             body: str) -> tuple[str, str]:
    header = [f"From: {review_from}", "Sent: Monday, March 9, 2026 9:00 AM", f"To: {to}",
              f"Subject: {subject}"]
    plain = "\r\n".join([comment, "", "Kind regards", *_signature(name), "",
                         "_" * 32, *header, "", *text.splitlines()]) + "\r\n"
    words, rows = ("".join(f"<p class=MsoNormal>{html.escape(line)}<o:p></o:p></p>"
                           for line in lines)
                   for lines in (comment.splitlines(), ["Kind regards", *_signature(name)]))
    head = "<br>".join(f"<b>{html.escape(line.split(':', 1)[0])}:</b>"
                       f"{html.escape(line.split(':', 1)[1])}" for line in header)
    rich = ('<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-'
            'com:office:office"><head><meta http-equiv="Content-Type" content="text/html; '
            'charset=utf-8"><style><!-- p.MsoNormal {margin:0cm; font-size:11.0pt; '
            'font-family:"Calibri",sans-serif;} --></style></head><body lang=EN-GB '
            'link="#0563C1"><div class=WordSection1>'
            f"{words}<p class=MsoNormal><o:p>&nbsp;</o:p></p>{rows}"
            '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">'
            f'<p class=MsoNormal><span style="font-size:11.0pt">{head}</span></p></div>'
            f"<div>{body}</div></div></body></html>\r\n")
    return plain, rich


def realistic_reply(*, sender_name: str, sender: str, to: str, in_reply_to: str | None,
                    review: bytes | None, decision: str = "approve", style: str = GMAIL,
                    index: int = 0) -> bytes:
    """The reply (unsigned, SMTP line endings) of `sender` to the review `review` (raw)."""
    if style == ONE_LINE:
        return _one_line(sender_name, sender, to, in_reply_to)
    text, body, subject = _review_parts(review)
    review_from = "timebot <timebot@timebot.localhost>"
    comment = comment_of(decision, index)
    message = EmailMessage()
    message["From"] = f"{sender_name} <{sender}>"
    message["To"] = to
    message["Subject"] = f"Re: {subject}" if style == GMAIL else f"RE: {subject}"
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@{sender.rpartition('@')[2]}>"
    if in_reply_to is not None:
        message["In-Reply-To"] = in_reply_to
        message["References"] = in_reply_to
    if style == GMAIL:
        plain, rich = _gmail(comment, sender_name, review_from, text, body)
        encoding = "quoted-printable"
    else:
        plain, rich = _outlook(comment, sender_name, review_from, f"{sender_name} <{sender}>",
                               subject, text, body)
        encoding = "base64"
        message["Thread-Topic"] = subject
        message["X-MS-Has-Attach"] = ""
    message.set_content(plain, cte=encoding)
    message.add_alternative(rich, subtype="html", cte=encoding)
    return message.as_bytes(policy=SMTP)


def _one_line(sender_name: str, sender: str, to: str, in_reply_to: str | None) -> bytes:
    message = EmailMessage()
    message["From"] = f"{sender_name} <{sender}>"
    message["To"] = to
    message["Subject"] = "Re: Timesheet of Bob"
    message["Date"] = formatdate()
    message["Message-ID"] = f"<{uuid.uuid4().hex}@{sender.rpartition('@')[2]}>"
    if in_reply_to is not None:
        message["In-Reply-To"] = in_reply_to
        message["References"] = in_reply_to
    message.set_content(
        "Approved, thanks!\n\nOn Mon, 9 Mar 2026 at 09:00, timebot wrote:\n> Reply approve.\n"
    )
    return message.as_bytes(policy=SMTP)


def styles(count: int) -> list[str]:
    """The clients of `count` replies: BENCH_REPLY_STYLE (gmail, outlook, oneline) for all, or
    by default (mixed) Gmail's and Outlook's in turn."""
    chosen = os.environ.get("BENCH_REPLY_STYLE", "mixed")
    if chosen == "mixed":
        return [(GMAIL, OUTLOOK)[index % 2] for index in range(count)]
    if chosen not in (GMAIL, OUTLOOK, ONE_LINE):
        raise ValueError(f"BENCH_REPLY_STYLE must be mixed, gmail, outlook or oneline, not "
                         f"{chosen!r}")
    return [chosen] * count


def reply_message_id(raw: bytes) -> str:
    """The Message-ID of a reply this module wrote (as its receipt's In-Reply-To names it)."""
    parsed: Message = email.message_from_bytes(raw.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n")
    return str(parsed["Message-ID"]).strip()
