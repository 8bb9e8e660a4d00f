"""GET /outbox: the local Maildir outbox (only mounted when no relay is configured), so that
`make run` shows the whole loop: the list of messages timebot sent, each one readable, and
(in the demo) an answer form.

The mail there holds sign-in codes and one-click links: every endpoint answers only a client
on this machine (`plumbing.peers.is_local_request`: a loopback peer, no forwarding header, a
loopback name in Host) and 404 to anyone else, as if it did not exist.

The answer form, and `POST /outbox/<key>/reply`, exist only in the demo (`timebot serve
--demo`, TIMEBOT_DEMO): an answer is a reply "from" the message's recipient, written by
whoever sits at the page, that the mail path counts as authenticated (mail.inbound.process). It is a
real MIME reply (From the message's recipient, To its Reply-To, In-Reply-To / References,
`Re:` subject, the original quoted) put into the durable inbox exactly as the SMTP listener
does after DATA (`Inbox.accept`, then the inbox worker is woken), so it takes the real inbound
path. Its inbox source is "outbox": written on this server at the page, not received from a
mail server.
"""

from __future__ import annotations

import asyncio
import mailbox
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import formatdate, getaddresses, make_msgid, parsedate_to_datetime
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from mail.outbound.outbox_html import SANDBOX, html_of
from mail.outbound.reviews import MailContext
from plumbing.peers import is_local_request

log = structlog.get_logger("mail.outbox_page")

SHOWN_HEADERS = ("From", "To", "Reply-To", "Date", "Message-ID", "In-Reply-To")
ENVELOPE_HEADERS = ("X-Timebot-Envelope-From", "X-Timebot-Envelope-To")


def parse(raw: bytes) -> EmailMessage:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return message


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    content = part.get_content()  # type: ignore[attr-defined]
    return str(content)


def first_address(value: str | None) -> str:
    pairs = getaddresses([value or ""])
    return pairs[0][1] if pairs and pairs[0][1] else ""


def compose_answer(original: EmailMessage, body: str, *, sender: str, mail_domain: str) -> bytes:
    """Pure: a reply to `original` written by `sender`, quoting it below the answer."""
    reply_to = first_address(str(original.get("Reply-To") or original.get("From") or ""))
    subject = str(original.get("Subject") or "")
    # Long msg-ids must not be folded into RFC 2047 encoded words: lines up to 998 octets.
    message = EmailMessage(policy=policy.SMTP.clone(max_line_length=998))
    message["From"] = sender
    message["To"] = reply_to
    message["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    message["Date"] = formatdate(localtime=False)
    domain = sender.rpartition("@")[2] or "outbox.invalid"
    message["Message-ID"] = make_msgid(domain=domain)
    parent = str(original.get("Message-ID") or "").strip()
    if parent:
        message["In-Reply-To"] = parent
        references = str(original.get("References") or "").split()
        message["References"] = " ".join([*references, parent])
    message["Authentication-Results"] = (
        f"timebot-outbox; dmarc=pass (answered at GET /outbox) header.from={domain}"
    )
    quoted = "\n".join(f"> {line}" if line else ">" for line in text_of(original).splitlines())
    when = str(original.get("Date") or "")
    message.set_content(f"{body.strip()}\n\nOn {when}, {original.get('From')} wrote:\n{quoted}\n")
    return message.as_bytes()


class OutboxPage:
    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx
        self.runtime = ctx.runtime
        self.path = ctx.runtime.settings.outbox_dir
        self.answers = ctx.runtime.settings.demo  # the answer form: the demo's alone

    def _maildir(self) -> mailbox.Maildir:
        for folder in ("tmp", "new", "cur"):
            (self.path / folder).mkdir(parents=True, exist_ok=True)
        return mailbox.Maildir(str(self.path), create=False)

    def _read(self, key: str) -> EmailMessage | None:
        maildir = self._maildir()
        try:
            file = maildir.get_file(key)
        except (KeyError, ValueError):
            return None
        with file:
            return parse(file.read())

    def _listing(self) -> list[dict[str, Any]]:
        maildir = self._maildir()
        items: list[dict[str, Any]] = []
        for key in maildir.keys():
            try:
                with maildir.get_file(key) as file:
                    headers = BytesParser(policy=policy.default).parsebytes(
                        file.read(), headersonly=True
                    )
            except (KeyError, OSError):
                continue
            try:
                moment = parsedate_to_datetime(str(headers.get("Date")))
            except (TypeError, ValueError):
                moment = datetime.fromtimestamp(0, UTC)
            items.append({
                "key": key,
                "to": str(headers.get("To") or ""),
                "subject": str(headers.get("Subject") or ""),
                "date": f"{moment:%Y-%m-%d %H:%M}",
                "sort": moment.timestamp(),
            })
        items.sort(key=lambda item: (-item["sort"], item["key"]))
        return items

    async def index(self, request: Request) -> Response:
        if not is_local_request(request.scope):
            return _not_found()
        items = await asyncio.to_thread(self._listing)
        return HTMLResponse(
            self.ctx.templates.page("outbox", messages=items, path=str(self.path)),
            headers={"Cache-Control": "no-store"},
        )

    async def show(self, request: Request) -> Response:
        if not is_local_request(request.scope):
            return _not_found()
        key = request.path_params["key"]
        message = await asyncio.to_thread(self._read, key)
        if message is None:
            return HTMLResponse("<h1>No such message</h1>", status_code=404)
        reply_to = first_address(str(message.get("Reply-To") or ""))
        notice = "Your answer was put into the inbox." if request.query_params.get("sent") else ""
        return HTMLResponse(
            self.ctx.templates.page(
                "outbox_message",
                key=key,
                subject=str(message.get("Subject") or "(no subject)"),
                headers=[(name, str(message.get(name))) for name in SHOWN_HEADERS
                         if message.get(name)],
                text=text_of(message),
                html=html_of(message),
                sandbox=SANDBOX,
                reply_to=reply_to,
                answers=self.answers,
                answer_from=first_address(str(message.get("To") or "")),
                notice=notice,
            ),
            headers={"Cache-Control": "no-store"},
        )

    async def reply(self, request: Request) -> Response:
        if not (self.answers and is_local_request(request.scope)):
            return _not_found()
        key = request.path_params["key"]
        message = await asyncio.to_thread(self._read, key)
        if message is None:
            return HTMLResponse("<h1>No such message</h1>", status_code=404)
        body = str((await request.form()).get("body") or "")
        sender = first_address(str(message.get("To") or ""))
        recipient = first_address(str(message.get("Reply-To") or message.get("From") or ""))
        if not body.strip() or not sender or not recipient:
            return HTMLResponse("<h1>Nothing to send</h1><p>Write an answer.</p>",
                                status_code=400)
        raw = compose_answer(message, body, sender=sender,
                             mail_domain=self.runtime.settings.mail_domain)
        # Its Authentication-Results header is the page's note, never a mail server's word.
        new = await self.ctx.mail.inbox.accept(
            raw, sender, [recipient], "outbox", headers_trusted=False
        )
        log.info("outbox_answer_accepted", new=new, to=recipient)
        self.ctx.mail.wake_inbox()
        return RedirectResponse(f"/outbox/{key}?sent=1", status_code=303)

    def routes(self) -> list[BaseRoute]:
        routes: list[BaseRoute] = [
            Route("/outbox", self.index, methods=["GET"]),
            Route("/outbox/{key}", self.show, methods=["GET"]),
        ]
        if self.answers:
            routes.append(Route("/outbox/{key}/reply", self.reply, methods=["POST"]))
        return routes


def _not_found() -> Response:
    """What the router answers for a path it does not know."""
    return PlainTextResponse("Not Found", status_code=404)
